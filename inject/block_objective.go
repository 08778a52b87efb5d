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
	// Cast holds the limits the finished sub-agents' results are cast within (see CastRun);
	// its MaxChars and Full are ignored: the block shares its own room among them.
	Cast CastOptions
}

// ReinforcedRuns is how many finished sub-agents ObjectiveBlock casts at most: a caller need
// read no more.
const ReinforcedRuns = maxRuns

// Section headings of the objective block, each preceded by a blank line.
const (
	checkpointHeading = "\n\nLatest checkpoint:\n"
	compactedHeading  = "\n\nCheckpoint taken before the compaction:\n"
	finishedHeading   = "\n\nSub-agents that already finished (use their results; do not redo or re-spawn them):\n\n"
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
//
//	<the cast of each finished run (see CastRun), a blank line between>
//
// The objective is redacted, put on one line and Head-cut to 1000 units. The finished runs are
// the 8 that ended last (by EndedAt, else CreatedAt), oldest first; a run in r.Finished whose
// status is pending, running or refused is ignored. Every finished run of r.Finished is left
// out of the digest's own sub-agent sections, which would show it stale.
//
// The objective line always stays; when the heading and it alone are over maxChars, the
// objective line is Head-cut and nothing else is shown. The casts may take at most half the
// room the objective line leaves, shared among them (see castAll: while a share would be under
// MinCastChars, the oldest is dropped), the digest gets the rest and shrinks as RenderDigest
// documents, then the casts take the room the digest left: they grow, and runs dropped earlier
// come back while their shares stay at MinCastChars or more.
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

	done := castable(r.Finished, len(r.Finished)) // listed or not, they are stale in the digest
	finished := sized(done[max(0, len(done)-ReinforcedRuns):])
	d.Objective = "" // on the block's own line
	d.OpenRuns, d.FinishedRuns = withoutRuns(d.OpenRuns, done), withoutRuns(d.FinishedRuns, done)
	section := func(room int) string {
		if casts := castAll(finished, r.Cast, room-Len(finishedHeading)); casts != "" {
			return finishedHeading + casts
		}
		return ""
	}

	heading := checkpointHeading
	if trigger == kv.TriggerPreCompaction {
		heading = compactedHeading
	}
	digest := ""
	if room := maxChars - Len(head) - Len(section((maxChars-Len(head))/2)) - Len(heading); room >= minSection {
		digest = RenderDigest(d, room)
	}
	if digest != "" {
		digest = heading + digest
	}
	out := head + digest + section(maxChars-Len(head)-Len(digest))
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

// withoutRuns returns the digest's runs that are not among runs: those runs are shown whole
// elsewhere, and the digest's account of them may be stale.
func withoutRuns(list []kv.RunDigest, runs []kv.Run) []kv.RunDigest {
	return slices.DeleteFunc(slices.Clone(list), func(x kv.RunDigest) bool {
		return slices.ContainsFunc(runs, func(r kv.Run) bool { return r.ID == x.RunID })
	})
}
