package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// Spawn limits (Config.Spawn, spawn.*): one decision for every harness. A harness asks before it
// starts a sub-agent (Claude Code's PreToolUse of the Agent tool, the OpenCode plugin's
// tool.execute.before of task, the OpenClaw plugin's before_tool_call of sessions_spawn) and
// only translates the answer: a refusal becomes the spawning tool call's error, which the model
// reads.
//
// The decision is made under the lock every spawn of the parent takes (Claude Code: its
// top-level session's; the plugins: the parent session's), and the spawn's run is recorded in
// the same step: pending when allowed, so it counts against the parent's next spawn at once;
// kv.RunRefused when refused, which never pairs with a sub-agent and never counts as active,
// unless the refusal never reached the harness and it spawned anyway (see unrefuse). A harness
// whose events name runs by the child holds a reservation instead of a pending run (reserve.go).
// In observe mode a spawn past a limit is recorded pending with the reason a refusal would have
// given (Run.Reason) and goes ahead; the live feed reports it as spawn.refused with enforced
// false (see observeRun).

// SpawnDecision is the answer to a spawn.
type SpawnDecision struct {
	// Allow says the spawn may go ahead; in observe mode it is always true.
	Allow bool
	// Reason names the limit the spawn hits, for the model to read: "depth 2 exceeds
	// spawn.max_depth 1", "parent already has 1 active sub-agents (spawn.max_children 1)". ""
	// when the spawn is within the limits; in observe mode, what enforce would have refused.
	Reason string
	// Depth is the would-be sub-agent's depth (its parent's plus one); 0 when the parent is
	// not known.
	Depth int
	// Limit is the limit Reason names: LimitMaxDepth or LimitMaxChildren; "" with no reason.
	Limit string
}

// SpawnRequest is a harness's plugin asking before a spawn (POST /api/spawn-check).
type SpawnRequest struct {
	Harness string // the harness asking; its plugin's session keys may name their scope
	// Scope is the memory scope; "" means the one the session's key names, else the
	// configured one.
	Scope string
	// Session is the session asking for a sub-agent: the would-be parent. "" is allowed
	// without a look.
	Session string
	// Parent is Session's own parent as the plugin knows it: when heirloom has not heard of
	// Session yet (the harness's event may still be on its way), Session's depth is Parent's
	// plus one.
	Parent string
	// CallID is the spawning tool call's id, which becomes the run's id; "" decides without
	// recording a run.
	CallID      string
	Description string // the short description the spawn gives
	Prompt      string // its task prompt
	Type        string // the sub-agent type asked for
}

// SpawnRefusal is the text the model reads as a refused spawn's tool error: what every
// harness shows, so a model learns one phrase. Claude Code gets it in the hook's deny; the
// plugins get it in /api/spawn-check's reply (message) and show it as given.
func SpawnRefusal(reason string) string { return "heirloom refused this sub-agent: " + reason }

