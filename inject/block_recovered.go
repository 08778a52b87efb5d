package inject

import (
	"fmt"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/inject/heading"
	"github.com/heirloom-dev/heirloom/kv"
)

// RecoveredHeading is the first line of the block RecoveredBlock builds.
const RecoveredHeading = heading.Recovered

// DefaultRecoveredChars is RecoveredBlock's budget when it is given none: its own share of a
// reply, leaving room for the other blocks under DefaultMaxChars.
const DefaultRecoveredChars = 4000

// sessionRefChars caps the other session's "<harness> session <id>", in UTF-16 units.
const sessionRefChars = 120

// RecoveredBlock renders the "## Recovered Session Checkpoint" block a session gets at start or
// resume: the checkpoint c, of this session when sameSession is set (a resume), else of another
// session of the same project. now is the current time, for the checkpoint's age. The block is
// at most maxChars UTF-16 units (see Len); zero or negative means DefaultRecoveredChars. It
// returns "" when c's digest is empty (a zero checkpoint), and when maxChars leaves no room for
// some of the digest under the heading, From and Project lines: those alone recover nothing.
// The format, no trailing newline:
//
//	## Recovered Session Checkpoint
//	From: this session; checkpoint taken <age> (<why>, after <n> prompts).
//	From: another session of this project (<harness> session <id>); checkpoint taken <age> (<why>, after <n> prompts).
//	Project: <project>                       (another session's only; omitted when empty)
//	<digest, see RenderDigest>
//
// <age> is "just now" (under a minute, or a CreatedAt after now), "<m> min ago", "<h>h <m>m ago"
// under two days, else "<d> days ago". <why> says the trigger in words: "periodic", "before a
// compaction", "written by the agent", "asked for by the user" (another trigger is shown as
// given). Whatever is unknown is left out: the age with a zero CreatedAt or now (the line then
// reads "; checkpoint <why>, after <n> prompts"), ", after <n> prompts" when Prompts is 0. The
// session reference is Head-cut to 120 units, the project to 300.
//
// The heading and the From and Project lines always stay; the digest gets the room left (at
// least 32 units, else the block is "") and shrinks as RenderDigest documents.
func RecoveredBlock(c kv.Checkpoint, sameSession bool, now time.Time, maxChars int) string {
	return RecoveryBlock(Recovery{Checkpoint: c, SameSession: sameSession, Now: now}, maxChars)
}

// Recovery is what RecoveryBlock renders: records read from the store.
type Recovery struct {
	Checkpoint  kv.Checkpoint // the checkpoint recovered
	SameSession bool          // it is the starting session's own (a resume)
	Now         time.Time     // the current time, for the checkpoint's age
	// Finished are the sub-agent runs of the checkpoint's session, any order: the 3 that ended
	// last of those finished are cast after the digest (see CastRun), so the session does not
	// redo them. Open and refused runs are ignored.
	Finished []kv.Run
	// Cast holds the limits of those casts; its MaxChars and Full are ignored.
	Cast CastOptions
}

// RecoveredRuns is how many finished sub-agents a recovered block casts at most: a caller need
// read no more.
const RecoveredRuns = 3

// recoveredRunsHeading introduces the casts of a recovered block.
const recoveredRunsHeading = "\n\nSub-agents that finished (their results; do not redo them):\n\n"

// RecoveryBlock is RecoveredBlock with the session's finished sub-agents: after the digest, the
// section
//
//	Sub-agents that finished (their results; do not redo them):
//
//	<the cast of each, a blank line between>
//
// which may take at most 40% of the room the heading, From and Project lines leave, shared as
// ObjectiveBlock shares its room among casts; the digest gets the rest (without its own lines
// about the runs cast here, or about any other finished run of r.Finished), then the casts take
// what the digest left. Finished runs alone make no block: r's digest must not be empty.
func RecoveryBlock(r Recovery, maxChars int) string {
	c, sameSession, now := r.Checkpoint, r.SameSession, r.Now
	if maxChars <= 0 {
		maxChars = DefaultRecoveredChars
	}
	if digestEmpty(c.Digest) {
		return ""
	}

	from := "From: this session"
	if !sameSession {
		ref := oneLine(fmt.Sprintf("%s session %s", c.Harness, c.SessionID), sessionRefChars)
		from = "From: another session of this project (" + ref + ")"
	}
	var details []string
	if why := triggerWords(c.Trigger); why != "" {
		details = append(details, why)
	}
	if c.Prompts > 0 {
		details = append(details, fmt.Sprintf("after %d prompts", c.Prompts))
	}
	switch age := ago(now, c.CreatedAt); {
	case age != "" && len(details) > 0:
		from += "; checkpoint taken " + age + " (" + strings.Join(details, ", ") + ")"
	case age != "":
		from += "; checkpoint taken " + age
	case len(details) > 0:
		from += "; checkpoint " + strings.Join(details, ", ")
	}
	head := RecoveredHeading + "\n" + from + "."
	if project := oneLine(c.Project, projectChars); project != "" && !sameSession {
		head += "\nProject: " + project
	}
	room := maxChars - Len(head) - 1
	if room < minSection {
		return ""
	}
	done := castable(r.Finished, len(r.Finished))
	finished := sized(done[max(0, len(done)-RecoveredRuns):])
	d := c.Digest
	d.OpenRuns, d.FinishedRuns = withoutRuns(d.OpenRuns, done), withoutRuns(d.FinishedRuns, done)
	section := func(room int) string {
		if casts := castAll(finished, r.Cast, room-Len(recoveredRunsHeading)); casts != "" {
			return recoveredRunsHeading + casts
		}
		return ""
	}
	digest := RenderDigest(d, room-Len(section(room*2/5)))
	if digest == "" {
		return ""
	}
	return head + "\n" + digest + section(room-Len(digest))
}

// triggerWords says a checkpoint trigger in words.
func triggerWords(trigger string) string {
	switch trigger {
	case kv.TriggerPeriodic:
		return "periodic"
	case kv.TriggerPreCompaction:
		return "before a compaction"
	case kv.TriggerAgent:
		return "written by the agent"
	case kv.TriggerExplicit:
		return "asked for by the user"
	}
	return oneLine(trigger, runStatusChars)
}

// ago says how long before now then was; "" when either is zero.
func ago(now, then time.Time) string {
	if now.IsZero() || then.IsZero() {
		return ""
	}
	d := now.Sub(then)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", d/time.Minute)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm ago", d/time.Hour, d%time.Hour/time.Minute)
	}
	return fmt.Sprintf("%d days ago", d/(24*time.Hour))
}
