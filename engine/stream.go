package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// Consume implements adapters.Sink: it applies one event from a streaming harness (OpenCode's
// event stream, OpenClaw's gateway). Those harnesses name parents and spawned children
// explicitly, so nothing is paired by guess; turns arrive in the events and are upserted. Work
// for one session runs under that session's lock. It returns once the event is stored, not
// waiting for the disk: nobody was told a streamed event is durable, so its writes are
// committed kv.Unsynced and made durable by the store's group sync within its SyncEvery; a
// machine crash may lose that much, which the stream's next resync repairs.
// A harness's calls in flight go first (see harnessFirst).
func (e *Engine) Consume(ctx context.Context, ev adapters.Event) error {
	e.first.wait(ctx)
	// A stream at full speed keeps its goroutine busy for long stretches: step aside between
	// events, so that a harness's call waiting for a processor runs now rather than at the
	// scheduler's next preemption (10 ms on).
	runtime.Gosched()
	return e.consume(kv.Unsynced(ctx), ev)
}

// consume is Consume, its writes synced unless ctx is kv.Unsynced.
func (e *Engine) consume(ctx context.Context, ev adapters.Event) error {
	if ev.SessionID == "" || ev.Kind == adapters.KindUnknown {
		return nil
	}
	if ev.At.IsZero() {
		ev.At = e.Now()
	}
	e.heard.note(ev.Harness, e.Now())
	if ev.Scope == "" {
		ev.Scope = e.Scope
	}
	unlock := e.locks.lock(lockKey(ev.Scope, ev.SessionID))
	defer unlock()
	var err error
	switch ev.Kind {
	case adapters.KindSessionStart, adapters.KindSessionUpdate, adapters.KindSessionDeleted:
		err = e.streamSession(ctx, ev)
	case adapters.KindTurns:
		err = e.streamTurns(ctx, ev)
	case adapters.KindSpawn, adapters.KindSpawnResult:
		err = e.streamSpawn(ctx, ev)
	case adapters.KindCompacted:
		_, err = e.ensureSession(ctx, ev, func(sess *kv.Session) { countCompaction(sess, ev.At) })
	case adapters.KindIdle:
		err = e.streamIdle(ctx, ev)
	case adapters.KindPreCompact:
		if _, err = e.ensureSession(ctx, ev, func(*kv.Session) {}); err == nil {
			err = e.preCompactionCheckpoint(ctx, ev.Scope, ev.SessionID, ev.Instructions, nil)
		}
	}
	if err != nil {
		return fmt.Errorf("%s %s of %s: %w", ev.Harness, ev.Name, ev.SessionID, err)
	}
	return nil
}

// PluginEvent applies an event a harness's plugin posted (OpenClaw's subagent_spawned and
// compaction hooks) like a streamed one, waiting until ctx ends at most; the work then
// finishes in the background. Unlike a streamed event's, its writes are synced: the plugin's
// call is answered once they are durable.
func (e *Engine) PluginEvent(ctx context.Context, ev adapters.Event) error {
	defer e.first.enter()()
	_, err := detach(ctx, e, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, e.consume(ctx, ev)
	})
	return err
}

// ensureSession updates session ev.SessionID of ev.Scope with change, creating a minimal active
// record when the event arrives before the session's own (streams and resyncs interleave). It
// returns the session as written.
func (e *Engine) ensureSession(ctx context.Context, ev adapters.Event, change func(*kv.Session)) (kv.Session, error) {
	return e.Store.UpdateSession(ctx, ev.Scope, ev.SessionID, func(sess *kv.Session, exists bool) error {
		ensure(sess, exists, ev)
		change(sess)
		return nil
	})
}

// ensure fills in a session the event names: a new one becomes a minimal active record, and
// one without a project takes the event's directory.
func ensure(sess *kv.Session, exists bool, ev adapters.Event) {
	if !exists {
		sess.Harness, sess.NativeID, sess.Status, sess.CreatedAt = ev.Harness, ev.SessionID, kv.StatusActive, ev.At
	}
	if sess.Project == "" && ev.Cwd != "" {
		sess.Project, sess.ProjectNorm = ev.Cwd, normaliseProject(ev.Cwd)
	}
}

