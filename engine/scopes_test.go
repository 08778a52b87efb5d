package engine_test

import (
	"errors"
	"strings"
	"testing"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/inject/heading"
	"github.com/heirloom-dev/heirloom/kv"
)

// An OpenClaw parent under agent main spawns a sub-agent under agent ops (sessions_spawn with
// agentId): the child lives in scope ops, its parent in scope main.
const (
	xParent = "agent:main:main"
	xChild  = "agent:ops:subagent:7f3c"
	xTask   = "Check the query plans of the invoice reports"
)

// openClawEngine is openEngine with OpenClaw registered, whose keys name their scope.
func openClawEngine(t *testing.T, crossScope []string) *engine.Engine {
	t.Helper()
	return openEngine(t, cct.NewTree(t, "unused"), func(e *engine.Engine) {
		reg, err := adapters.NewRegistry(openclaw.Registration())
		if err != nil {
			t.Fatal(err)
		}
		e.Harnesses = reg
		e.Config.CrossScope = crossScope
	})
}

// crossSpawnEvents are the events the Gateway's stream gives heirloom for a cross-agent spawn,
// scoped as the OpenClaw decoder scopes them (by the key's agent id): the parent's session and
// turns, the spawn's task (the parent's), the child's session row naming its parent. As on the
// Gateway, the parent's rows carry no directory and the child's carries its own agent's
// workspace.
func crossSpawnEvents() []adapters.Event {
	ev := func(kind adapters.Kind, scope, key string) adapters.Event {
		return adapters.Event{Harness: "openclaw", Scope: scope, Kind: kind, SessionID: key}
	}
	turns := ev(adapters.KindTurns, "main", xParent)
	turns.Turns = []adapters.Turn{
		{ID: "m1", Role: "user", Text: "Audit the billing service. PARENT-MARK: the invoices table is sharded by tenant_id."},
		{ID: "m2", Role: "assistant", Text: "Found it: the monthly invoice report scans every shard, since its query has no tenant_id filter."},
	}
	spawn := ev(adapters.KindSpawn, "main", xParent)
	spawn.Spawn = &adapters.Spawn{ToolUseID: xChild, ChildSessionID: xChild, Prompt: xTask, Description: "query plans"}
	child := ev(adapters.KindSessionStart, "ops", xChild)
	child.ParentSessionID, child.Depth, child.Cwd = xParent, 1, "/srv/workspace-ops"
	return []adapters.Event{ev(adapters.KindSessionStart, "main", xParent), turns, spawn, child}
}

