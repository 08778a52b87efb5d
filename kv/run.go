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
	// Provisional says the pairing with ChildID was chosen among several candidate spawns and
	// awaits confirmation (sub-agent metadata, the spawn's result); false once confirmed.
	Provisional bool

	Description string // the short description the parent gave
	Prompt      string // the task prompt: the sub-agent's objective
	Type        string // the sub-agent type asked for

	Status     string // one of the Run* statuses, or the harness's own word for a finished run
	Result     string // what the sub-agent returned; "" until it finished
	Tokens     int64  // tokens the sub-agent used; 0 when unknown
	DurationMs int64  // how long it ran; 0 when unknown

	CreatedAt time.Time // when the spawn was asked for
	StartedAt time.Time // when the sub-agent started; zero while pending
	EndedAt   time.Time // when it finished; zero while pending or running
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
	case r.Status == "":
		return fmt.Errorf("run %q: status required", r.ID)
	}
	return nil
}
