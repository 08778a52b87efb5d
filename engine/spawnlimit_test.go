package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
)

// limits sets the spawn limits of an engine before it opens.
func limits(maxDepth, maxChildren int, mode string) func(*engine.Engine) {
	return func(e *engine.Engine) {
		e.Config.Spawn = engine.SpawnLimits{MaxDepth: maxDepth, MaxChildren: maxChildren, Mode: mode}
	}
}

// mustSpawn sends a PreToolUse(Agent) and returns the engine's answer.
func mustSpawn(t *testing.T, e *engine.Engine, fields map[string]any) adapters.Answer {
	t.Helper()
	a, err := hookAnswer(t, e, fields)
	if err != nil {
		t.Fatalf("PreToolUse %v: %v", fields["tool_use_id"], err)
	}
	return a
}

// activeChildren is how many open runs session parent has.
func activeChildren(t *testing.T, e *engine.Engine, parent string) int {
	t.Helper()
	n, err := e.Store.ActiveChildren(t.Context(), "default", parent, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSpawnLimit_Depth: with spawn.max_depth 1 the top-level session's sub-agent may run, but
// the spawn it asks for, which would be at depth 2, is refused with the reason naming the limit.
// The refusal is recorded as a run (refused, with its depth and task), a repeat of the hook gets
// the same answer, and a sub-agent that starts later is never paired with it.
func TestSpawnLimit_Depth(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, limits(1, 0, engine.SpawnEnforce))
	started(t, e, tr, S)
	if a := mustSpawn(t, e, cct.Spawn(tr, S, "t1", "general-purpose", "child task")); a != (adapters.Answer{}) {
		t.Fatalf("depth 1 spawn: got %+v, want it allowed", a)
	}
	mustHook(t, e, cct.Start(tr, S, "c1", "general-purpose"))

	want := "heirloom refused this sub-agent: depth 2 exceeds spawn.max_depth 1"
	for range 2 { // the second is a repeated hook: the same answer
		if a := mustSpawn(t, e, cct.Spawn(tr, S, "t2", "Explore", "grandchild task", "c1")); a.Deny != want || a.Context != "" {
			t.Fatalf("depth 2 spawn: got %+v, want Deny %q", a, want)
		}
	}
	r := mustRun(t, e, "t2")
	if r.Status != kv.RunRefused || r.Reason != "depth 2 exceeds spawn.max_depth 1" || r.Depth != 2 ||
		r.ParentID != S+":c1" || r.RootID != S || r.Prompt != "grandchild task" || r.Description != "desc t2" || r.Type != "Explore" {
		t.Fatalf("refused run: got %+v", r)
	}
	if r := mustRun(t, e, "t1"); r.Depth != 1 || r.Reason != "" || r.Status != kv.RunRunning {
		t.Fatalf("allowed run: got %+v, want depth 1, no reason, running", r)
	}
	// A sub-agent of the refused spawn's type starting now is no child of it.
	mustHook(t, e, cct.Start(tr, S, "stray", "Explore"))
	if r := mustRun(t, e, "t2"); r.ChildID != "" || r.Status != kv.RunRefused {
		t.Fatalf("refused run after a later SubagentStart: got %+v, want it unpaired and refused", r)
	}
	if s := mustSession(t, e, S+":stray"); s.ParentID != S {
		t.Fatalf("stray sub-agent: parent %q, want the top-level session", s.ParentID)
	}
}

// TestSpawnLimit_Children: with spawn.max_children 1 a session's second spawn is refused while
// its first is open (pending or running); a refused run never counts as active; once the first
// returns, the next spawn is allowed.
func TestSpawnLimit_Children(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, limits(0, 1, engine.SpawnEnforce))
	started(t, e, tr, S)
	if a := mustSpawn(t, e, cct.Spawn(tr, S, "t1", "general-purpose", "one")); a.Deny != "" {
		t.Fatalf("first spawn: got %+v", a)
	}
	want := "heirloom refused this sub-agent: parent already has 1 active sub-agents (spawn.max_children 1)"
	if a := mustSpawn(t, e, cct.Spawn(tr, S, "t2", "general-purpose", "two")); a.Deny != want {
		t.Fatalf("second spawn while the first is pending: got %+v, want Deny %q", a, want)
	}
	mustHook(t, e, cct.Start(tr, S, "c1", "general-purpose"))
	if a := mustSpawn(t, e, cct.Spawn(tr, S, "t3", "general-purpose", "three")); a.Deny != want {
		t.Fatalf("spawn while the first is running: got %+v, want Deny %q", a, want)
	}
	if n := activeChildren(t, e, S); n != 1 {
		t.Fatalf("active children with one running and two refused: got %d, want 1", n)
	}
	mustHook(t, e, cct.Result(tr, S, "t1", "c1", "done"))
	if n := activeChildren(t, e, S); n != 0 {
		t.Fatalf("active children after the result: got %d, want 0", n)
	}
	if a := mustSpawn(t, e, cct.Spawn(tr, S, "t4", "general-purpose", "four")); a.Deny != "" {
		t.Fatalf("spawn after the first returned: got %+v, want it allowed", a)
	}
	// The limit is the parent's own: a sub-agent's spawn counts against the sub-agent.
	mustHook(t, e, cct.Start(tr, S, "c4", "general-purpose"))
	if a := mustSpawn(t, e, cct.Spawn(tr, S, "t5", "general-purpose", "five", "c4")); a.Deny != "" {
		t.Fatalf("the running sub-agent's first spawn: got %+v, want it allowed", a)
	}
	for _, id := range []string{"t2", "t3"} {
		if r := mustRun(t, e, id); r.Status != kv.RunRefused || r.Depth != 1 {
			t.Errorf("run %s: got %+v, want refused at depth 1", id, r)
		}
	}
}

