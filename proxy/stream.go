package proxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// Consume implements adapters.Sink: it applies one event from a streaming harness (OpenCode's
// event stream, OpenClaw's gateway). Those harnesses name parents and spawned children
// explicitly, so nothing is paired by guess; turns arrive in the events and are upserted.
func (s *Server) Consume(ctx context.Context, ev adapters.Event) error {
	if ev.SessionID == "" || ev.Kind == adapters.KindUnknown {
		return nil
	}
	if ev.At.IsZero() {
		ev.At = s.Now()
	}
	if ev.Scope == "" {
		ev.Scope = s.Scope
	}
	unlock := s.locks.lock(ev.Scope + "\x00" + ev.SessionID)
	defer unlock()
	var err error
	switch ev.Kind {
	case adapters.KindSessionStart, adapters.KindSessionUpdate, adapters.KindSessionDeleted:
		err = s.streamSession(ctx, ev)
	case adapters.KindTurns:
		err = s.streamTurns(ctx, ev)
	case adapters.KindSpawn, adapters.KindSpawnResult:
		err = s.streamSpawn(ctx, ev)
	case adapters.KindCompacted:
		err = s.ensureSession(ctx, ev, func(sess *kv.Session) { countCompaction(sess, ev.At) })
	case adapters.KindIdle:
		err = s.streamIdle(ctx, ev)
	case adapters.KindPreCompact:
		if err = s.ensureSession(ctx, ev, func(*kv.Session) {}); err == nil {
			err = s.preCompactionCheckpoint(ctx, ev.Scope, ev.SessionID, ev.Instructions)
		}
	}
	if err != nil {
		return fmt.Errorf("%s %s of %s: %w", ev.Harness, ev.Name, ev.SessionID, err)
	}
	return nil
}

// SameCompaction is how close two compaction reports for one session must be to count as one:
// OpenClaw reports a compaction on its Gateway and through the plugin's after_compaction, moments
// apart, and a real compaction takes a model call, far longer.
const SameCompaction = 10 * time.Second

// countCompaction starts a new compaction epoch for sess at at, unless the latest one was
// reported within SameCompaction of it (another source reporting the same compaction).
func countCompaction(sess *kv.Session, at time.Time) {
	if !sess.CompactedAt.IsZero() && at.Sub(sess.CompactedAt).Abs() < SameCompaction {
		return
	}
	sess.Compactions++
	sess.CompactedAt = at
}

// ensureSession updates session ev.SessionID with change, creating a minimal active record when
// the event arrives before the session's own (streams and resyncs interleave).
func (s *Server) ensureSession(ctx context.Context, ev adapters.Event, change func(*kv.Session)) error {
	_, err := s.Store.UpdateSession(ctx, ev.Scope, ev.SessionID, func(sess *kv.Session, exists bool) error {
		if !exists {
			sess.Harness, sess.NativeID, sess.Status, sess.CreatedAt = ev.Harness, ev.SessionID, kv.StatusActive, ev.At
		}
		if sess.Project == "" && ev.Cwd != "" {
			sess.Project, sess.ProjectNorm = ev.Cwd, normaliseProject(ev.Cwd)
		}
		change(sess)
		return nil
	})
	return err
}

// streamSession records a session as the harness describes it, linked to the parent the harness
// names. A parent not seen yet gets a minimal record, filled in when its own event arrives.
func (s *Server) streamSession(ctx context.Context, ev adapters.Event) error {
	var parent kv.Session
	if ev.ParentSessionID != "" && ev.ParentSessionID != ev.SessionID {
		pev := ev
		pev.SessionID, pev.ParentSessionID = ev.ParentSessionID, ""
		if err := s.ensureSession(ctx, pev, func(*kv.Session) {}); err != nil {
			return err
		}
		var err error
		if parent, err = s.Store.GetSession(ctx, ev.Scope, ev.ParentSessionID); err != nil {
			return err
		}
	}
	return s.ensureSession(ctx, ev, func(sess *kv.Session) {
		if ev.Title != "" {
			sess.Title = ev.Title
		}
		if ev.AgentName != "" && parent.ID != "" {
			sess.AgentType = ev.AgentName
		}
		if parent.ID != "" {
			sess.ParentID, sess.Depth, sess.ParentInferred = parent.ID, parent.Depth+1, false
			if ev.Depth > 0 {
				sess.Depth = ev.Depth // stated by the harness: right even before the parent's own link arrives
			}
		}
		if ev.Kind == adapters.KindSessionDeleted {
			sess.Status = kv.StatusEnded
		}
	})
}