// streamSession records a session as the harness describes it, linked to the parent the harness
// names, in one transaction. A parent not seen yet gets a minimal record, filled in when its own
// event arrives.
func (e *Engine) streamSession(ctx context.Context, ev adapters.Event) error {
	// The parent lives in the scope its key names: another agent's, for an OpenClaw spawn
	// under another agent id.
	pscope := e.keyScope(ev.Harness, ev.ParentSessionID, ev.Scope)
	return e.Store.Update(ctx, func(tx *kv.Tx) error {
		var parent kv.Session
		if ev.ParentSessionID != "" && (ev.ParentSessionID != ev.SessionID || pscope != ev.Scope) {
			pev := ev
			pev.Scope, pev.SessionID, pev.ParentSessionID = pscope, ev.ParentSessionID, ""
			if pscope != ev.Scope {
				pev.Cwd = "" // the child's directory is its own agent's workspace, not its parent's
			}
			var err error
			parent, err = tx.UpdateSession(pscope, pev.SessionID, func(sess *kv.Session, exists bool) error {
				ensure(sess, exists, pev)
				return nil
			})
			if err != nil {
				return err
			}
		}
		_, err := tx.UpdateSession(ev.Scope, ev.SessionID, func(sess *kv.Session, exists bool) error {
			ensure(sess, exists, ev)
			if ev.Title != "" {
				sess.Title = ev.Title
			}
			if ev.AgentName != "" && parent.ID != "" {
				sess.AgentType = ev.AgentName
			}
			if parent.ID != "" {
				sess.ParentID, sess.Depth, sess.ParentInferred = parent.ID, parent.Depth+1, false
				sess.ParentScope = otherScope(pscope, ev.Scope)
				if ev.Depth > 0 {
					sess.Depth = ev.Depth // stated by the harness: right even before the parent's own link arrives
				}
			}
			if reset := ev.Kind == adapters.KindSessionStart && ev.Source == adapters.SourceClear; reset && exists && sess.TurnCount > 0 {
				// The harness started a new conversation under the key (OpenClaw's reset and
				// new): a fresh objective from its next prompt, and none of the old facts.
				sess.Objective, sess.FreshObjective, sess.ResetSeq = "", true, sess.TurnCount
				sess.Constraints, sess.Decisions = nil, nil
				sess.Compactions, sess.ReinforcedEpoch, sess.CompactionCheckpoint = 0, 0, ""
				if err := tx.ClearFacts(ev.Scope, ev.SessionID); err != nil {
					return err
				}
			}
			if ev.Kind == adapters.KindSessionDeleted {
				sess.Status = kv.StatusEnded
			}
			return nil
		})
		return err
	})
}

// streamTurns upserts the turns an event carries. A session's first user turn is its objective
// unless it has one (a child's task prompt arrives as its first user turn, too).
func (e *Engine) streamTurns(ctx context.Context, ev adapters.Event) error {
	if len(ev.Turns) == 0 {
		return nil
	}
	var objective string
	for _, t := range ev.Turns {
		if t.Role == "user" && t.Text != "" {
			objective = t.Text
			break
		}
	}
	// The session is made or updated in the write that stores the turns.
	a, _, err := e.Store.UpsertTranscript(ctx, ev.Scope, ev.SessionID, storedTurns(ev.Turns), func(sess *kv.Session, exists bool) error {
		ensure(sess, exists, ev)
		if objective != "" && (sess.Objective == "" && sess.TurnCount == 0 || sess.FreshObjective) {
			sess.Objective, sess.FreshObjective = objective, false
		}
		return nil
	})
	if err != nil || len(a.Turns) == 0 {
		return err
	}
	// The store counted the new user turns as prompts; the check reads them from the record
	// as written, so that count is the one due is decided on.
	e.maybeCheckpoint(a.Session)
	return nil
}