// TestSpawnLimit_Observe: in observe mode a spawn past a limit goes ahead; its run is pending
// with the reason a refusal would have given, and the feed reports spawn.refused with enforced
// false. An enforced refusal reports enforced true.
func TestSpawnLimit_Observe(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, limits(0, 1, engine.SpawnObserve))
	started(t, e, tr, S)
	sub := e.Feed.Subscribe(engine.EventFilter{Types: []string{engine.EventSpawnRefused}}, 0)
	defer sub.Close()
	mustSpawn(t, e, cct.Spawn(tr, S, "t1", "general-purpose", "one"))
	if a := mustSpawn(t, e, cct.Spawn(tr, S, "t2", "general-purpose", "two")); a != (adapters.Answer{}) {
		t.Fatalf("observe mode: got %+v, want the spawn allowed", a)
	}
	r := mustRun(t, e, "t2")
	if r.Status != kv.RunPending || r.Reason != "parent already has 1 active sub-agents (spawn.max_children 1)" {
		t.Fatalf("observed run: got %+v, want pending with the reason", r)
	}
	if n := activeChildren(t, e, S); n != 2 {
		t.Fatalf("active children: got %d, want 2 (observe never refuses)", n)
	}
	evs := drain(sub)
	if len(evs) != 1 || evs[0].Run != "t2" || evs[0].Session != S || evs[0].Data["enforced"] != false ||
		evs[0].Data["reason"] != r.Reason || evs[0].Data["depth"] != 1 {
		t.Fatalf("feed: got %+v, want one spawn.refused for t2, enforced false", evs)
	}
	// The sub-agent pairs with it like any pending spawn.
	mustHook(t, e, cct.Start(tr, S, "c1", "general-purpose"))
	mustHook(t, e, cct.Start(tr, S, "c2", "general-purpose"))
	if r := mustRun(t, e, "t2"); r.ChildID == "" || r.Status != kv.RunRunning {
		t.Fatalf("observed run after two starts: got %+v, want it paired", r)
	}

	e.Config.Spawn.Mode = engine.SpawnEnforce
	if a := mustSpawn(t, e, cct.Spawn(tr, S, "t3", "general-purpose", "three")); a.Deny == "" {
		t.Fatalf("enforce mode: got %+v, want a refusal", a)
	}
	evs = drain(sub)
	if len(evs) != 1 || evs[0].Run != "t3" || evs[0].Data["enforced"] != true || evs[0].Data["type"] != "general-purpose" {
		t.Fatalf("feed: got %+v, want one spawn.refused for t3, enforced true", evs)
	}
}

// TestSpawnLimit_NoLimit: limits of 0 allow any depth and any number of open children.
func TestSpawnLimit_NoLimit(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, limits(0, 0, engine.SpawnEnforce))
	started(t, e, tr, S)
	issuer := ""
	for i := range 6 {
		id := fmt.Sprintf("t%d", i)
		if a := mustSpawn(t, e, cct.Spawn(tr, S, id, "general-purpose", "task "+id, issuer)); a.Deny != "" {
			t.Fatalf("spawn %d: got %+v, want it allowed", i, a)
		}
		for j := range 3 { // open siblings that never start
			if a := mustSpawn(t, e, cct.Spawn(tr, S, fmt.Sprintf("%s-%d", id, j), "Plan", "p", issuer)); a.Deny != "" {
				t.Fatalf("sibling %d of spawn %d: got %+v", j, i, a)
			}
		}
		issuer = fmt.Sprintf("c%d", i)
		mustHook(t, e, cct.Start(tr, S, issuer, "general-purpose"))
	}
	if s := mustSession(t, e, S+":c5"); s.Depth != 6 {
		t.Fatalf("deepest sub-agent: depth %d, want 6", s.Depth)
	}
	if r := mustRun(t, e, "t5"); r.Depth != 6 || r.Reason != "" {
		t.Fatalf("deepest run: got %+v", r)
	}
}

