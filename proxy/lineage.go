package proxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// spawn records a pending run for a sub-agent the session asked for, then reads the issuer's
// transcript so the child inherits everything up to the spawn. Repeats are no-ops.
func (s *Server) spawn(ctx context.Context, h harness, ev adapters.Event) error {
	if ev.Spawn == nil || ev.Spawn.ToolUseID == "" {
		return nil
	}
	issuer := issuerID(ev)
	_, err := s.Store.UpdateRun(ctx, s.Scope, ev.Spawn.ToolUseID, func(r *kv.Run, exists bool) error {
		if exists {
			return errUnchanged
		}
		r.Harness = ev.Harness
		r.RootID = ev.SessionID
		r.ParentID = issuer
		r.Description = ev.Spawn.Description
		r.Prompt = ev.Spawn.Prompt
		r.Type = ev.Spawn.Type
		r.Status = kv.RunPending
		r.CreatedAt = ev.At
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return fmt.Errorf("record spawn %s: %w", ev.Spawn.ToolUseID, err)
	}
	return s.ingest(ctx, h.transcripts, issuer)
}

// errUnchanged aborts an update that has nothing to write.
var errUnchanged = errors.New("unchanged")

// subagentStart records a starting sub-agent, pairs it with the spawn that asked for it, and
// returns the inherited block for it.
//
// The parent is read from the payload, never guessed when the payload names it: the sub-agent
// belongs to session_id, and its issuer is the pending spawn it pairs with — among that
// session's unpaired spawns whose type equals the sub-agent's, the oldest. When those candidates
// all share one issuer the parent is exact; otherwise the pairing is provisional until the
// sub-agent's metadata or the spawn's result confirms or corrects it.
func (s *Server) subagentStart(ctx context.Context, h harness, ev adapters.Event) (string, error) {
	inferred := false
	if ev.SessionID == "" {
		root, err := s.inferRoot(ctx, ev)
		if err != nil || root == "" {
			return "", err
		}
		ev.SessionID, inferred = root, true
	}
	unlock := s.locks.lock(ev.SessionID)
	defer unlock()
	if _, err := s.touchSession(ctx, ev); err != nil {
		return "", err
	}
	id := childID(ev.SessionID, ev.AgentID)
	if child, err := s.Store.GetSession(ctx, s.Scope, id); err == nil && child.ParentID != "" {
		return s.inheritFor(ctx, h, s.Scope, child.ParentID) // a repeated SubagentStart: same answer
	}

	run, provisional, err := s.pickSpawn(ctx, ev)
	if err != nil {
		return "", err
	}
	parentID := ev.SessionID
	if run != nil {
		parentID = run.ParentID
	}
	parent, err := s.Store.GetSession(ctx, s.Scope, parentID)
	if err != nil {
		return "", fmt.Errorf("sub-agent %s: parent %s: %w", id, parentID, err)
	}
	var transcript string
	if h.metas != nil {
		root, err := s.Store.GetSession(ctx, s.Scope, ev.SessionID)
		if err != nil {
			return "", err
		}
		transcript = h.metas.SubagentTranscriptPath(root.Transcript.Path, ev.AgentID)
	}
	_, err = s.Store.UpdateSession(ctx, s.Scope, id, func(c *kv.Session, exists bool) error {
		if !exists {
			c.CreatedAt = ev.At
		}
		c.Harness = ev.Harness
		c.NativeID = ev.AgentID
		c.AgentType = ev.AgentType
		c.ParentInferred = inferred
		c.Status = kv.StatusActive
		c.Project, c.ProjectNorm = parent.Project, parent.ProjectNorm
		if ev.Cwd != "" {
			c.Project, c.ProjectNorm = ev.Cwd, normaliseProject(ev.Cwd)
		}
		if c.Transcript.Path == "" {
			c.Transcript.Path = transcript
		}
		applyRun(c, parent, run)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("record sub-agent %s: %w", id, err)
	}
	if run != nil {
		_, err := s.Store.UpdateRun(ctx, s.Scope, run.ID, func(r *kv.Run, _ bool) error {
			r.ChildID = id
			r.Provisional = provisional
			r.Status = kv.RunRunning
			r.StartedAt = ev.At
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("pair sub-agent %s with spawn %s: %w", id, run.ID, err)
		}
		s.awaitSpawnRecord(ctx, parent, run.ID)
	}
	return s.inheritFor(ctx, h, s.Scope, parentID)
}

// applyRun sets what a sub-agent session takes from the spawn it was paired with: its parent,
// depth, title and objective. A nil run leaves the title and objective as they are.
func applyRun(c *kv.Session, parent kv.Session, run *kv.Run) {
	c.ParentID = parent.ID
	c.Depth = parent.Depth + 1
	if run != nil {
		c.Title = run.Description
		c.Objective = run.Prompt
	}
}

// pickSpawn chooses the pending spawn a starting sub-agent pairs with (DESIGN §1): the oldest
// unpaired spawn of the session with the sub-agent's type. provisional says the choice was among
// several candidates, or is the last one left after an earlier guess of the same type, so the
// parent (different issuers) or the task (same issuer) may be wrong.
// It returns nil when no spawn matches.
func (s *Server) pickSpawn(ctx context.Context, ev adapters.Event) (run *kv.Run, provisional bool, err error) {
	pending, err := s.Store.PendingRuns(ctx, s.Scope, ev.SessionID)
	if err != nil {
		return nil, false, err
	}
	var candidates []kv.Run
	for _, r := range pending {
		if r.Type == ev.AgentType {
			candidates = append(candidates, r)
		}
	}
	if len(candidates) == 0 {
		return nil, false, nil
	}
	if len(candidates) > 1 {
		return &candidates[0], true, nil
	}
	// One candidate left is certain only if no earlier sub-agent of this type was paired by
	// guess: that guess may have taken this sub-agent's spawn, leaving the wrong one here.
	guessed, err := s.Store.ListRuns(ctx, s.Scope, kv.RunFilter{RootID: ev.SessionID, Status: kv.RunRunning})
	if err != nil {
		return nil, false, err
	}
	for _, r := range guessed {
		if r.Provisional && r.Type == ev.AgentType {
			return &candidates[0], true, nil
		}
	}
	return &candidates[0], false, nil
}

// inferRoot finds the parent of a sub-agent whose payload names none (older harness versions):
// the most recently active top-level session of the same harness and project. The guess is
// recorded on the child as ParentInferred.
func (s *Server) inferRoot(ctx context.Context, ev adapters.Event) (string, error) {
	if ev.Cwd == "" {
		return "", nil
	}
	list, err := s.Store.ListSessions(ctx, s.Scope, kv.SessionFilter{
		Harness: ev.Harness, ProjectNorm: normaliseProject(ev.Cwd), TopLevel: true, Status: kv.StatusActive, Limit: 1,
	})
	if err != nil || len(list) == 0 {
		return "", err
	}
	return list[0].ID, nil
}

// confirm makes the run toolUseID the one paired with sub-agent session childID, correcting a
// provisional pairing: a run wrongly holding the child gives it up (taking this run's previous
// child, if any, so that one is corrected in turn when its own confirmation arrives), and the
// child's parent, title and objective are taken from the right run.
func (s *Server) confirm(ctx context.Context, toolUseID, childID string) error {
	run, err := s.Store.GetRun(ctx, s.Scope, toolUseID)
	if errors.Is(err, kv.ErrNotFound) {
		return nil // a spawn heirloom never saw
	}
	if err != nil {
		return err
	}
	if run.ChildID == childID {
		if !run.Provisional {
			return nil
		}
		_, err := s.Store.UpdateRun(ctx, s.Scope, run.ID, func(r *kv.Run, _ bool) error {
			r.Provisional = false
			return nil
		})
		return err
	}
	child, err := s.Store.GetSession(ctx, s.Scope, childID)
	if errors.Is(err, kv.ErrNotFound) {
		return nil // the sub-agent never started as far as heirloom knows
	}
	if err != nil {
		return err
	}
	s.Logger.Debug("correcting sub-agent pairing", "child", childID, "spawn", toolUseID, "was", run.ChildID)
	wrong, err := s.Store.RunByChild(ctx, s.Scope, childID)
	hasWrong := err == nil
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return err
	}
	prevChild := run.ChildID
	// Release both pairings first: the store refuses two runs holding one child.
	if hasWrong {
		if _, err := s.Store.UpdateRun(ctx, s.Scope, wrong.ID, func(r *kv.Run, _ bool) error {
			r.ChildID, r.Status, r.StartedAt = "", kv.RunPending, time.Time{}
			return nil
		}); err != nil {
			return err
		}
	}
	run, err = s.Store.UpdateRun(ctx, s.Scope, run.ID, func(r *kv.Run, _ bool) error {
		r.ChildID, r.Provisional = childID, false
		if r.Status == kv.RunPending {
			r.Status, r.StartedAt = kv.RunRunning, child.CreatedAt
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.reparent(ctx, childID, &run); err != nil {
		return err
	}
	if hasWrong && prevChild != "" {
		wrong, err = s.Store.UpdateRun(ctx, s.Scope, wrong.ID, func(r *kv.Run, _ bool) error {
			r.ChildID, r.Provisional, r.Status = prevChild, true, kv.RunRunning
			return nil
		})
		if err != nil {
			return err
		}
		return s.reparent(ctx, prevChild, &wrong)
	}
	return nil
}

// reparent sets a sub-agent session's parent, depth, title and objective from its run.
func (s *Server) reparent(ctx context.Context, childID string, run *kv.Run) error {
	parent, err := s.Store.GetSession(ctx, s.Scope, run.ParentID)
	if err != nil {
		return fmt.Errorf("reparent %s: parent %s: %w", childID, run.ParentID, err)
	}
	_, err = s.Store.UpdateSession(ctx, s.Scope, childID, func(c *kv.Session, exists bool) error {
		if !exists {
			return errUnchanged
		}
		applyRun(c, parent, run)
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// subagentStop confirms the sub-agent's pairing from its metadata (which exists by now), reads
// its transcript, and records what it returned. The harness's compaction agent is not a
// sub-agent: only the session's own transcript is read.
func (s *Server) subagentStop(ctx context.Context, h harness, ev adapters.Event) error {
	if ev.IsCompaction() {
		return s.ingest(ctx, h.transcripts, ev.SessionID)
	}
	id := childID(ev.SessionID, ev.AgentID)
	if h.metas != nil && ev.AgentTranscriptPath != "" {
		if b, err := s.readSmallFile(h.metas.SubagentMetaPath(ev.AgentTranscriptPath)); err == nil {
			if meta, err := h.metas.ParseSubagentMeta(b); err == nil && meta.ToolUseID != "" {
				if err := s.confirm(ctx, meta.ToolUseID, id); err != nil {
					return fmt.Errorf("confirm sub-agent %s from its metadata: %w", id, err)
				}
			}
		}
	}
	_, err := s.Store.UpdateSession(ctx, s.Scope, id, func(c *kv.Session, exists bool) error {
		if !exists {
			return errUnchanged // started before heirloom was running
		}
		if ev.AgentTranscriptPath != "" {
			c.Transcript.Path = ev.AgentTranscriptPath
		}
		c.Status = kv.StatusEnded
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.ingest(ctx, h.transcripts, id); err != nil {
		return err
	}
	if ev.Result == nil {
		return nil
	}
	run, err := s.Store.RunByChild(ctx, s.Scope, id)
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.Store.UpdateRun(ctx, s.Scope, run.ID, func(r *kv.Run, _ bool) error {
		if r.Result == "" {
			r.Result = ev.Result.Text
		}
		if r.Status == kv.RunRunning {
			r.Status = kv.RunCompleted
		}
		if r.EndedAt.IsZero() {
			r.EndedAt = ev.At
		}
		return nil
	})
	return err
}

// spawnResult records what the spawning tool call returned, after confirming which sub-agent
// served it (tool_response.agentId ↔ tool_use_id).
func (s *Server) spawnResult(ctx context.Context, ev adapters.Event) error {
	if ev.Spawn == nil || ev.Spawn.ToolUseID == "" || ev.Result == nil {
		return nil
	}
	if ev.Result.AgentID != "" {
		if err := s.confirm(ctx, ev.Spawn.ToolUseID, childID(ev.SessionID, ev.Result.AgentID)); err != nil {
			return fmt.Errorf("confirm spawn %s: %w", ev.Spawn.ToolUseID, err)
		}
	}
	_, err := s.Store.UpdateRun(ctx, s.Scope, ev.Spawn.ToolUseID, func(r *kv.Run, exists bool) error {
		if !exists {
			r.Harness, r.RootID, r.ParentID = ev.Harness, ev.SessionID, issuerID(ev)
			r.Description, r.Prompt, r.Type = ev.Spawn.Description, ev.Spawn.Prompt, ev.Spawn.Type
			r.CreatedAt = ev.At
		}
		r.Status = ev.Result.Status
		if r.Status == "" {
			r.Status = kv.RunCompleted
		}
		if ev.Result.Text != "" {
			r.Result = ev.Result.Text
		}
		r.Tokens, r.DurationMs, r.EndedAt = ev.Result.Tokens, ev.Result.DurationMs, ev.At
		return nil
	})
	if err != nil {
		return fmt.Errorf("record result of spawn %s: %w", ev.Spawn.ToolUseID, err)
	}
	return nil
}