func consumeAll(t *testing.T, e *engine.Engine, evs []adapters.Event) {
	t.Helper()
	for _, ev := range evs {
		if err := e.Consume(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCrossScope_ChildInheritsItsParentFromAnotherScope(t *testing.T) {
	for _, order := range []string{"spawn first", "child row first"} {
		t.Run(order, func(t *testing.T) {
			e := openClawEngine(t, []string{"*"})
			evs := crossSpawnEvents()
			if order == "child row first" {
				evs[2], evs[3] = evs[3], evs[2]
			}
			consumeAll(t, e, evs)
			ctx := t.Context()

			block, err := e.Inject(ctx, engine.InjectRequest{Harness: "openclaw", Session: xChild})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(block, heading.Inherited) || !strings.Contains(block, "PARENT-MARK") || !strings.Contains(block, "no tenant_id filter") {
				t.Fatalf("the child under agent ops did not inherit its parent's context:\n%s", block)
			}

			// Each session lives in the scope its key names, and nowhere else.
			c, err := e.Store.GetSession(ctx, "ops", xChild)
			if err != nil {
				t.Fatal(err)
			}
			if c.ParentID != xParent || c.ParentScope != "main" || c.Depth != 1 || c.Objective != xTask || c.Project != "/srv/workspace-ops" {
				t.Errorf("child: parent %q in %q, depth %d, objective %q, project %q; want %q in main, 1, the task, its workspace", c.ParentID, c.ParentScope, c.Depth, c.Objective, c.Project, xParent)
			}
			// The child's workspace is its own agent's: the parent (whose rows name none) does
			// not take it, or its checkpoints would be filed under another agent's project.
			if p, err := e.Store.GetSession(ctx, "main", xParent); err != nil || p.Project != "" {
				t.Errorf("parent: project %q (%v), want none", p.Project, err)
			}
			kids, err := e.Store.Children(ctx, "main", xParent)
			if err != nil || len(kids) != 1 || kids[0].Scope != "ops" || kids[0].ID != xChild {
				t.Errorf("the parent's children in scope main: %+v, %v; want the child in ops", kids, err)
			}
			for _, wrong := range []struct{ scope, id string }{{"ops", xParent}, {"main", xChild}, {"default", xChild}, {"default", xParent}} {
				if _, err := e.Store.GetSession(ctx, wrong.scope, wrong.id); !errors.Is(err, kv.ErrNotFound) {
					t.Errorf("session %s stored in scope %s too (%v)", wrong.id, wrong.scope, err)
				}
			}
			r, err := e.Store.GetRun(ctx, "main", xChild)
			if err != nil {
				t.Fatal(err)
			}
			if r.ParentID != xParent || r.RootID != xParent || r.ChildID != xChild || r.ChildScope != "ops" || r.Status != kv.RunRunning {
				t.Errorf("run: %+v; want the parent's, running, child %s in scope ops", r, xChild)
			}
		})
	}
}

func TestCrossScope_RunEndsWhenTheChildGoesIdle(t *testing.T) {
	e := openClawEngine(t, []string{"*"})
	consumeAll(t, e, crossSpawnEvents())
	turns := adapters.Event{Harness: "openclaw", Scope: "ops", Kind: adapters.KindTurns, SessionID: xChild, Turns: []adapters.Turn{
		{ID: "c1", Role: "user", Text: xTask},
		{ID: "c2", Role: "assistant", Text: "CHILD-RESULT: add a tenant_id predicate; the plan drops from 64 shards to 1."},
	}}
	idle := adapters.Event{Harness: "openclaw", Scope: "ops", Kind: adapters.KindIdle, SessionID: xChild}
	consumeAll(t, e, []adapters.Event{turns, idle})
	r, err := e.Store.GetRun(t.Context(), "main", xChild)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != kv.RunCompleted || !strings.Contains(r.Result, "CHILD-RESULT") || r.Turns != 2 {
		t.Errorf("run after the child went idle: status %q, result %q, turns %d; want completed with its last reply, 2 turns", r.Status, r.Result, r.Turns)
	}
}

func TestCrossScope_IdleOfAnUnknownSession(t *testing.T) {
	// A session heirloom never stored (deleted, or from before it ran) going idle is no error.
	e := openClawEngine(t, []string{"*"})
	if err := e.Consume(t.Context(), adapters.Event{Harness: "openclaw", Scope: "ops", Kind: adapters.KindIdle, SessionID: "agent:ops:subagent:gone"}); err != nil {
		t.Errorf("idle of an unknown session: %v", err)
	}
}

func TestCrossScope_PluginNamesTheParent(t *testing.T) {
	// The plugin's first call of a child beats every event about it, and names its parent.
	e := openClawEngine(t, []string{"main"})
	consumeAll(t, e, crossSpawnEvents()[:2])
	block, err := e.Inject(t.Context(), engine.InjectRequest{Harness: "openclaw", Session: xChild, Parent: xParent})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(block, "PARENT-MARK") {
		t.Fatalf("a child the plugin names the parent of did not inherit across scopes:\n%s", block)
	}
}

func TestCrossScope_TheParentsScopeMustAllowIt(t *testing.T) {
	if block, err := func() (string, error) {
		e := openClawEngine(t, []string{"Main"}) // agent ids are lowercase; the setting is read in any case
		consumeAll(t, e, crossSpawnEvents())
		return e.Inject(t.Context(), engine.InjectRequest{Harness: "openclaw", Session: xChild})
	}(); err != nil || !strings.Contains(block, "PARENT-MARK") {
		t.Errorf("inherit.cross_scope [Main]: %v, block:\n%s", err, block)
	}
	for _, allow := range [][]string{nil, {"ops"}, {"staging"}} {
		e := openClawEngine(t, allow)
		consumeAll(t, e, crossSpawnEvents())
		block, err := e.Inject(t.Context(), engine.InjectRequest{Harness: "openclaw", Session: xChild})
		if err != nil {
			t.Fatal(err)
		}
		if block != "" {
			t.Errorf("inherit.cross_scope %q: scope main's context reached a child in ops:\n%s", allow, block)
		}
		// Lineage is recorded all the same.
		if c, err := e.Store.GetSession(t.Context(), "ops", xChild); err != nil || c.ParentID != xParent || c.ParentScope != "main" {
			t.Errorf("inherit.cross_scope %q: child %+v (%v); want its parent recorded", allow, c, err)
		}
	}
}

func TestCrossScope_NoSelfInheritance(t *testing.T) {
	// A plugin naming a session its own parent (same key, so same scope) gets no block.
	e := openClawEngine(t, []string{"*"})
	consumeAll(t, e, crossSpawnEvents()[:2])
	block, err := e.Inject(t.Context(), engine.InjectRequest{Harness: "openclaw", Session: xParent, Parent: xParent})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(block, heading.Inherited) {
		t.Errorf("a session inherited from itself:\n%s", block)
	}
}