// TestSpawnLimit_UnknownParent: a spawn whose parent heirloom does not know fails open on depth:
// a sub-agent that started before heirloom ran may spawn whatever the depth limit (its depth is
// unknown: the run records 0), though spawn.max_children, which needs no depth, still counts
// its runs; and a plugin's check for an unknown session is allowed and records nothing. The
// top-level session started before heirloom too: its transcript shows it runs.
func TestSpawnLimit_UnknownParent(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, limits(1, 1, engine.SpawnEnforce))
	cct.AppendLines(t, tr.Transcript, exchange("S", 0, "Split the work.", "Handing parts to sub-agents.")...)
	if a := mustSpawn(t, e, cct.Spawn(tr, S, "t1", "general-purpose", "from a ghost", "ghost")); a.Deny != "" {
		t.Fatalf("spawn by an unknown sub-agent: got %+v, want it allowed", a)
	}
	if r := mustRun(t, e, "t1"); r.Status != kv.RunPending || r.Depth != 0 || r.ParentID != S+":ghost" {
		t.Fatalf("run of an unknown parent: got %+v", r)
	}
	want := "heirloom refused this sub-agent: parent already has 1 active sub-agents (spawn.max_children 1)"
	if a := mustSpawn(t, e, cct.Spawn(tr, S, "t2", "general-purpose", "again from a ghost", "ghost")); a.Deny != want {
		t.Fatalf("second spawn by the unknown sub-agent while its first is pending: got %+v, want Deny %q", a, want)
	}
	if r := mustRun(t, e, "t2"); r.Status != kv.RunRefused || r.Depth != 0 || r.ParentID != S+":ghost" {
		t.Fatalf("refused run of an unknown parent: got %+v", r)
	}
	d, err := e.SpawnCheck(t.Context(), engine.SpawnRequest{Harness: "opencode", Session: "ses_unknown", CallID: "call_1"})
	if err != nil || !d.Allow || d.Reason != "" {
		t.Fatalf("spawn check of an unknown session: got %+v, %v; want allowed", d, err)
	}
	if _, err := e.Store.GetRun(t.Context(), "default", "call_1"); err == nil {
		t.Fatal("a run was recorded for an unknown session's spawn check")
	}
}

