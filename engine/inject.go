package engine

import (
	"context"
	"errors"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// InjectRequest is a plugin asking what to add to a session's next model call (OpenCode's
// experimental.chat.system.transform, OpenClaw's before_prompt_build).
type InjectRequest struct {
	Harness string // the harness asking; its plugin's session keys may name their scope
	Session string // the session whose model call it is; required
	// Parent, when set, is the session's parent as the plugin knows it; it wins over the parent
	// the stream reported, so a plugin that knows cannot lose a race with the stream.
	Parent string
	// Scope is the memory scope to look the session up in; "" means the one its key names, else
	// the configured one.
	Scope string
	// Directory is the session's project as the plugin knows it, recorded when heirloom knows
	// the session without one.
	Directory string
	// Compacting asks for what a compaction summary must keep, instead of the model call's
	// context; a pre-compaction checkpoint is written first.
	Compacting bool
}

// Inject answers req: for a sub-agent session the inherited block, on every call (it is system
// context, not history); for a top-level session the objective reinforcement on every call once
// it was compacted, and on its first call the checkpoint recovered from its project; with
// Compacting, the objective for the summary. "" when there is nothing to add.
//
// It takes the session's lock, as stream consumption does, since it may write: the session's
// directory, its first-call mark, a pre-compaction checkpoint. When a harness's key names a
// sub-agent whose parent is not known yet (the Gateway's event may still be on its way), the
// harness is asked first, within Config.DescribeWait; past that the answer comes from what is
// stored.
func (e *Engine) Inject(ctx context.Context, req InjectRequest) (text string, err error) {
	defer e.first.enter()()
	e.heard.note(req.Harness, e.Now())
	reg := e.harness(req.Harness)
	scope := req.Scope
	if scope == "" && reg.Plugin != nil {
		scope = reg.Plugin.ScopeOf(req.Session)
	}
	if scope == "" {
		scope = e.Scope
	}
	var note delivery
	defer func() {
		if err == nil {
			via := "inject"
			if req.Compacting {
				via = "inject:compacting"
			}
			e.blocksInjected(scope, req.Session, text, via, req.Harness, note)
		}
	}()
	subagent := reg.Plugin != nil && reg.Plugin.IsSubagent(req.Session)
	parentID := req.Parent
	// Asked before the lock: what the harness says is consumed under its sessions' locks.
	switch {
	case req.Compacting:
	case parentID == "" && subagent:
		parentID = e.describeParentIfUnknown(ctx, req.Harness, scope, req.Session)
	case reg.Plugin == nil:
		// A harness whose keys do not tell a sub-agent (OpenCode): a model call that beat the
		// stream's report of its session, or of its parent, has them described first.
		if p := e.describeIfUnknown(ctx, req.Harness, scope, req.Session, parentID); parentID == "" {
			parentID = p
		}
	}

	unlock := e.locks.lock(lockKey(scope, req.Session))
	defer unlock()
	sess, err := e.Store.GetSession(ctx, scope, req.Session)
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return "", err
	}
	known := err == nil
	if req.Directory != "" && known && sess.Project == "" {
		// The plugin knows the session's directory when the harness's events do not say it
		// (OpenClaw's rows of top-level sessions never do): record it, so checkpoints carry the
		// project and a new session can recover the project's latest one on this very call. A
		// session heirloom has not heard of is not created here: whether it is a sub-agent is
		// not known yet.
		ev := adapters.Event{Harness: sess.Harness, Scope: scope, SessionID: req.Session, Cwd: req.Directory, At: e.Now()}
		if sess, err = e.ensureSession(ctx, ev, func(*kv.Session) {}); err != nil {
			return "", err
		}
	}
	if req.Compacting {
		return e.compactingContext(ctx, scope, sess, known)
	}
	if parentID == "" {
		parentID = sess.ParentID
	}
	if parentID == "" && known && !subagent {
		return e.topLevelInject(ctx, sess)
	}
	// The parent lives in the scope its key names; another one for an OpenClaw spawn under
	// another agent id, whose context crosses only where that scope allows it.
	pscope := e.keyScope(req.Harness, parentID, scope)
	if parentID == sess.ParentID && sess.ParentScope != "" {
		pscope = sess.ParentScope
	}
	if parentID == "" || parentID == req.Session && pscope == scope || e.Config.Passive || !e.mayInherit(pscope, scope) {
		return "", nil
	}
	note = delivery{parent: parentID, parentScope: otherScope(pscope, scope)}
	view, err := e.parentView(ctx, pscope, parentID)
	if errors.Is(err, kv.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	child := sess // zero when heirloom does not know the session yet
	if child.Depth == 0 {
		child.Depth = view.Session.Depth + 1
	}
	return e.inheritedBlock(ctx, view.Session, view.Facts, e.tailWindow().Cut(view.Tail), view.Checkpoint, child), nil
}

// compactingContext writes a pre-compaction checkpoint of a known session and returns its
// objective for the compaction summary to keep.
func (e *Engine) compactingContext(ctx context.Context, scope string, sess kv.Session, known bool) (string, error) {
	if !known {
		return "", nil
	}
	if err := e.preCompactionCheckpoint(ctx, scope, sess.ID, "", nil); err != nil {
		e.warn("pre-compaction checkpoint not written", err, "session", sess.ID)
	}
	if sess.Objective == "" || e.Config.Passive {
		return "", nil
	}
	text := "Objective of this session (keep it in the summary): " + inject.Redact(sess.Objective)
	return inject.Head(text, e.Config.MaxContextChars), nil
}

// topLevelInject is the context of a top-level session's model call: the objective
// reinforcement on every call once the session was compacted (the plugin harnesses have no
// history slot, so it must be repeated), and on the session's first call the checkpoint
// recovered from its project.
func (e *Engine) topLevelInject(ctx context.Context, sess kv.Session) (string, error) {
	var objective, recovered string
	var err error
	if sess.Compactions > 0 {
		if objective, err = e.reinforcement(ctx, sess); err != nil {
			return "", err
		}
	}
	if !sess.FirstInjectDone {
		_, err := e.Store.UpdateSession(ctx, sess.Scope, sess.ID, func(sess *kv.Session, exists bool) error {
			if !exists || sess.FirstInjectDone {
				return errUnchanged
			}
			sess.FirstInjectDone = true
			return nil
		})
		if errors.Is(err, errUnchanged) {
			return inject.Join(e.Config.MaxContextChars, objective), nil
		}
		if err != nil {
			return "", err
		}
		if recovered, err = e.recovered(ctx, sess, false); err != nil {
			return "", err
		}
	}
	return inject.Join(e.Config.MaxContextChars, objective, recovered), nil
}

// describeParentIfUnknown returns the parent of sub-agent session id when it has to ask the
// harness for it: the session is not stored with a parent yet. It asks within
// Config.DescribeWait and stores what it learns; "" when the parent is already known (the
// caller reads it), or when there is no describer, it is not connected, too slow, or says no
// parent.
func (e *Engine) describeParentIfUnknown(ctx context.Context, harness, scope, id string) string {
	d := e.Describers[harness]
	if d == nil || e.Config.DescribeWait <= 0 {
		return ""
	}
	if sess, err := e.Store.GetSession(ctx, scope, id); err == nil && sess.ParentID != "" {
		return ""
	}
	return e.describe(ctx, d, scope, id)
}

// describe asks d about session id within Config.DescribeWait, stores what it says, and returns
// the session's parent as stored then; "" when d fails or the session is still not stored.
func (e *Engine) describe(ctx context.Context, d adapters.Describer, scope, id string) string {
	dctx, cancel := context.WithTimeout(ctx, e.Config.DescribeWait)
	defer cancel()
	evs, err := d.Describe(dctx, id)
	if err != nil {
		e.Logger.Debug("describe failed; answering from what is stored", "session", id, "error", err)
		return ""
	}
	for _, ev := range evs {
		// Stored as streamed (unsynced), without yielding to the calls in flight: this is one.
		if err := e.consume(kv.Unsynced(ctx), ev); err != nil {
			e.warn("describe: event not stored", err, "session", ev.SessionID)
		}
	}
	sess, err := e.Store.GetSession(ctx, scope, id)
	if err != nil {
		if !errors.Is(err, kv.ErrNotFound) {
			e.Logger.Warn("describe: session not read back", "session", id, "error", err)
		}
		return ""
	}
	return sess.ParentID
}

// describeIfUnknown asks the harness, within Config.DescribeWait, about session id when heirloom
// does not know it (the stream has not reported it yet, so it is behind: the parent's latest
// turns, the spawning one among them, are likely not stored either, and the description brings
// them), or when it knows it but not its parent (parent, when the plugin named one, else the
// session's own ParentID); it stores what it learns. It returns the session's parent as stored
// then; "" when there is no describer, nothing was unknown, or the harness could not say.
func (e *Engine) describeIfUnknown(ctx context.Context, harness, scope, id, parent string) string {
	d := e.Describers[harness]
	if d == nil || e.Config.DescribeWait <= 0 {
		return ""
	}
	sess, err := e.Store.GetSession(ctx, scope, id)
	if err == nil {
		if parent == "" {
			parent = sess.ParentID
		}
		if parent == "" {
			return "" // a known top-level session
		}
		if _, err := e.Store.GetSession(ctx, scope, parent); err == nil {
			return "" // both known: the stream reported them
		}
	}
	return e.describe(ctx, d, scope, id)
}
