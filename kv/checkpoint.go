package kv

import (
	"fmt"
	"strings"
	"time"
)

// Checkpoint triggers: why a checkpoint was taken.
const (
	TriggerPeriodic      = "periodic"       // every so many prompts or minutes of activity
	TriggerPreCompaction = "pre_compaction" // just before the harness compacted the session
	TriggerAgent         = "agent"          // the agent asked for one (API, MCP tool)
	TriggerExplicit      = "explicit"       // a user asked for one (heirloom checkpoint KEY)
	TriggerSpawn         = "spawn"          // the session spawned a sub-agent: the state the child inherits
)

// Checkpoint is a snapshot of a session: what it is for and where it stands. It is read back
// to re-inject the objective after a compaction and to recover context when a session starts
// in the same project. A checkpoint is identified by (Scope, ID); a session has any number of
// them, each its own record, so writers never contend over one value.
type Checkpoint struct {
	Scope string // memory scope, as on Session. Never empty.
	// ID is unique within Scope. PutCheckpoint assigns one when it is empty (see there): the
	// IDs it assigns sort by CreatedAt, then by write order. A caller's own ID is kept as given.
	ID          string
	SessionID   string // the session it belongs to, in Scope. Never empty.
	Harness     string // the harness, as on Session; may be empty
	Project     string // the working directory as the harness reported it
	ProjectNorm string // Project, realpath-normalised; "" keeps the checkpoint out of project recovery
	Trigger     string // one of the Trigger* constants

	Epoch   int    // the session's compaction epoch when taken (Session.Compactions)
	Prompts int    // user prompts the session had when taken
	TurnSeq uint64 // the transcript covered: turns with Seq < TurnSeq (Session.TurnCount then)

	Digest Digest

	// CreatedAt is when the checkpoint was taken; PutCheckpoint sets it from Store.Now when
	// zero. It orders a session's checkpoints and decides their age for pruning; it must be a
	// time a key can hold, whose UnixNano fits an int64 (1677-09-21 to 2262-04-11).
	CreatedAt time.Time
}

// Digest is the deterministic summary a checkpoint carries, built without a model (outside
// kv). Nil and empty slices are stored alike and read back as nil.
type Digest struct {
	Objective     string      // what the session is for
	Summary       string      // where the session stands, in the agent's own words (session_digest); "" when it wrote none
	NextSteps     []string    // what the agent means to do next, as it wrote them with its summary
	Prompts       []string    // the latest user prompts, oldest first
	Decisions     []Statement // decisions stated so far
	Constraints   []Statement // constraints stated so far
	Files         []string    // files touched, most recent first
	LastAssistant string      // an excerpt of the last assistant message
	OpenRuns      []RunDigest // sub-agent runs still pending or running
	FinishedRuns  []RunDigest // finished sub-agent runs, each with a condensed result
}

// Statement is one decision or constraint.
type Statement struct {
	Text string
	// Inferred says it was taken from an imperative in a user prompt ("must", "never", …), not
	// stated explicitly through the API or MCP.
	Inferred bool
}

// RunDigest is a sub-agent run as a checkpoint remembers it.
type RunDigest struct {
	RunID       string // Run.ID
	ChildID     string // Run.ChildID; "" while pending
	Description string // Run.Description
	Status      string // Run.Status
	Result      string // a condensed Run.Result; "" while unfinished
}

// Validate reports the first problem with c: scope and session required and NUL-free, ID and
// ProjectNorm NUL-free (both may be empty), a known trigger, no negative counts, and a
// CreatedAt that is zero or within the range a key holds.
func (c *Checkpoint) Validate() error {
	switch {
	case checkScope(c.Scope) != nil:
		return fmt.Errorf("checkpoint %q: %w", c.ID, checkScope(c.Scope))
	case checkRef(c.Scope, c.SessionID) != nil:
		return fmt.Errorf("checkpoint %q: session: %w", c.ID, checkRef(c.Scope, c.SessionID))
	case strings.IndexByte(c.ID, sep) >= 0:
		return fmt.Errorf("checkpoint %q: id contains NUL", c.ID)
	case strings.IndexByte(c.ProjectNorm, sep) >= 0:
		return fmt.Errorf("checkpoint %q: normalised project %q contains NUL", c.ID, c.ProjectNorm)
	case !validTrigger(c.Trigger):
		return fmt.Errorf("checkpoint %q: trigger %q: want %q, %q, %q, %q or %q", c.ID, c.Trigger,
			TriggerPeriodic, TriggerPreCompaction, TriggerAgent, TriggerExplicit, TriggerSpawn)
	case c.Epoch < 0 || c.Prompts < 0:
		return fmt.Errorf("checkpoint %q: negative epoch %d or prompts %d", c.ID, c.Epoch, c.Prompts)
	case !c.CreatedAt.IsZero() && !keyTimeOK(c.CreatedAt):
		return fmt.Errorf("checkpoint %q: created at %v: outside %v to %v", c.ID, c.CreatedAt, minKeyTime, maxKeyTime)
	}
	return nil
}

func validTrigger(t string) bool {
	switch t {
	case TriggerPeriodic, TriggerPreCompaction, TriggerAgent, TriggerExplicit, TriggerSpawn:
		return true
	}
	return false
}