// streamSession records an OpenCode session (and its parent link) as the event stream does.
func streamSession(t *testing.T, e *engine.Engine, id, parent string) {
	t.Helper()
	err := e.Consume(t.Context(), adapters.Event{Harness: "opencode", Kind: adapters.KindSessionStart, SessionID: id, ParentSessionID: parent})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSpawnCheck: a plugin's check uses the same decision: the depth refusal with its reason,
// recorded as a refused run under the call's id with the spawn's arguments; a session not
// reported yet takes its depth from the parent the plugin names; a call the stream recorded first (pending, as the tool part arrived) does not count against itself; and the
// stream's report of the refused call's error leaves the run refused.
func TestSpawnCheck(t *testing.T) {
	e := openEngine(t, cct.NewTree(t, "unused"), limits(1, 1, engine.SpawnEnforce))
	streamSession(t, e, "ses_P", "")
	streamSession(t, e, "ses_C", "ses_P")
	req := engine.SpawnRequest{Harness: "opencode", Session: "ses_C", CallID: "call_deep", Description: "dig", Prompt: "dig deeper", Type: "general"}
	d, err := e.SpawnCheck(t.Context(), req)
	if err != nil || d.Allow || d.Reason != "depth 2 exceeds spawn.max_depth 1" || d.Depth != 2 {
		t.Fatalf("child's spawn: got %+v, %v; want refused at depth 2", d, err)
	}
	r := mustRun(t, e, "call_deep")
	if r.Status != kv.RunRefused || r.ParentID != "ses_C" || r.RootID != "ses_P" || r.Prompt != "dig deeper" || r.Description != "dig" || r.Type != "general" || r.Harness != "opencode" {
		t.Fatalf("refused run: got %+v", r)
	}
	// OpenCode reports the call as failed with the plugin's error: still refused.
	failed := adapters.Event{Harness: "opencode", Kind: adapters.KindSpawnResult, SessionID: "ses_C",
		Spawn:  &adapters.Spawn{ToolUseID: "call_deep", Description: "dig", Prompt: "dig deeper", Type: "general"},
		Result: &adapters.Result{Status: adapters.StatusFailed, Text: "error: heirloom refused this sub-agent: …"}}
	if err := e.Consume(t.Context(), failed); err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, e, "call_deep"); r.Status != kv.RunRefused || r.Reason != "depth 2 exceeds spawn.max_depth 1" {
		t.Fatalf("refused run after the stream's error: got %+v", r)
	}

	// A session the stream has not reported yet, whose parent the plugin names: its depth is
	// its parent's plus one.
	d, err = e.SpawnCheck(t.Context(), engine.SpawnRequest{Harness: "opencode", Session: "ses_new", Parent: "ses_C", CallID: "call_new"})
	if err != nil || d.Allow || d.Reason != "depth 3 exceeds spawn.max_depth 1" {
		t.Fatalf("unreported session under ses_C: got %+v, %v; want refused at depth 3", d, err)
	}
	if r := mustRun(t, e, "call_new"); r.Status != kv.RunRefused || r.ParentID != "ses_new" || r.RootID != "ses_P" || r.Depth != 3 {
		t.Fatalf("refused run of an unreported session: got %+v", r)
	}

	// The stream saw the parent's task part before the plugin asked: the pending run is the
	// call's own.
	spawn := adapters.Event{Harness: "opencode", Kind: adapters.KindSpawn, SessionID: "ses_P", Spawn: &adapters.Spawn{ToolUseID: "call_1"}}
	if err := e.Consume(t.Context(), spawn); err != nil {
		t.Fatal(err)
	}
	d, err = e.SpawnCheck(t.Context(), engine.SpawnRequest{Harness: "opencode", Session: "ses_P", CallID: "call_1", Prompt: "p1", Type: "general"})
	if err != nil || !d.Allow || d.Depth != 1 {
		t.Fatalf("parent's first spawn, recorded by the stream first: got %+v, %v; want allowed at depth 1", d, err)
	}
	if r := mustRun(t, e, "call_1"); r.Status != kv.RunPending || r.Depth != 1 || r.Prompt != "p1" {
		t.Fatalf("pending run after the check: got %+v", r)
	}
	d, err = e.SpawnCheck(t.Context(), engine.SpawnRequest{Harness: "opencode", Session: "ses_P", CallID: "call_2"})
	if err != nil || d.Allow || d.Reason != "parent already has 1 active sub-agents (spawn.max_children 1)" {
		t.Fatalf("parent's second spawn: got %+v, %v; want refused by max_children", d, err)
	}
	// Without a call id the decision is made and nothing is recorded.
	d, err = e.SpawnCheck(t.Context(), engine.SpawnRequest{Harness: "opencode", Session: "ses_P"})
	if err != nil || d.Allow {
		t.Fatalf("check without a call id: got %+v, %v; want refused", d, err)
	}
	if n := activeChildren(t, e, "ses_P"); n != 1 {
		t.Fatalf("active children: got %d, want 1", n)
	}
}

// TestSpawnLimit_Concurrent: spawns racing each other, through the plugin check and through
// Claude Code's hooks, never exceed spawn.max_children: each decision and its run are made
// under the parent's lock.
func TestSpawnLimit_Concurrent(t *testing.T) {
	const max, n = 3, 24
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, limits(0, max, engine.SpawnEnforce))
	streamSession(t, e, "ses_P", "")
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "fan out"}))

	var mu sync.Mutex
	allowed := map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			d, err := e.SpawnCheck(t.Context(), engine.SpawnRequest{Harness: "opencode", Session: "ses_P", CallID: fmt.Sprintf("call_%d", i)})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if d.Allow {
				allowed["ses_P"]++
			}
		}()
		go func() {
			defer wg.Done()
			a, err := hookAnswer(t, e, cct.Spawn(tr, S, fmt.Sprintf("toolu_%d", i), "general-purpose", "part"))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if a.Deny == "" {
				allowed[S]++
			}
		}()
	}
	wg.Wait()
	for _, parent := range []string{"ses_P", S} {
		if allowed[parent] != max {
			t.Errorf("%s: %d of %d racing spawns allowed, want %d", parent, allowed[parent], n, max)
		}
		if got := activeChildren(t, e, parent); got != max {
			t.Errorf("%s: %d active children, want %d", parent, got, max)
		}
		runs, err := e.Store.ListRuns(t.Context(), "default", kv.RunFilter{ParentID: parent, Status: kv.RunRefused})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != n-max {
			t.Errorf("%s: %d refused runs, want %d", parent, len(runs), n-max)
		}
	}
}

