// Package heading names the first line of each of heirloom's context blocks (DESIGN §3) and
// their priority. Package inject builds the blocks under these headings; code that must
// recognise the blocks in a reply without linking inject (the hook shim, which must stay free of
// kv and Pebble) reads them here. It imports nothing.
package heading

// The headings, each the first line of its block, exactly as the harness sees it.
const (
	// Objective starts the objective reinforcement a session gets after a compaction.
	Objective = "[Objective Reinforcement]"
	// Inherited starts the block a sub-agent inherits from its parent at start.
	Inherited = "## Inherited from Parent Session"
	// Recovered starts the checkpoint recovered at session start or resume.
	Recovered = "## Recovered Session Checkpoint"

	// RecentTranscript heads the inherited block's section of the parent's recent transcript:
	// the section that takes whatever room the others leave, and so the first to give it up
	// (to a proxied hook's context, too).
	RecentTranscript = "### Recent transcript"
)

// Priority returns the headings highest priority first: when a reply is over its harness's cap,
// the block under the last heading is cut first. Each call returns a new slice, so callers may
// keep or change it.
func Priority() []string {
	return []string{Objective, Inherited, Recovered}
}