// SpawnCheck decides a spawn a plugin asks about (OpenCode's task, OpenClaw's sessions_spawn)
// and, when req names the call, records its run: pending, or refused. A harness whose events
// name runs by the child session (adapters.Registration.RunsByChild: OpenClaw) gets only a
// refusal recorded; its allowed spawn holds a reservation (reserve.go) until its events report
// the child's run, and a spawn observe mode lets through is reported on the live feed alone. It
// runs under the parent session's lock, the one the harness's stream records that session's
// spawns under, and under the engine's own context, so the record is written whole even when
// the plugin stops waiting.
// A sub-agent whose parent is not known yet is first asked about, as Inject asks (within
// Config.DescribeWait). A session heirloom does not know, nor its Parent, is allowed and
// nothing is recorded: the harness's stream records the spawn when it sees it. A refusal the
// plugin stopped waiting for before it was decided was never delivered: the call ran, and the
// run is recorded so (see refusalLost).
func (e *Engine) SpawnCheck(ctx context.Context, req SpawnRequest) (SpawnDecision, error) {
	defer e.first.enter()()
	e.heard.note(req.Harness, e.Now())
	if req.Session == "" {
		return SpawnDecision{Allow: true}, nil
	}
	scope := req.Scope
	reg := e.harness(req.Harness)
	if scope == "" && reg.Plugin != nil {
		scope = reg.Plugin.ScopeOf(req.Session)
	}
	if scope == "" {
		scope = e.Scope
	}
	late := func(ctx context.Context, d SpawnDecision, err error) {
		if err == nil && !d.Allow && req.CallID != "" {
			// The plugin stopped waiting and let the call run: the refusal was not delivered.
			e.refusalLost(ctx, reg, scope, req.Session, req.CallID)
		}
	}
	return detachLate(ctx, e, func(ctx context.Context) (SpawnDecision, error) {
		if req.Parent == "" && reg.Plugin != nil && reg.Plugin.IsSubagent(req.Session) {
			// A sub-agent whose parent the harness's events have not told yet: asked as Inject
			// asks, before the lock (what the harness says is consumed under its sessions' locks).
			req.Parent = e.describeParentIfUnknown(ctx, req.Harness, scope, req.Session)
		}
		unlock := e.locks.lock(lockKey(scope, req.Session))
		defer unlock()
		parent, err := e.Store.GetSession(ctx, scope, req.Session)
		if errors.Is(err, kv.ErrNotFound) && req.Parent != "" && req.Parent != req.Session {
			var grand kv.Session
			// The parent's own parent may live in another scope (a spawn under another agent id).
			gscope := e.keyScope(req.Harness, req.Parent, scope)
			if grand, err = e.Store.GetSession(ctx, gscope, req.Parent); err == nil {
				parent = kv.Session{Scope: scope, ID: req.Session, ParentID: grand.ID, ParentScope: otherScope(gscope, scope), Depth: grand.Depth + 1}
			}
		}
		if errors.Is(err, kv.ErrNotFound) {
			return SpawnDecision{Allow: true}, nil
		}
		if err != nil {
			return SpawnDecision{}, err
		}
		root, err := e.rootOf(ctx, scope, parent)
		if err != nil {
			return SpawnDecision{}, err
		}
		return e.decideSpawn(ctx, spawnCall{
			scope: scope, harness: req.Harness, root: root, parent: parent, known: true, id: req.CallID,
			spawn:       adapters.Spawn{ToolUseID: req.CallID, Description: req.Description, Prompt: req.Prompt, Type: req.Type},
			refusedOnly: reg.RunsByChild,
		})
	}, late)
}

// hookSpawn decides the spawn a hook reports (Claude Code's PreToolUse of the Agent tool) and
// records its run. The caller holds the lock of root, the top-level session, which every spawn
// of its tree takes. An issuing sub-agent heirloom does not know (it started before heirloom
// ran) has no known depth: only spawn.max_children applies to it, counting the runs recorded
// under its id.
func (e *Engine) hookSpawn(ctx context.Context, ev adapters.Event, root kv.Session) (SpawnDecision, error) {
	parent, known := root, true
	if id := issuerID(ev); id != root.ID {
		s, err := e.Store.GetSession(ctx, e.Scope, id)
		switch {
		case errors.Is(err, kv.ErrNotFound):
			parent, known = kv.Session{Scope: e.Scope, ID: id}, false
		case err != nil:
			return SpawnDecision{}, err
		default:
			parent = s
		}
	}
	return e.decideSpawn(ctx, spawnCall{
		scope: e.Scope, harness: ev.Harness, root: root.ID, parent: parent, known: known,
		id: ev.Spawn.ToolUseID, spawn: *ev.Spawn, at: ev.At,
	})
}

// spawnCall is one spawn to decide.
type spawnCall struct {
	scope, harness string
	root           string     // the top-level session of parent's tree
	parent         kv.Session // the session asking; only its ID when not known
	known          bool       // parent is stored: its depth is known
	id             string     // the run's id (the spawning call's); "" records nothing
	spawn          adapters.Spawn
	at             time.Time // when it was asked; zero: now
	// refusedOnly records the run only when refused: the harness's events record an allowed
	// spawn under another id (adapters.Registration.RunsByChild).
	refusedOnly bool
}