// describerFunc is a harness describer made of a function: the fake at the Gateway's edge.
type describerFunc func(ctx context.Context, session string) ([]adapters.Event, error)

func (f describerFunc) Describe(ctx context.Context, session string) ([]adapters.Event, error) {
	return f(ctx, session)
}

// TestSpawnCheck_DescribesUnknownSubagent: an OpenClaw sub-agent asking to spawn before the
// Gateway's events about it arrived is described first, as Inject does, so its depth counts;
// since OpenClaw names runs by the child's key, only refusals are recorded under the call's id.
func TestSpawnCheck_DescribesUnknownSubagent(t *testing.T) {
	const parent, child = "agent:main:main", "agent:main:subagent:c1"
	asked := 0
	e := openEngine(t, cct.NewTree(t, "unused"), func(e *engine.Engine) {
		reg, err := adapters.NewRegistry(openclaw.Registration())
		if err != nil {
			t.Fatal(err)
		}
		e.Harnesses = reg
		e.Config.Spawn = engine.SpawnLimits{MaxDepth: 1, Mode: engine.SpawnEnforce}
		e.Describers = map[string]adapters.Describer{"openclaw": describerFunc(func(_ context.Context, session string) ([]adapters.Event, error) {
			asked++
			return []adapters.Event{{Harness: "openclaw", Scope: "main", Kind: adapters.KindSessionStart, SessionID: session, ParentSessionID: parent, Depth: 1}}, nil
		})}
	})
	d, err := e.SpawnCheck(t.Context(), engine.SpawnRequest{Harness: "openclaw", Session: child, CallID: "call_1", Prompt: "dig"})
	if err != nil || d.Allow || d.Reason != "depth 2 exceeds spawn.max_depth 1" {
		t.Fatalf("got %+v, %v; want refused at depth 2", d, err)
	}
	if asked != 1 {
		t.Fatalf("the Gateway was asked %d times, want once", asked)
	}
	r, err := e.Store.GetRun(t.Context(), "main", "call_1")
	if err != nil || r.Status != kv.RunRefused || r.ParentID != child || r.RootID != parent {
		t.Fatalf("run in scope main: %+v, %v; want refused under the child, rooted at %s", r, err, parent)
	}

	// OpenClaw names its runs by the child's key: an allowed spawn is left to its events, and
	// one observe mode lets through is reported on the feed alone.
	sub := e.Feed.Subscribe(engine.EventFilter{Types: []string{engine.EventSpawnRefused}}, 0)
	defer sub.Close()
	if d, err := e.SpawnCheck(t.Context(), engine.SpawnRequest{Harness: "openclaw", Session: parent, CallID: "call_2"}); err != nil || !d.Allow {
		t.Fatalf("the top-level session's spawn: got %+v, %v; want allowed", d, err)
	}
	e.Config.Spawn.Mode = engine.SpawnObserve
	if d, err := e.SpawnCheck(t.Context(), engine.SpawnRequest{Harness: "openclaw", Session: child, CallID: "call_3", Type: "main"}); err != nil || !d.Allow || d.Reason == "" {
		t.Fatalf("observe mode: got %+v, %v; want allowed with the reason", d, err)
	}
	for _, id := range []string{"call_2", "call_3"} {
		if r, err := e.Store.GetRun(t.Context(), "main", id); err == nil {
			t.Errorf("allowed spawn %s recorded a run under the call's id: %+v", id, r)
		}
	}
	if evs := drain(sub); len(evs) != 1 || evs[0].Run != "call_3" || evs[0].Scope != "main" || evs[0].Session != child || evs[0].Data["enforced"] != false {
		t.Errorf("feed: got %+v, want one spawn.refused for call_3, enforced false", evs)
	}
}