// streamTurns upserts the turns an event carries. A session's first user turn is its objective
// unless it has one (a child's task prompt arrives as its first user turn, too).
func (s *Server) streamTurns(ctx context.Context, ev adapters.Event) error {
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
	if err := s.ensureSession(ctx, ev, func(sess *kv.Session) {
		if sess.Objective == "" && sess.TurnCount == 0 {
			sess.Objective = objective
		}
	}); err != nil {
		return err
	}
	turns := make([]kv.Turn, 0, len(ev.Turns))
	for _, t := range ev.Turns {
		turns = append(turns, kv.Turn{SourceID: t.ID, Role: t.Role, Text: t.Text, Tool: t.Tool, Files: t.Files, At: t.At})
	}
	added, _, err := s.Store.UpsertTurns(ctx, ev.Scope, ev.SessionID, turns)
	if err != nil || added == 0 {
		return err
	}
	sess, err := s.Store.GetSession(ctx, ev.Scope, ev.SessionID)
	if err != nil {
		return err
	}
	s.maybeCheckpoint(sess) // the store counted the new user turns as prompts
	return nil
}

// streamSpawn records a spawn and, once the harness names the child session, links them: the
// child's objective is the task prompt. A result finishes the run.
func (s *Server) streamSpawn(ctx context.Context, ev adapters.Event) error {
	if ev.Spawn == nil || ev.Spawn.ToolUseID == "" {
		return nil
	}
	if err := s.ensureSession(ctx, ev, func(*kv.Session) {}); err != nil {
		return err
	}
	root, err := s.rootOf(ctx, ev.Scope, ev.SessionID)
	if err != nil {
		return err
	}
	child := ev.Spawn.ChildSessionID
	if child == "" && ev.Result != nil {
		child = ev.Result.AgentID
	}
	run, err := s.Store.UpdateRun(ctx, ev.Scope, ev.Spawn.ToolUseID, func(r *kv.Run, exists bool) error {
		if !exists {
			r.Harness, r.RootID, r.ParentID, r.Status, r.CreatedAt = ev.Harness, root, ev.SessionID, kv.RunPending, ev.At
		}
		if ev.Spawn.Prompt != "" {
			r.Prompt, r.Type = ev.Spawn.Prompt, ev.Spawn.Type
		}
		if ev.Spawn.Description != "" && (r.Description == "" || ev.Spawn.Prompt != "") {
			r.Description = ev.Spawn.Description
		}
		if child != "" && r.ChildID == "" {
			r.ChildID, r.Provisional, r.StartedAt = child, false, ev.At
			if r.Status == kv.RunPending {
				r.Status = kv.RunRunning
			}
		}
		if ev.Kind == adapters.KindSpawnResult && ev.Result != nil {
			r.Status = ev.Result.Status
			if r.Status == "" {
				r.Status = kv.RunCompleted
			}
			if ev.Result.Text != "" {
				r.Result = ev.Result.Text
			}
			if ev.Result.Tokens > 0 {
				r.Tokens = ev.Result.Tokens
			}
			if ev.Result.DurationMs > 0 {
				r.DurationMs = ev.Result.DurationMs
			}
			r.EndedAt = ev.At
		}
		return nil
	})
	if err != nil {
		return err
	}
	if run.ChildID == "" || run.Prompt == "" {
		return nil
	}
	cev := ev
	cev.SessionID = run.ChildID
	parent, err := s.Store.GetSession(ctx, ev.Scope, ev.SessionID)
	if err != nil {
		return err
	}
	return s.ensureSession(ctx, cev, func(c *kv.Session) {
		c.Objective = run.Prompt
		if c.ParentID == "" {
			c.ParentID, c.Depth = parent.ID, parent.Depth+1
		}
		if c.AgentType == "" {
			c.AgentType = run.Type
		}
	})
}

// streamIdle ends the run of a child session that went idle without its spawn's result having
// arrived: its last assistant message is the result.
func (s *Server) streamIdle(ctx context.Context, ev adapters.Event) error {
	run, err := s.Store.RunByChild(ctx, ev.Scope, ev.SessionID)
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	if err != nil || run.Status != kv.RunRunning {
		return err
	}
	last, err := s.Store.LastTurns(ctx, ev.Scope, ev.SessionID, 20)
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
	_, err = s.Store.UpdateRun(ctx, ev.Scope, run.ID, func(r *kv.Run, _ bool) error {
		if r.Status != kv.RunRunning {
			return errUnchanged
		}
		r.Status, r.EndedAt = kv.RunCompleted, ev.At
		if r.Result == "" {
			r.Result = result
		}
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// rootOf walks ParentID links up from id to its top-level session in scope (at most 64 steps).
func (s *Server) rootOf(ctx context.Context, scope, id string) (string, error) {
	for range 64 {
		sess, err := s.Store.GetSession(ctx, scope, id)
		if errors.Is(err, kv.ErrNotFound) {
			return id, nil
		}
		if err != nil {
			return "", err
		}
		if sess.ParentID == "" {
			return id, nil
		}
		id = sess.ParentID
	}
	return id, nil
}