// decideSpawn decides c against the limits and records its run, unless c has no id. A call
// already recorded gets the answer it got: a refused one is refused again, one whose sub-agent
// started or finished, or whose refusal was not delivered, is allowed; so is one holding a
// reservation. One still pending (asked again, or recorded first by the harness's stream) is
// decided again, not counting itself among the parent's active children.
func (e *Engine) decideSpawn(ctx context.Context, c spawnCall) (SpawnDecision, error) {
	d := SpawnDecision{Allow: true}
	if c.known {
		d.Depth = c.parent.Depth + 1
	}
	pending := false
	if c.id != "" {
		r, err := e.Store.GetRun(ctx, c.scope, c.id)
		switch {
		case errors.Is(err, kv.ErrNotFound):
		case err != nil:
			return SpawnDecision{}, err
		case r.Status == kv.RunRefused:
			return SpawnDecision{Reason: r.Reason, Depth: r.Depth}, nil
		case !r.Pending() || undelivered(r):
			// Started, finished, or refused and gone ahead regardless: it is not refused again.
			return SpawnDecision{Allow: true, Reason: r.Reason, Depth: r.Depth}, nil
		default:
			pending = true
		}
	}
	now, grace := e.Now(), e.reservationGrace()
	if c.refusedOnly && c.id != "" && e.reservations.holds(c.scope, c.parent.ID, c.id, now, grace) {
		return d, nil // asked again: allowed, its place reserved already
	}
	// A parent not stored has no known depth, but its children are counted all the same.
	reason, limit, err := e.overLimit(ctx, c.scope, c.parent.ID, d.Depth, c.known, pending)
	if err != nil {
		return SpawnDecision{}, err
	}
	d.Reason, d.Limit = reason, limit
	d.Allow = reason == "" || e.Config.Spawn.Mode == SpawnObserve
	if c.id == "" {
		return d, nil
	}
	if d.Allow && c.refusedOnly {
		// The run appears when the harness's events report the child: until then the spawn
		// holds a place among the parent's active children.
		e.reservations.add(c.scope, c.parent.ID, c.id, now)
		if d.Reason != "" { // observe mode: no run of ours to carry the reason
			e.spawnRefused(c.harness, d, c.parent.ID, c.id)
			e.Feed.Publish(Event{Type: EventSpawnRefused, Time: e.Now(), Scope: c.scope, Session: c.parent.ID, Run: c.id,
				Data: map[string]any{"reason": d.Reason, "depth": d.Depth, "type": c.spawn.Type, "enforced": false}})
		}
		return d, nil
	}
	at := c.at
	if at.IsZero() {
		at = e.Now()
	}
	_, err = e.Store.UpdateRun(ctx, c.scope, c.id, func(r *kv.Run, exists bool) error {
		if exists && !r.Pending() {
			return errUnchanged
		}
		before := *r
		if !exists {
			r.Harness, r.RootID, r.ParentID, r.CreatedAt = c.harness, c.root, c.parent.ID, at
		}
		if r.Description == "" {
			r.Description = c.spawn.Description
		}
		if r.Prompt == "" {
			r.Prompt, r.Type = c.spawn.Prompt, c.spawn.Type
		}
		r.Depth, r.Reason, r.Status = d.Depth, d.Reason, kv.RunPending
		if !d.Allow {
			r.Status = kv.RunRefused
		}
		if exists && sameRun(before, *r) {
			return errUnchanged
		}
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return SpawnDecision{}, fmt.Errorf("record spawn %s: %w", c.id, err)
	}
	if d.Reason != "" && err == nil {
		e.spawnRefused(c.harness, d, c.parent.ID, c.id)
	}
	return d, nil
}

// overLimit returns the reason a spawn of a sub-agent at depth by parent is over a limit and the
// limit (LimitMaxDepth, LimitMaxChildren), or "". known says the depth is known (the parent is
// stored); spawn.max_children applies either way. self says the spawn's own run is already
// recorded open: it is not counted. The parent's active children are its open runs and its
// reservations (see reserve.go).
func (e *Engine) overLimit(ctx context.Context, scope, parent string, depth int, known, self bool) (reason, limit string, err error) {
	lim := e.Config.Spawn
	if known && lim.MaxDepth > 0 && depth > lim.MaxDepth {
		return fmt.Sprintf("depth %d exceeds spawn.max_depth %d", depth, lim.MaxDepth), LimitMaxDepth, nil
	}
	if lim.MaxChildren <= 0 {
		return "", "", nil
	}
	n, err := e.Store.ActiveChildren(ctx, scope, parent, 0)
	if err != nil {
		return "", "", err
	}
	n += e.reservations.count(scope, parent, e.Now(), e.reservationGrace())
	if self {
		n--
	}
	if n >= lim.MaxChildren {
		return fmt.Sprintf("parent already has %d active sub-agents (spawn.max_children %d)", n, lim.MaxChildren), LimitMaxChildren, nil
	}
	return "", "", nil
}

// refusalNotDelivered starts the reason of a run heirloom refused whose harness went ahead
// anyway: the refusal reached it too late (the hook's or the plugin's deadline passed first, and
// it failed open) or not at all. The refusal's own reason follows in parentheses.
const refusalNotDelivered = "refusal not delivered: the harness went ahead"

// unrefuse makes refused run r, whose harness went ahead after all, an open run again: pending
// (its caller pairs it, or ends it, as the harness reports), its reason saying the refusal was
// not delivered and what it was. It reports whether r was refused.
func unrefuse(r *kv.Run) bool {
	if r.Status != kv.RunRefused {
		return false
	}
	r.Status, r.EndReason = kv.RunPending, ""
	if r.Reason != "" {
		r.Reason = refusalNotDelivered + " (" + r.Reason + ")"
	} else {
		r.Reason = refusalNotDelivered
	}
	return true
}

// undelivered reports whether r is a run whose refusal never reached its harness (see unrefuse).
func undelivered(r kv.Run) bool { return strings.HasPrefix(r.Reason, refusalNotDelivered) }

// wentAhead reports whether a spawn's result shows that a sub-agent ran for it: it names the
// sub-agent, or says the spawn completed or was launched. A failure naming none is what a
// refusal the harness received looks like (the spawning call's error).
func wentAhead(res *adapters.Result) bool {
	return res != nil && (res.AgentID != "" || launched(res.Status) || endReason(res.Status) == kv.EndCompleted)
}

// refusalLost records that the refusal of spawn id, a run of scope recorded under the lock of
// session lock, never reached the harness, which then went ahead (its deadline passed first:
// detachLate): the run becomes pending again (see unrefuse), so the sub-agent that starts for it
// pairs with it and counts against its parent's spawn.max_children. A harness whose events name
// runs by the child (adapters.Registration.RunsByChild) records that run itself: the refused
// record only notes that its refusal was not delivered, and the spawn holds a reservation until
// the child's run appears (see reserve.go).
func (e *Engine) refusalLost(ctx context.Context, reg adapters.Registration, scope, lock, id string) {
	unlock := e.locks.lock(lockKey(scope, lock))
	defer unlock()
	r, err := e.Store.UpdateRun(ctx, scope, id, func(r *kv.Run, exists bool) error {
		if !exists || r.ChildID != "" || !unrefuse(r) {
			return errUnchanged
		}
		if reg.RunsByChild {
			r.Status = kv.RunRefused // the child's run is the harness's; this one stays no run of a sub-agent
		}
		return nil
	})
	switch {
	case errors.Is(err, errUnchanged):
		return
	case err != nil:
		if ctx.Err() == nil {
			e.warn("a refusal the harness never received is left recorded as refused", err, "run", id)
		}
		return
	}
	if reg.RunsByChild {
		e.reservations.add(scope, r.ParentID, id, e.Now())
	}
	e.Logger.Debug("refusal not delivered: the harness went ahead", "run", id, "parent", r.ParentID)
}

// reservationGrace is how long a reservation counts: reservationGrace, at most
// runs.ghost_grace.
func (e *Engine) reservationGrace() time.Duration {
	return min(reservationGrace, e.Config.Runs.GhostGrace)
}

// sameRun reports whether a decision changed nothing of a run it was recorded on.
func sameRun(a, b kv.Run) bool {
	return a.Description == b.Description && a.Prompt == b.Prompt && a.Type == b.Type &&
		a.Depth == b.Depth && a.Reason == b.Reason && a.Status == b.Status
}