// TestSpawnLimit_RefusalNotDelivered: a refusal the harness never received (its hook's or its
// plugin's deadline passed first, and it failed open; or the answer was lost on its way) leaves
// no run stuck as refused: once the harness shows it went ahead (a hook past its deadline, a
// child paired or confirmed, a streamed child or result), the run is open, counts against
// spawn.max_children, and ends as the harness reports, its result kept and its reason saying
// the refusal was not delivered. The feed reports its start and end.
func TestSpawnLimit_RefusalNotDelivered(t *testing.T) {
	const limit = "parent already has 1 active sub-agents (spawn.max_children 1)"
	const note = "refusal not delivered: the harness went ahead (" + limit + ")"
	feedOf := func(t *testing.T, e *engine.Engine, run string) func() []string {
		sub := e.Feed.Subscribe(engine.EventFilter{Types: []string{engine.EventRunStarted, engine.EventRunEnded}}, 0)
		t.Cleanup(sub.Close)
		return func() []string {
			var out []string
			for _, ev := range drain(sub) {
				if ev.Run == run {
					out = append(out, ev.Type)
				}
			}
			return out
		}
	}
	ended := func(t *testing.T, r kv.Run, child, result string) {
		t.Helper()
		if r.Status != kv.RunCompleted || r.EndReason != kv.EndCompleted || r.ChildID != child || r.Result != result || r.Reason != note {
			t.Errorf("run after its sub-agent returned: status %q, end %q, child %q, result %q, reason %q; want completed by %s with %q, reason %q",
				r.Status, r.EndReason, r.ChildID, r.Result, r.Reason, child, result, note)
		}
	}

	t.Run("ClaudeCodeHookPastDeadline", func(t *testing.T) {
		tr := cct.NewTree(t, "S")
		e := openEngine(t, tr, limits(0, 1, engine.SpawnEnforce))
		feed := feedOf(t, e, "t2")
		started(t, e, tr, S)
		spawnStarted(t, e, tr, "t1", "a1")
		late, cancel := context.WithCancel(t.Context())
		cancel() // the deny is decided after the hook's deadline: Claude Code gets {} and spawns
		if a, err := e.Hook(late, decode(t, cct.Spawn(tr, S, "t2", "Explore", "task t2"))); err == nil || a.Deny != "" {
			t.Fatalf("hook past its deadline: got %+v, %v; want no answer", a, err)
		}
		r := waitRecorded(t, e, "t2", func(r kv.Run) bool { return r.Reason == note })
		if r.Status != kv.RunPending {
			t.Fatalf("undelivered refusal: got %+v, want pending", r)
		}
		mustHook(t, e, cct.Start(tr, S, "a2", "Explore"))
		if r := mustRun(t, e, "t2"); r.Status != kv.RunRunning || r.ChildID != S+":a2" {
			t.Fatalf("after its SubagentStart: got %+v, want running with S:a2", r)
		}
		if n := activeChildren(t, e, S); n != 2 {
			t.Errorf("active children: got %d, want 2 (it counts against spawn.max_children)", n)
		}
		if a := mustSpawn(t, e, cct.Spawn(tr, S, "t3", "Explore", "task t3")); a.Deny == "" {
			t.Errorf("a third spawn while both run: got %+v, want refused", a)
		}
		mustHook(t, e, cct.Result(tr, S, "t2", "a2", "SECOND RESULT"))
		ended(t, mustRun(t, e, "t2"), S+":a2", "SECOND RESULT")
		if got := feed(); !slices.Equal(got, []string{engine.EventRunStarted, engine.EventRunEnded}) {
			t.Errorf("feed for t2: %v, want run.started then run.ended", got)
		}
	})

	t.Run("ClaudeCodeConfirmed", func(t *testing.T) {
		// Refused in time, but the harness ran it regardless (the answer was lost on its way):
		// its sub-agent starts unpaired, and the spawn's result names it.
		tr := cct.NewTree(t, "S")
		e := openEngine(t, tr, limits(0, 1, engine.SpawnEnforce))
		feed := feedOf(t, e, "t2")
		started(t, e, tr, S)
		spawnStarted(t, e, tr, "t1", "a1")
		if a := mustSpawn(t, e, cct.Spawn(tr, S, "t2", "Explore", "task t2")); a.Deny == "" {
			t.Fatalf("second spawn: got %+v, want refused", a)
		}
		mustHook(t, e, cct.Start(tr, S, "a2", "Explore"))
		mustHook(t, e, cct.Result(tr, S, "t2", "a2", "SECOND RESULT"))
		ended(t, mustRun(t, e, "t2"), S+":a2", "SECOND RESULT")
		if s := mustSession(t, e, S+":a2"); s.ParentID != S || s.Objective != "task t2" {
			t.Errorf("the sub-agent: parent %q, objective %q; want S and its run's task", s.ParentID, s.Objective)
		}
		if got := feed(); !slices.Equal(got, []string{engine.EventRunStarted, engine.EventRunEnded}) {
			t.Errorf("feed for t2: %v, want run.started then run.ended", got)
		}
	})

	for _, late := range []bool{false, true} {
		name := "OpenCodeStream"
		if late {
			name = "OpenCodePluginPastDeadline"
		}
		t.Run(name, func(t *testing.T) {
			e := openEngine(t, cct.NewTree(t, "unused"), limits(0, 1, engine.SpawnEnforce))
			feed := feedOf(t, e, "call_2")
			streamSession(t, e, "ses_P", "")
			consume := func(ev adapters.Event) {
				t.Helper()
				if err := e.Consume(t.Context(), ev); err != nil {
					t.Fatal(err)
				}
			}
			consume(adapters.Event{Harness: "opencode", Kind: adapters.KindSpawn, SessionID: "ses_P", Spawn: &adapters.Spawn{ToolUseID: "call_1", ChildSessionID: "ses_C1", Prompt: "one"}})
			ctx := t.Context()
			if late {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				cancel() // the plugin gave up waiting and let the task run
			}
			d, err := e.SpawnCheck(ctx, engine.SpawnRequest{Harness: "opencode", Session: "ses_P", CallID: "call_2", Prompt: "two"})
			if late {
				if err == nil {
					t.Fatalf("check past its deadline: got %+v, want the context's error", d)
				}
				waitRecorded(t, e, "call_2", func(r kv.Run) bool { return r.Reason == note && r.Status == kv.RunPending })
				if n := activeChildren(t, e, "ses_P"); n != 2 {
					t.Errorf("active children: got %d, want 2", n)
				}
			} else if err != nil || d.Allow {
				t.Fatalf("second spawn: got %+v, %v; want refused", d, err)
			}
			consume(adapters.Event{Harness: "opencode", Kind: adapters.KindSpawn, SessionID: "ses_P", Spawn: &adapters.Spawn{ToolUseID: "call_2", ChildSessionID: "ses_C2", Prompt: "two"}})
			if r := mustRun(t, e, "call_2"); r.Status != kv.RunRunning || r.ChildID != "ses_C2" || r.Reason != note {
				t.Fatalf("after the stream named its child: got %+v, want running with ses_C2", r)
			}
			if n := activeChildren(t, e, "ses_P"); n != 2 {
				t.Errorf("active children: got %d, want 2 (it counts against spawn.max_children)", n)
			}
			consume(adapters.Event{Harness: "opencode", Kind: adapters.KindSpawnResult, SessionID: "ses_P",
				Spawn: &adapters.Spawn{ToolUseID: "call_2", ChildSessionID: "ses_C2"}, Result: &adapters.Result{Status: "completed", Text: "REAL RESULT"}})
			ended(t, mustRun(t, e, "call_2"), "ses_C2", "REAL RESULT")
			if got := feed(); !slices.Equal(got, []string{engine.EventRunStarted, engine.EventRunEnded}) {
				t.Errorf("feed for call_2: %v, want run.started then run.ended", got)
			}
		})
	}

	t.Run("OpenCodeResultOnly", func(t *testing.T) {
		// A completed result naming no child shows the sub-agent ran, too.
		e := openEngine(t, cct.NewTree(t, "unused"), limits(1, 0, engine.SpawnEnforce))
		streamSession(t, e, "ses_P", "")
		streamSession(t, e, "ses_C", "ses_P")
		if d, err := e.SpawnCheck(t.Context(), engine.SpawnRequest{Harness: "opencode", Session: "ses_C", CallID: "call_deep"}); err != nil || d.Allow {
			t.Fatalf("deep spawn: got %+v, %v; want refused", d, err)
		}
		err := e.Consume(t.Context(), adapters.Event{Harness: "opencode", Kind: adapters.KindSpawnResult, SessionID: "ses_C",
			Spawn: &adapters.Spawn{ToolUseID: "call_deep"}, Result: &adapters.Result{Status: "completed", Text: "REAL RESULT"}})
		if err != nil {
			t.Fatal(err)
		}
		if r := mustRun(t, e, "call_deep"); r.Status != kv.RunCompleted || r.Result != "REAL RESULT" ||
			r.Reason != "refusal not delivered: the harness went ahead (depth 2 exceeds spawn.max_depth 1)" {
			t.Errorf("got %+v, want completed with its result and the undelivered refusal's reason", r)
		}
	})
}

