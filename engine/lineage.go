package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// Lineage of a harness that calls hooks (Claude Code). Its sub-agents fire no session events of
// their own: a spawn is a PreToolUse of the spawning tool, the sub-agent's start a SubagentStart
// naming the top-level session and the sub-agent's id, and which spawn a sub-agent serves is
// told only later (its metadata file, the spawn's result). So a starting sub-agent is paired
// with a pending spawn by type and order, provisionally when that is a guess, and the pairing
// is confirmed or corrected when the harness says. Every pairing, and every correction, is one
// store transaction.

// errUnchanged aborts a single-record update that has nothing to write. Never return it from
// inside a multi-record transaction: it would abort the whole transaction.
var errUnchanged = errors.New("unchanged")

// spawn decides a spawn the session asked for against the spawn limits and records its run
// (see hookSpawn): refused, it answers with the refusal and reads nothing more, since no
// sub-agent will start. Allowed, the run is pending; spawn reads the issuer's transcript so the
// child inherits everything up to the spawn, and writes the issuer's spawn checkpoint in the
// background (the digest the child inherits). Repeats get the same answer. root is the
// top-level session, as touchSession wrote it.
func (e *Engine) spawn(ctx context.Context, h adapters.Registration, ev adapters.Event, root kv.Session) (adapters.Answer, error) {
	if ev.Spawn == nil || ev.Spawn.ToolUseID == "" {
		return adapters.Answer{}, nil
	}
	d, err := e.hookSpawn(ctx, ev, root)
	if err != nil {
		return adapters.Answer{}, fmt.Errorf("decide spawn %s: %w", ev.Spawn.ToolUseID, err)
	}
	if !d.Allow {
		return adapters.Answer{Deny: SpawnRefusal(d.Reason)}, nil
	}
	issuer := issuerID(ev)
	var in ingested
	if issuer == root.ID {
		in, err = e.ingest(ctx, h, root, root.ID)
	} else {
		in, err = e.ingestID(ctx, h, issuer, root.ID)
	}
	if err != nil {
		return adapters.Answer{}, err
	}
	if in.Session.ID != "" && !in.Behind {
		e.spawnCheckpoint(in.Session)
	}
	return adapters.Answer{}, nil
}

