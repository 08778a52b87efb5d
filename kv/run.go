package kv

import (
	"fmt"
	"time"
)

// Run statuses. Harnesses may report other words for a finished run; those are kept as given.
const (
	RunPending     = "pending"     // asked for; no sub-agent has started for it yet
	RunRunning     = "running"     // a sub-agent started and is paired with it
	RunCompleted   = "completed"   // the sub-agent returned
	RunFailed      = "failed"      // the spawn or the sub-agent failed
	RunInterrupted = "interrupted" // the user or harness interrupted it
	RunRefused     = "refused"     // heirloom refused the spawn (a spawn limit); no sub-agent ran
)

// End reasons: why a finished run ended (Run.EndReason). Statuses say what the harness reported;
// an end reason is heirloom's account, also for runs the harness never reported the end of.
const (
	EndCompleted       = "completed"        // the sub-agent returned
	EndFailed          = "failed"           // the spawn or the sub-agent failed
	EndKilled          = "killed"           // interrupted or cancelled
	EndWatchdogTimeout = "watchdog_timeout" // it ran longer than runs.watchdog_timeout
	EndGhostSweep      = "ghost_sweep"      // its sub-agent never started, or its parent ended under it
)

// Run is one sub-agent run: what a session delegated, to which sub-agent, and what came back.
// A run is identified by (Scope, ID).
type Run struct {
	Scope   string // memory scope, as on Session
	ID      string // the spawning tool call's id (Claude Code tool_use_id)
	Harness string // the harness, as on Session

	RootID   string // the top-level session the spawn happened in
	ParentID string // the session that asked for the sub-agent: RootID or one of its sub-agents
	ChildID  string // the sub-agent's session once paired; "" while pending
	// ChildScope is the sub-agent session's memory scope when it is not Scope (an OpenClaw
	// spawn under another agent id); "" when the child is in Scope.
	ChildScope string
	// Provisional says the pairing with ChildID was chosen among several candidate spawns and
	// awaits confirmation (sub-agent metadata, the spawn's result); false once confirmed.
	Provisional bool

	Description string // the short description the parent gave
	Prompt      string // the task prompt: the sub-agent's objective
	Type        string // the sub-agent type asked for

	Depth int // the sub-agent's depth: its parent's plus one (a top-level session is 0)

	Status    string // one of the Run* statuses, or the harness's own word for a finished run
	EndReason string // one of the End* reasons once it finished; "" while open, and for a refused run
	Reason    string // why, in words: the limit a refused spawn hit, what ended a swept run
	Result    string // what the sub-agent returned; "" until it finished; condensed once Swept
	// ResultChars is the full result's length in characters, kept when the full result is swept.
	ResultChars int
	// Swept says the full result was dropped after runs.result_retention; Result then holds its
	// condensed form, at level Condensation.
	Swept        bool
	SweptAt      time.Time
	Condensation int
	Turns        int   // turns (steps) the sub-agent took; 0 when unknown
	Tokens       int64 // tokens the sub-agent used; 0 when unknown
	DurationMs   int64 // how long it ran; 0 when unknown

	// Summary is the level-2 condensation of a long result (an LLM's summary in labelled
	// sections), made once in the background while the full result is kept; "" when none was
	// made. The result-retention sweep moves it into Result.
	Summary string

	CreatedAt time.Time // when the spawn was asked for
	StartedAt time.Time // when the sub-agent started; zero while pending
	EndedAt   time.Time // when it finished; zero while pending or running
}

// Open reports whether r has not finished: pending or running. Only open runs count against a
// parent's spawn.max_children and are watched by the watchdog and the ghost sweep.
func (r *Run) Open() bool { return r.Status == RunPending || r.Status == RunRunning }

// holdsFullResult reports whether r is finished with a full result not yet swept: what the
// result-retention sweep looks for.
func (r *Run) holdsFullResult() bool {
	return !r.Open() && !r.EndedAt.IsZero() && r.Result != "" && !r.Swept
}

// Pending reports whether r still waits for its sub-agent to start.
func (r *Run) Pending() bool { return r.ChildID == "" && r.Status == RunPending }

// provisionallyPaired reports whether r holds a child chosen by a guess not yet confirmed.
func (r *Run) provisionallyPaired() bool { return r.Provisional && r.ChildID != "" }

// Validate reports the first problem with r.
func (r *Run) Validate() error {
	switch {
	case checkRef(r.Scope, r.ID) != nil:
		return fmt.Errorf("run %q: %w", r.ID, checkRef(r.Scope, r.ID))
	case r.Harness == "":
		return fmt.Errorf("run %q: harness required", r.ID)
	case checkRef(r.Scope, r.RootID) != nil:
		return fmt.Errorf("run %q: root: %w", r.ID, checkRef(r.Scope, r.RootID))
	case checkRef(r.Scope, r.ParentID) != nil:
		return fmt.Errorf("run %q: parent: %w", r.ID, checkRef(r.Scope, r.ParentID))
	case r.ChildID != "" && checkRef(r.Scope, r.ChildID) != nil:
		return fmt.Errorf("run %q: child: %w", r.ID, checkRef(r.Scope, r.ChildID))
	case r.ChildScope != "" && (r.ChildScope == r.Scope || checkScope(r.ChildScope) != nil):
		return fmt.Errorf("run %q: child scope %q: not another valid scope", r.ID, r.ChildScope)
	case r.Status == "":
		return fmt.Errorf("run %q: status required", r.ID)
	}
	return nil
}
