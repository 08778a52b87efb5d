package inject

import (
	"slices"
	"strings"

	"github.com/heirloom-dev/heirloom/inject/heading"
	"github.com/heirloom-dev/heirloom/kv"
)

// ObjectiveHeading is the first line of the block ObjectiveBlock builds.
const ObjectiveHeading = heading.Objective

// Reinforcement is what a session is reminded of after a compaction: records read from the
// store. The zero value renders as "" (see ObjectiveBlock).
type Reinforcement struct {
	Objective  string         // the session's objective; "" falls back to the checkpoint's
	Checkpoint *kv.Checkpoint // the latest pre-compaction (else the latest) checkpoint; nil when none
	Finished   []kv.Run       // sub-agents the session spawned that already finished, any order
}

// Section headings of the objective block, each preceded by a blank line.
const (
	checkpointHeading = "\n\nLatest checkpoint:\n"
	compactedHeading  = "\n\nCheckpoint taken before the compaction:\n"
	finishedHeading   = "\n\nSub-agents that already finished (use their results; do not redo or re-spawn them):\n"
)

// ObjectiveBlock renders the "[Objective Reinforcement]" block a session gets after a
// compaction, at most maxChars UTF-16 units (see Len); zero or negative means DefaultMaxChars.
// It returns "" when there is no objective (r.Objective, else the checkpoint digest's) and the
// checkpoint is nil or has an empty digest (finished runs alone make no block), and when
// maxChars cannot hold the heading line and the objective line, or 32 units of it. The format,
// sections omitted when empty, no trailing newline:
//
//	[Objective Reinforcement]
//	Objective: <objective>
//
//	Checkpoint taken before the compaction:     ("Latest checkpoint:" for another trigger)
//	<digest, see RenderDigest, without its Objective line>
//
//	Sub-agents that already finished (use their results; do not redo or re-spawn them):
//	- <description> [<status>]: <condensed result>
//
// The objective is redacted, put on one line and Head-cut to 1000 units. The finished runs are
// the 8 that ended last (by EndedAt, else CreatedAt), oldest first, condensed as BuildDigest
// condenses them; a run in r.Finished whose status is pending or running is ignored. Every
// finished run of r.Finished is left out of the digest's own sub-agent sections, which would
// show it stale.
//
// The objective line always stays; when the heading and it alone are over maxChars, the
// objective line is Head-cut and nothing else is shown. The finished runs may take at most
// half the room the objective line leaves (the oldest are dropped first), the digest gets the
// rest and shrinks as RenderDigest documents, then runs dropped earlier come back while they
// fit.
func ObjectiveBlock(r Reinforcement, maxChars int) string {
	if maxChars <= 0 {
		maxChars = DefaultMaxChars
	}
	var d kv.Digest
	trigger := ""
	if c := r.Checkpoint; c != nil {
		d, trigger = c.Digest, c.Trigger
	}
	objective := oneLine(r.Objective, objectiveChars)
	if objective == "" {
		objective = oneLine(d.Objective, objectiveChars)
	}
	if objective == "" && digestEmpty(d) {
		return ""
	}

	head := ObjectiveHeading
	if objective != "" {
		head += "\nObjective: " + objective
	}
	if Len(head) > maxChars {
		return headingFirst(ObjectiveHeading, head, maxChars)
	}

	_, finished := buildRuns(r.Finished)
	done := map[string]bool{} // finished runs, listed or not, are stale in the digest
	for _, f := range r.Finished {
		if f.Status != kv.RunPending && f.Status != kv.RunRunning {
			done[f.ID] = true
		}
	}
	d.Objective = "" // on the block's own line
	d.OpenRuns = slices.DeleteFunc(slices.Clone(d.OpenRuns), func(x kv.RunDigest) bool { return done[x.RunID] })
	d.FinishedRuns = slices.DeleteFunc(slices.Clone(d.FinishedRuns), func(x kv.RunDigest) bool { return done[x.RunID] })

	var lines []string // "- run" lines, oldest first
	for _, f := range finished {
		line := runLine(f, "finished")
		if f.Result != "" {
			line += ": " + f.Result
		}
		lines = append(lines, line)
	}
	section := func(kept int) string {
		if kept == 0 {
			return ""
		}
		return finishedHeading + strings.Join(lines[len(lines)-kept:], "\n")
	}
	kept := len(lines)
	for kept > 0 && Len(section(kept)) > (maxChars-Len(head))/2 {
		kept--
	}

	heading := checkpointHeading
	if trigger == kv.TriggerPreCompaction {
		heading = compactedHeading
	}
	digest := ""
	if room := maxChars - Len(head) - Len(section(kept)) - Len(heading); room >= minSection {
		digest = RenderDigest(d, room)
	}
	if digest != "" {
		digest = heading + digest
	}
	for kept < len(lines) && Len(head)+Len(digest)+Len(section(kept+1)) <= maxChars {
		kept++
	}
	out := head + digest + section(kept)
	if out == ObjectiveHeading {
		return "" // no room for anything under it
	}
	if Len(out) > maxChars { // cannot happen; keep the promise regardless
		out = headingFirst(ObjectiveHeading, out, maxChars)
	}
	return out
}

// headingFirst Head-cuts block, which starts with heading and a newline, to max units keeping
// the heading whole; it returns "" when that leaves under minSection units for the rest.
func headingFirst(heading, block string, max int) string {
	rest, ok := strings.CutPrefix(block, heading+"\n")
	room := max - Len(heading) - 1
	if !ok || room < minSection {
		return ""
	}
	if cut := Head(rest, room); cut != "" {
		return heading + "\n" + cut
	}
	return ""
}