// subagentStart records a starting sub-agent, pairs it with the spawn that asked for it, and
// returns the inherited block for it.
//
// The parent is read from the payload, never guessed when the payload names it: the sub-agent
// belongs to session_id, and its issuer is the pending spawn it pairs with — among that
// session's unpaired spawns whose type equals the sub-agent's, the oldest. When those candidates
// all share one issuer the parent is exact; otherwise the pairing is provisional until the
// sub-agent's metadata or the spawn's result confirms or corrects it.
//
// A SubagentStart naming a top-level session heirloom never saw records the session and the
// sub-agent only when the session's transcript shows the harness runs it (see admitSession):
// heirloom started while the session was running. A stray call records nothing.
//
// The parent is read once, from one snapshot: its session, its newest turns and its latest
// checkpoint (kv.View); the turns the reply's transcript read appends are added to that window.
func (e *Engine) subagentStart(ctx context.Context, h adapters.Registration, ev adapters.Event, note *delivery) (string, error) {
	inferred := false
	if ev.SessionID == "" {
		root, err := e.inferRoot(ctx, ev)
		if err != nil || root == "" {
			return "", err
		}
		ev.SessionID, inferred = root, true
	}
	unlock := e.locks.lock(lockKey(e.Scope, ev.SessionID))
	defer unlock()
	root, ok, err := e.admitSession(ctx, h, ev)
	if err != nil || !ok {
		return "", err // a parent heirloom never saw, and no transcript shows it runs: no rows
	}
	id := childID(ev.SessionID, ev.AgentID)
	note.session = id
	if child, err := e.Store.GetSession(ctx, e.Scope, id); err == nil && child.ParentID != "" {
		// A repeated SubagentStart: the same answer.
		view, err := e.parentView(ctx, e.Scope, child.ParentID)
		if errors.Is(err, kv.ErrNotFound) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		note.parent = child.ParentID
		if r, err := e.Store.RunByChild(ctx, e.Scope, id); err == nil && r.Provisional {
			child, note.provisional = guessedTask(child), true
		}
		return e.inherit(ctx, h, view, root.ID, child)
	}

	var run *kv.Run
	var provisional bool
	if h.SpawnReceipts {
		run, provisional, err = e.receiptRun(ctx, id)
	}
	named := ""
	if err == nil && run == nil {
		// No receipt: the parent the harness records beside the sub-agent narrows the guess.
		// (With one, that read is not needed: the receipt's run names the parent.)
		named = e.namedParent(h, ev)
		run, provisional, err = e.pickSpawn(ctx, ev, named)
	}
	if err != nil {
		return "", err
	}
	parentID := ev.SessionID
	switch {
	case run != nil:
		parentID = run.ParentID
	case named != "":
		parentID = named
	}
	view, err := e.parentView(ctx, e.Scope, parentID)
	if errors.Is(err, kv.ErrNotFound) && parentID != ev.SessionID {
		// A parent the harness names that heirloom never stored (it started mid-session):
		// the sub-agent is filed under its top-level session, marked as a guess.
		e.Logger.Debug("sub-agent's parent not stored: filed under its top-level session", "agent", id, "parent", parentID)
		parentID, inferred = ev.SessionID, true
		view, err = e.parentView(ctx, e.Scope, parentID)
	}
	if err != nil {
		return "", fmt.Errorf("sub-agent %s: parent %s: %w", id, parentID, err)
	}
	transcript := ev.AgentTranscriptPath
	if transcript == "" && h.SubagentMetas != nil {
		transcript = h.SubagentMetas.SubagentTranscriptPath(root.Transcript.Path, ev.AgentID)
	}
	var child kv.Session
	err = e.Store.Update(ctx, func(tx *kv.Tx) error {
		var err error
		child, err = tx.UpdateSession(e.Scope, id, func(c *kv.Session, exists bool) error {
			if !exists {
				c.CreatedAt = ev.At
			}
			c.Harness = ev.Harness
			c.NativeID = ev.AgentID
			c.AgentType = ev.AgentType
			c.ParentInferred = inferred
			c.Status = kv.StatusActive
			c.Project, c.ProjectNorm = view.Session.Project, view.Session.ProjectNorm
			if ev.Cwd != "" {
				c.Project, c.ProjectNorm = ev.Cwd, normaliseProject(ev.Cwd)
			}
			if c.Transcript.Path == "" {
				c.Transcript.Path = transcript
			}
			applyRun(c, view.Session, run)
			return nil
		})
		if err != nil || run == nil {
			return err
		}
		_, err = tx.UpdateRun(e.Scope, run.ID, func(r *kv.Run, _ bool) error {
			r.ChildID = id
			r.Provisional = provisional
			r.Status = kv.RunRunning
			r.StartedAt = ev.At
			return nil
		})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("pair sub-agent %s: %w", id, err)
	}
	if run != nil {
		e.awaitSpawnRecord(ctx, view.Session, run.ID)
	}
	note.parent, note.provisional = parentID, provisional
	if provisional {
		child = guessedTask(child)
	}
	return e.inherit(ctx, h, view, root.ID, child)
}

// parentView reads a parent for its child's inherited block (see kv.View): it first waits,
// at most Config.SpawnRecordWait, for a checkpoint of the parent being written (the spawn
// checkpoint), so the child inherits the digest of the parent as it spawned.
func (e *Engine) parentView(ctx context.Context, scope, parentID string) (kv.View, error) {
	if e.Config.SpawnRecordWait > 0 {
		e.checkpoints.wait(ctx, lockKey(scope, parentID), e.Config.SpawnRecordWait)
	}
	return e.Store.View(ctx, scope, parentID, kv.ViewOptions{Tail: e.tailWindow(), Checkpoint: true, Facts: true})
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

// namedParent returns heirloom's id of the session that spawned the sub-agent ev starts, when
// the harness names it exactly beside the sub-agent's own transcript (Codex: the session_meta
// opening the sub-agent's rollout, which exists when SubagentStart fires, names its parent
// thread at every depth); "" when it names none, or the record cannot be read or is about
// another sub-agent.
func (e *Engine) namedParent(h adapters.Registration, ev adapters.Event) string {
	if h.SubagentMetas == nil || ev.AgentTranscriptPath == "" {
		return ""
	}
	b, err := e.readFirstLine(h.SubagentMetas.SubagentMetaPath(ev.AgentTranscriptPath))
	if err != nil {
		e.Logger.Debug("sub-agent metadata not read at its start", "agent", ev.AgentID, "error", err)
		return ""
	}
	meta, err := h.SubagentMetas.ParseSubagentMeta(b)
	if err != nil || meta.ParentID == "" || meta.ThreadID != "" && meta.ThreadID != ev.AgentID {
		return ""
	}
	if meta.ParentID == ev.SessionID {
		return ev.SessionID
	}
	return childID(ev.SessionID, meta.ParentID)
}

// receiptRun returns the run whose spawn's receipt named sub-agent session id before it
// started (see spawnResult), when that run still waits for it or holds a sub-agent paired by a
// guess: that pairing is exact. It returns nil when no receipt named the sub-agent.
func (e *Engine) receiptRun(ctx context.Context, id string) (*kv.Run, bool, error) {
	runID := e.receipts.take(lockKey(e.Scope, id), e.Now())
	if runID == "" {
		return nil, false, nil
	}
	r, err := e.Store.GetRun(ctx, e.Scope, runID)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !(r.Status == kv.RunPending || r.Status == kv.RunRunning && r.Provisional) {
		return nil, false, nil // refused, ended, or serving another sub-agent for sure
	}
	return &r, false, nil
}

// pickSpawn chooses the pending spawn a starting sub-agent pairs with (DESIGN §1): the oldest
// unpaired spawn of the session with the sub-agent's type, and issued by parent when the
// harness named the parent ("" when it did not). provisional says the choice was among
// several candidates, or is the last one left after an earlier guess of the same type, so the
// parent (different issuers) or the task (same issuer) may be wrong. It returns nil when no
// spawn matches. The cost is one step per pending and per provisionally paired run of the
// session, whatever else the scope holds.
func (e *Engine) pickSpawn(ctx context.Context, ev adapters.Event, parent string) (run *kv.Run, provisional bool, err error) {
	pending, err := e.Store.PendingRuns(ctx, e.Scope, ev.SessionID)
	if err != nil {
		return nil, false, err
	}
	var candidates []kv.Run
	for _, r := range pending {
		if r.Type == ev.AgentType && (parent == "" || r.ParentID == parent) {
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
	guessed, err := e.Store.ProvisionalRuns(ctx, e.Scope, ev.SessionID)
	if err != nil {
		return nil, false, err
	}
	for _, r := range guessed {
		if r.Status == kv.RunRunning && r.Type == ev.AgentType {
			return &candidates[0], true, nil
		}
	}
	return &candidates[0], false, nil
}

// inferRoot finds the parent of a sub-agent whose payload names none (older harness versions):
// the most recently active top-level session of the same harness and project. The guess is
// recorded on the child as ParentInferred.
func (e *Engine) inferRoot(ctx context.Context, ev adapters.Event) (string, error) {
	if ev.Cwd == "" {
		return "", nil
	}
	list, err := e.Store.ListSessions(ctx, e.Scope, kv.SessionFilter{
		Harness: ev.Harness, ProjectNorm: normaliseProject(ev.Cwd), TopLevel: true, Status: kv.StatusActive, Limit: 1,
	})
	if err != nil || len(list) == 0 {
		return "", err
	}
	return list[0].ID, nil
}

// confirm makes, inside tx, the run toolUseID the one paired with sub-agent session childID,
// correcting a provisional pairing: a run wrongly holding the child gives it up (taking this
// run's previous child, if any, so that one is corrected in turn when its own confirmation
// arrives), and the children's parents, titles and objectives are taken from their runs. A
// refused run whose sub-agent ran after all (the refusal never reached the harness) is no longer
// refused: it runs (see unrefuse). A spawn or a sub-agent heirloom never saw is no error:
// nothing changes.
func (e *Engine) confirm(tx *kv.Tx, toolUseID, childID string) error {
	run, err := tx.GetRun(e.Scope, toolUseID)
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if run.ChildID == childID {
		if !run.Provisional {
			return nil
		}
		_, err := tx.UpdateRun(e.Scope, run.ID, func(r *kv.Run, _ bool) error {
			r.Provisional = false
			return nil
		})
		return err
	}
	child, err := tx.GetSession(e.Scope, childID)
	if errors.Is(err, kv.ErrNotFound) {
		return nil // the sub-agent never started as far as heirloom knows
	}
	if err != nil {
		return err
	}
	e.Logger.Debug("correcting sub-agent pairing", "child", childID, "spawn", toolUseID, "was", run.ChildID)
	wrong, err := tx.RunByChild(e.Scope, childID)
	hasWrong := err == nil
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return err
	}
	prevChild := run.ChildID
	// Release the child first: a child is paired with one run at most.
	if hasWrong {
		if _, err := tx.UpdateRun(e.Scope, wrong.ID, func(r *kv.Run, _ bool) error {
			r.ChildID, r.Status, r.StartedAt = "", kv.RunPending, time.Time{}
			return nil
		}); err != nil {
			return err
		}
	}
	run, err = tx.UpdateRun(e.Scope, run.ID, func(r *kv.Run, _ bool) error {
		unrefuse(r) // refused, yet its sub-agent ran: the refusal never reached the harness
		r.ChildID, r.Provisional = childID, false
		if r.Status == kv.RunPending {
			r.Status, r.StartedAt = kv.RunRunning, child.CreatedAt
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := e.reparent(tx, childID, run); err != nil {
		return err
	}
	if hasWrong && prevChild != "" {
		wrong, err = tx.UpdateRun(e.Scope, wrong.ID, func(r *kv.Run, _ bool) error {
			r.ChildID, r.Provisional, r.Status = prevChild, true, kv.RunRunning
			return nil
		})
		if err != nil {
			return err
		}
		return e.reparent(tx, prevChild, wrong)
	}
	return nil
}

// reparent sets, inside tx, a sub-agent session's parent, depth, title and objective from its
// run. A child not stored is left alone.
func (e *Engine) reparent(tx *kv.Tx, childID string, run kv.Run) error {
	if _, err := tx.GetSession(e.Scope, childID); errors.Is(err, kv.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	parent, err := tx.GetSession(e.Scope, run.ParentID)
	if err != nil {
		return fmt.Errorf("reparent %s: parent %s: %w", childID, run.ParentID, err)
	}
	_, err = tx.UpdateSession(e.Scope, childID, func(c *kv.Session, _ bool) error {
		applyRun(c, parent, &run)
		return nil
	})
	return err
}

// subagentStop confirms the sub-agent's pairing from its metadata (which exists by now), ends
// the sub-agent and records what it returned, in one transaction, and reads its transcript. The
// harness's compaction agent is not a sub-agent: only the session's own transcript is read.
func (e *Engine) subagentStop(ctx context.Context, h adapters.Registration, ev adapters.Event, root kv.Session) error {
	if ev.IsCompaction() {
		_, err := e.ingest(ctx, h, root, root.ID)
		return err
	}
	id := childID(ev.SessionID, ev.AgentID)
	var spawn string
	// A harness with spawn receipts (Codex) confirmed the pairing at the receipt, and its
	// metadata names no spawn.
	if h.SubagentMetas != nil && ev.AgentTranscriptPath != "" && !h.SpawnReceipts {
		if b, err := e.readSmallFile(h.SubagentMetas.SubagentMetaPath(ev.AgentTranscriptPath)); err == nil {
			if meta, err := h.SubagentMetas.ParseSubagentMeta(b); err == nil {
				spawn = meta.ToolUseID
			}
		}
	}
	known := false
	var stopped kv.Run // the sub-agent's run, as its end left it
	err := e.Store.Update(ctx, func(tx *kv.Tx) error {
		if spawn != "" {
			if err := e.confirm(tx, spawn, id); err != nil {
				return fmt.Errorf("confirm sub-agent %s from its metadata: %w", id, err)
			}
		}
		child, err := tx.GetSession(e.Scope, id)
		if errors.Is(err, kv.ErrNotFound) {
			return nil // started before heirloom was running
		} else if err != nil {
			return err
		}
		known = true
		if _, err := tx.UpdateSession(e.Scope, id, func(c *kv.Session, _ bool) error {
			if ev.AgentTranscriptPath != "" {
				c.Transcript.Path = ev.AgentTranscriptPath
			}
			c.Status = kv.StatusEnded
			return nil
		}); err != nil {
			return err
		}
		if ev.Result == nil {
			return nil
		}
		run, err := tx.RunByChild(e.Scope, id)
		if errors.Is(err, kv.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		stopped, err = tx.UpdateRun(e.Scope, run.ID, func(r *kv.Run, _ bool) error {
			if r.Result == "" || sweptEnd(r) {
				r.Result = ev.Result.Text
			}
			if endable(r) { // the spawn's result, when it comes, says how it went
				finishRun(r, kv.RunCompleted, ev.At)
			}
			r.Turns = turnsOf(r, 0, child.TurnCount)
			return nil
		})
		return err
	})
	if err != nil || !known {
		return err
	}
	_, err = e.ingestID(ctx, h, id, root.ID)
	if stopped.ID != "" && (stopped.Turns == 0 || h.SpawnReceipts) && !stopped.Open() {
		e.settleTurns(h, stopped.ID, id, root.ID)
	}
	return err
}

// spawnResult records what the spawning tool call returned, after confirming which sub-agent
// served it (tool_response.agentId ↔ tool_use_id), in one transaction: its status and end
// reason, result, tokens, duration and turns. A refused spawn's result is recorded only when it
// shows a sub-agent ran (see wentAhead): the harness never received the refusal.
func (e *Engine) spawnResult(ctx context.Context, h adapters.Registration, ev adapters.Event) error {
	if ev.Spawn == nil || ev.Spawn.ToolUseID == "" || ev.Result == nil {
		return nil
	}
	// The sub-agent's transcript is whole once its tool returned (at its SubagentStop Claude
	// Code may not have written it all): read what is new, so the run's turns are the
	// sub-agent's when the harness gives no step count.
	if ev.Result.AgentID != "" && ev.Result.Steps == 0 && !launched(ev.Result.Status) {
		if _, err := e.ingestID(ctx, h, childID(ev.SessionID, ev.Result.AgentID), ev.SessionID); err != nil {
			e.Logger.Debug("sub-agent transcript not read at its spawn's result", "agent", ev.Result.AgentID, "error", err)
		}
	}
	var run kv.Run
	receipt := h.SpawnReceipts && launched(ev.Result.Status) && ev.Result.AgentID != ""
	child := childID(ev.SessionID, ev.Result.AgentID)
	created, started := false, false
	err := e.Store.Update(ctx, func(tx *kv.Tx) error {
		if ev.Result.AgentID != "" {
			if err := e.confirm(tx, ev.Spawn.ToolUseID, child); err != nil {
				return fmt.Errorf("confirm spawn %s: %w", ev.Spawn.ToolUseID, err)
			}
		}
		if receipt {
			_, err := tx.GetSession(e.Scope, child)
			if err != nil && !errors.Is(err, kv.ErrNotFound) {
				return err
			}
			started = err == nil
		}
		var err error
		run, err = tx.UpdateRun(e.Scope, ev.Spawn.ToolUseID, func(r *kv.Run, exists bool) error {
			created = !exists
			if !exists {
				r.Harness, r.RootID, r.ParentID = ev.Harness, ev.SessionID, issuerID(ev)
				r.Description, r.Prompt, r.Type = ev.Spawn.Description, ev.Spawn.Prompt, ev.Spawn.Type
				r.CreatedAt, r.Status = ev.At, kv.RunPending
			}
			if r.Status == kv.RunRefused && wentAhead(ev.Result) {
				unrefuse(r) // its sub-agent ran: the refusal never reached the harness
			}
			if r.Status == kv.RunRefused || launched(ev.Result.Status) || r.Swept {
				return nil // refused: no sub-agent ran; launched: it runs on, its SubagentStop ends it
			}
			finishRun(r, ev.Result.Status, ev.At)
			if ev.Result.Text != "" {
				r.Result = ev.Result.Text
			}
			r.Tokens, r.DurationMs = ev.Result.Tokens, ev.Result.DurationMs
			var turns uint64
			if r.ChildID != "" && ev.Result.Steps == 0 {
				if c, err := tx.GetSession(e.Scope, r.ChildID); err == nil {
					turns = c.TurnCount
				}
			}
			r.Turns = turnsOf(r, ev.Result.Steps, turns)
			return nil
		})
		if err != nil || !receipt || !created || !started {
			return err
		}
		// A receipt for a spawn heirloom never saw, of a sub-agent that started already:
		// the run it just recorded is that sub-agent's.
		return e.confirm(tx, ev.Spawn.ToolUseID, child)
	})
	if err == nil && receipt && !started {
		// The sub-agent has not started: its SubagentStart takes this run (receiptRun).
		e.receipts.put(lockKey(e.Scope, child), ev.Spawn.ToolUseID, e.Now())
	}
	if err != nil {
		return fmt.Errorf("record result of spawn %s: %w", ev.Spawn.ToolUseID, err)
	}
	if run.Turns == 0 && run.ChildID != "" && !run.Open() {
		e.settleTurns(h, run.ID, run.ChildID, ev.SessionID)
	}
	return nil
}