// waitRecorded waits until run id is recorded as not delivered (ok), and returns it.
func waitRecorded(t *testing.T, e *engine.Engine, id string, ok func(kv.Run) bool) kv.Run {
	t.Helper()
	var r kv.Run
	waitFor(t, "run "+id+" recorded as not delivered", func() bool {
		var err error
		r, err = e.Store.GetRun(t.Context(), "default", id)
		return err == nil && ok(r)
	})
	return r
}

// decode decodes a Claude Code hook payload as the hook endpoint does.
func decode(t *testing.T, fields map[string]any) adapters.Event {
	t.Helper()
	body, _ := json.Marshal(fields)
	ev, err := claudecode.Adapter{}.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestSpawnCheck_OpenClawReservation: OpenClaw names a run by its child, reported a moment after
// the plugin's check, so an allowed sessions_spawn holds a reservation among its parent's active
// children until then: with spawn.max_children 1, of three back-to-back checks one is allowed;
// a repeat of the allowed call (the plugin registered twice) is allowed again without a second
// place. The reservation is no run: once the child's run appears the parent has that one run
// and one active child, not two; and a reservation whose child never appears expires.
func TestSpawnCheck_OpenClawReservation(t *testing.T) {
	const parent, child = "agent:main:main", "agent:main:subagent:c1"
	e := openEngine(t, cct.NewTree(t, "unused"), func(e *engine.Engine) {
		reg, err := adapters.NewRegistry(openclaw.Registration())
		if err != nil {
			t.Fatal(err)
		}
		e.Harnesses = reg
		shortRuns(time.Hour, 600*time.Millisecond, time.Hour)(e) // reservations expire within the ghost grace
		e.Config.Spawn = engine.SpawnLimits{MaxChildren: 1, Mode: engine.SpawnEnforce}
	})
	consume := func(ev adapters.Event) {
		t.Helper()
		ev.Harness, ev.Scope = "openclaw", "main"
		if err := e.Consume(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
	}
	check := func(call string) engine.SpawnDecision {
		t.Helper()
		d, err := e.SpawnCheck(t.Context(), engine.SpawnRequest{Harness: "openclaw", Session: parent, CallID: call, Prompt: "dig"})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	consume(adapters.Event{Kind: adapters.KindSessionStart, SessionID: parent})

	const full = "parent already has 1 active sub-agents (spawn.max_children 1)"
	var allowed []string
	for _, call := range []string{"call_1", "call_2", "call_3"} {
		if d := check(call); d.Allow {
			allowed = append(allowed, call)
		} else if d.Reason != full {
			t.Errorf("%s refused for %q, want %q", call, d.Reason, full)
		}
	}
	if !slices.Equal(allowed, []string{"call_1"}) {
		t.Fatalf("back-to-back sessions_spawn allowed: %v, want only call_1", allowed)
	}
	if d := check("call_1"); !d.Allow {
		t.Errorf("call_1 asked again: got %+v, want allowed again", d)
	}
	if d := check("call_2"); d.Allow {
		t.Errorf("call_2 asked again: got %+v, want refused again", d)
	}

	// The Gateway reports the child: its run takes the reservation's place.
	consume(adapters.Event{Kind: adapters.KindSpawn, SessionID: parent, Spawn: &adapters.Spawn{ToolUseID: child, ChildSessionID: child, Prompt: "dig"}})
	runs, err := e.Store.ListRuns(t.Context(), "main", kv.RunFilter{ParentID: parent})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		if r.Status != kv.RunRefused {
			ids = append(ids, r.ID)
		}
	}
	if !slices.Equal(ids, []string{child}) {
		t.Errorf("the parent's runs besides the refused: %v, want the child's alone", ids)
	}
	if d := check("call_4"); d.Allow || d.Reason != full {
		t.Errorf("spawn while the child runs: got %+v, want refused with %q (one active child, the reservation released)", d, full)
	}
	consume(adapters.Event{Kind: adapters.KindSpawnResult, SessionID: parent, Spawn: &adapters.Spawn{ToolUseID: child, ChildSessionID: child},
		Result: &adapters.Result{AgentID: child, Status: "completed", Text: "done"}})
	if d := check("call_5"); !d.Allow {
		t.Fatalf("spawn after the child returned: got %+v, want allowed", d)
	}

	// call_5 starts no child: its reservation expires.
	if d := check("call_6"); d.Allow {
		t.Errorf("spawn while call_5 holds its place: got %+v, want refused", d)
	}
	time.Sleep(700 * time.Millisecond)
	if d := check("call_7"); !d.Allow {
		t.Errorf("spawn after call_5's reservation expired: got %+v, want allowed", d)
	}

	// A refusal the plugin stopped waiting for: OpenClaw runs the call, and the child's run
	// will be its own; the refused record says so, and the spawn holds a place meanwhile.
	late, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.SpawnCheck(late, engine.SpawnRequest{Harness: "openclaw", Session: parent, CallID: "call_8"}); err == nil {
		t.Fatal("check past its deadline: want the context's error")
	}
	waitFor(t, "call_8 recorded as not delivered", func() bool {
		r, err := e.Store.GetRun(t.Context(), "main", "call_8")
		return err == nil && r.Status == kv.RunRefused && r.Reason == "refusal not delivered: the harness went ahead ("+full+")"
	})
	if d := check("call_9"); d.Allow || d.Reason != "parent already has 2 active sub-agents (spawn.max_children 1)" {
		t.Errorf("spawn while call_7 and call_8 hold places: got %+v", d)
	}
}