// streamSpawn records a spawn and, once the harness names the child session, links them: the
// child's objective is the task prompt. A result finishes the run. The run and the child's
// link are one transaction. A new spawn also writes the issuer's spawn checkpoint. A spawn
// heirloom refused stays refused unless the harness names its child or reports it ran (see
// wentAhead): then the refusal never reached it (the plugin gave up waiting), and the run is
// recorded as the harness reports it (see unrefuse).
func (e *Engine) streamSpawn(ctx context.Context, ev adapters.Event) error {
	if ev.Spawn == nil || ev.Spawn.ToolUseID == "" {
		return nil
	}
	issuer, err := e.ensureSession(ctx, ev, func(*kv.Session) {})
	if err != nil {
		return err
	}
	root, err := e.rootOf(ctx, ev.Scope, issuer)
	if err != nil {
		return err
	}
	child := ev.Spawn.ChildSessionID
	if child == "" && ev.Result != nil {
		child = ev.Result.AgentID
	}
	cscope := e.keyScope(ev.Harness, child, ev.Scope) // another agent's, for a spawn under its id
	created, opened := false, false
	err = e.Store.Update(ctx, func(tx *kv.Tx) error {
		run, err := tx.UpdateRun(ev.Scope, ev.Spawn.ToolUseID, func(r *kv.Run, exists bool) error {
			if exists && r.Status == kv.RunRefused {
				if child == "" && (ev.Kind != adapters.KindSpawnResult || !wentAhead(ev.Result)) {
					return nil // heirloom refused it (spawn limits): the call's error is no run of a sub-agent
				}
				unrefuse(r) // a child, or a result, after all: the refusal never reached the harness
			}
			if created = !exists; created {
				r.Harness, r.RootID, r.ParentID, r.Status, r.CreatedAt = ev.Harness, root, ev.SessionID, kv.RunPending, ev.At
			}
			if ev.Spawn.Prompt != "" {
				r.Prompt, r.Type = ev.Spawn.Prompt, ev.Spawn.Type
			}
			if ev.Spawn.Description != "" && (r.Description == "" || ev.Spawn.Prompt != "") {
				r.Description = ev.Spawn.Description
			}
			if child != "" && r.ChildID == "" {
				r.ChildID, r.ChildScope, r.Provisional, r.StartedAt = child, otherScope(cscope, ev.Scope), false, ev.At
				if r.Status == kv.RunPending {
					r.Status = kv.RunRunning
				}
			}
			// A refused spawn ran nothing; a launch is no end; a swept run's end was recorded
			// long ago (a resync repeats it) and its full result is gone on purpose.
			if ev.Kind == adapters.KindSpawnResult && ev.Result != nil && r.Status != kv.RunRefused && !launched(ev.Result.Status) && !r.Swept {
				finishRun(r, ev.Result.Status, ev.At)
				if ev.Result.Text != "" {
					r.Result = ev.Result.Text
				}
				if ev.Result.Tokens > 0 {
					r.Tokens = ev.Result.Tokens
				}
				if ev.Result.DurationMs > 0 {
					r.DurationMs = ev.Result.DurationMs
				}
				var turns uint64
				if r.ChildID != "" && ev.Result.Steps == 0 {
					if c, err := tx.GetSession(childScope(*r), r.ChildID); err == nil {
						turns = c.TurnCount
					}
				}
				r.Turns = turnsOf(r, ev.Result.Steps, turns)
			}
			return nil
		})
		opened = created && run.Open()
		if err != nil || run.ChildID == "" || run.Prompt == "" {
			return err
		}
		cev := ev
		cev.Scope, cev.SessionID = childScope(run), run.ChildID
		if cev.Scope != ev.Scope {
			cev.Cwd = "" // the parent's directory; the child works in its own agent's workspace
		}
		_, err = tx.UpdateSession(cev.Scope, run.ChildID, func(c *kv.Session, exists bool) error {
			ensure(c, exists, cev)
			c.Objective = run.Prompt
			if c.ParentID == "" {
				c.ParentID, c.ParentScope, c.Depth = issuer.ID, otherScope(ev.Scope, cev.Scope), issuer.Depth+1
			}
			if c.AgentType == "" {
				c.AgentType = run.Type
			}
			return nil
		})
		return err
	})
	if err != nil {
		return err
	}
	if opened && e.harness(ev.Harness).RunsByChild {
		// The child's run of a spawn its plugin let through: the place it held is taken.
		e.reservations.release(ev.Scope, ev.SessionID)
	}
	if created && ev.Kind == adapters.KindSpawn {
		e.spawnCheckpoint(issuer)
	}
	return nil
}

// streamIdle ends the run of a child session that went idle without its spawn's result having
// arrived: its last assistant message is the result, its stored turns the run's turns. A run a
// sweep ended is ended again, as its harness now tells.
func (e *Engine) streamIdle(ctx context.Context, ev adapters.Event) error {
	child, err := e.Store.GetSession(ctx, ev.Scope, ev.SessionID)
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return err
	}
	// The run is its parent's: in the parent's scope, another one for a spawn under another
	// agent id.
	run, err := e.Store.RunByChild(ctx, cmp.Or(child.ParentScope, ev.Scope), ev.SessionID)
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	if err != nil || run.Status != kv.RunRunning && !sweptEnd(&run) {
		return err
	}
	last, err := e.Store.LastTurns(ctx, ev.Scope, ev.SessionID, 20)
	if err != nil {
		return err
	}
	var result string
	for i := len(last) - 1; i >= 0; i-- {
		if last[i].Role == "assistant" && last[i].Text != "" {
			result = last[i].Text
			break
		}
	}
	_, err = e.Store.UpdateRun(ctx, run.Scope, run.ID, func(r *kv.Run, _ bool) error {
		if r.Status != kv.RunRunning && !sweptEnd(r) {
			return errUnchanged
		}
		if r.Result == "" || sweptEnd(r) {
			r.Result = result
		}
		finishRun(r, kv.RunCompleted, ev.At)
		r.Turns = turnsOf(r, 0, child.TurnCount)
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// rootOf walks ParentID links up from sess to its top-level session in scope (at most 64
// steps): a session whose parent lives in another scope is the top of its tree in scope, so a
// scope's runs never name another scope's sessions but through ChildScope.
func (e *Engine) rootOf(ctx context.Context, scope string, sess kv.Session) (string, error) {
	id := sess.ID
	for range 64 {
		if sess.ParentID == "" || sess.ParentScope != "" {
			return id, nil
		}
		id = sess.ParentID
		var err error
		sess, err = e.Store.GetSession(ctx, scope, id)
		if errors.Is(err, kv.ErrNotFound) {
			return id, nil
		}
		if err != nil {
			return "", err
		}
	}
	return id, nil
}
