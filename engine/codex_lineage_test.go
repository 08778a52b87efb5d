package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/adapters/codex"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/search"
)

// codexWorld is a Codex CODEX_HOME/sessions folder heirloom may read, and an engine that
// knows Codex.
type codexWorld struct {
	t    *testing.T
	e    *engine.Engine
	dir  string
	root string // the root thread's id
}

const codexRoot = "01a21df2-0000-7000-8000-000000000001"

func newCodexWorld(t *testing.T) *codexWorld {
	t.Helper()
	dir := t.TempDir()
	store := kv.NewStore(t.TempDir())
	store.Index = search.Analyzer{}
	store.Ledger = inject.Ledger{}
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	reg, err := adapters.NewRegistry(claudecode.Registration(), codex.Registration())
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(store, "default")
	e.Harnesses = reg
	e.Config.TranscriptRoots = []string{dir}
	e.Config.SpawnRecordWait = 5 * time.Millisecond
	if err := e.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Close(t.Context())
		_ = store.Close()
	})
	w := &codexWorld{t: t, e: e, dir: dir, root: codexRoot}
	w.rollout(codexRoot, "", 0, "ROOT-OBJECTIVE: audit the parser")
	return w
}

// rollout writes thread id's rollout: its session_meta (naming parent at depth, for a
// sub-agent) and one user message holding task.
func (w *codexWorld) rollout(id, parent string, depth int, task string) string {
	w.t.Helper()
	meta := map[string]any{"id": id, "session_id": w.root, "cwd": w.dir}
	if parent != "" {
		meta["parent_thread_id"] = parent
		meta["source"] = map[string]any{"subagent": map[string]any{"thread_spawn": map[string]any{"parent_thread_id": parent, "depth": depth}}}
	}
	lines := []map[string]any{
		{"timestamp": "2026-11-27T10:00:00Z", "ordinal": 0, "type": "session_meta", "payload": meta},
		{"timestamp": "2026-11-27T10:00:01Z", "ordinal": 1, "type": "response_item", "payload": map[string]any{
			"type": "message", "id": "msg-" + id, "role": "user", "content": []any{map[string]any{"type": "input_text", "text": task}}}},
	}
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(append(j, '\n'))
	}
	p := w.path(id)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *codexWorld) path(id string) string {
	return filepath.Join(w.dir, "rollout-2026-11-27T10-00-00-"+id+".jsonl")
}

// hook sends one Codex hook call, from the root when agent is "", else from sub-agent agent.
func (w *codexWorld) hook(event, agent string, fields map[string]any) adapters.Answer {
	w.t.Helper()
	p := map[string]any{"session_id": w.root, "cwd": w.dir, "hook_event_name": event, "transcript_path": w.path(w.root), "turn_id": "t1"}
	if agent != "" {
		p["agent_id"], p["agent_type"], p["transcript_path"] = agent, "default", w.path(agent)
	}
	for k, v := range fields {
		p[k] = v
	}
	body, _ := json.Marshal(p)
	ev, err := codex.Adapter{}.Decode(body)
	if err != nil {
		w.t.Fatalf("decode %s: %v", event, err)
	}
	a, err := w.e.Hook(w.t.Context(), ev)
	if err != nil {
		w.t.Fatalf("%s: %v", event, err)
	}
	return a
}

func (w *codexWorld) spawn(issuer, callID, task string) {
	w.hook("PreToolUse", issuer, map[string]any{"tool_name": "spawn_agent", "tool_use_id": callID, "tool_input": map[string]any{"message": task}})
}

func (w *codexWorld) receipt(issuer, callID, task, child string) {
	w.hook("PostToolUse", issuer, map[string]any{"tool_name": "spawn_agent", "tool_use_id": callID,
		"tool_input": map[string]any{"message": task}, "tool_response": `{"agent_id":"` + child + `","nickname":"Kant"}`})
}

// start sends the SubagentStart of child, whose rollout names parent.
func (w *codexWorld) start(child, parent string, depth int, task string) string {
	w.t.Helper()
	w.rollout(child, parent, depth, task)
	return w.hook("SubagentStart", child, nil).Context
}

func (w *codexWorld) id(agent string) string { return w.root + ":" + agent }

// run is heirloom's id for the run of spawn_agent call callID: scoped by the root session.
func (w *codexWorld) run(callID string) string { return codex.RunID(w.root, callID) }

// TestCodexLineage_MetaNamesTheParent: two spawns of one type wait, the root's first; a
// grandchild whose rollout names the child as its parent starts before either receipt came.
// heirloom pairs it with the child's spawn, exactly, not with the older one of the root.
func TestCodexLineage_MetaNamesTheParent(t *testing.T) {
	w := newCodexWorld(t)
	w.hook("SessionStart", "", map[string]any{"source": "startup"})
	w.hook("UserPromptSubmit", "", map[string]any{"prompt": "ROOT-OBJECTIVE: audit the parser"})
	w.spawn("", "call_c1", "CHILD-TASK: read the lexer")
	w.receipt("", "call_c1", "CHILD-TASK: read the lexer", "child-1")
	w.start("child-1", codexRoot, 1, "CHILD-TASK: read the lexer")

	w.spawn("", "call_r2", "ROOT-SECOND: another helper")             // the root's, older
	w.spawn("child-1", "call_g1", "GRAND-TASK: read the token table") // the child's
	block := w.start("grand-1", "child-1", 2, "GRAND-TASK: read the token table")

	g := mustSession(t, w.e, w.id("grand-1"))
	if g.ParentID != w.id("child-1") || g.Depth != 2 || g.Objective != "GRAND-TASK: read the token table" {
		t.Errorf("grandchild: parent %q depth %d objective %q, want %q 2 GRAND-TASK…", g.ParentID, g.Depth, g.Objective, w.id("child-1"))
	}
	if r := mustRun(t, w.e, w.run("call_g1")); r.ChildID != w.id("grand-1") || r.Provisional {
		t.Errorf("run call_g1: child %q provisional %v, want %q, exact", r.ChildID, r.Provisional, w.id("grand-1"))
	}
	if r := mustRun(t, w.e, w.run("call_r2")); r.ChildID != "" || r.Status != kv.RunPending {
		t.Errorf("run call_r2 (the root's): child %q status %s, want none, pending", r.ChildID, r.Status)
	}
	if !strings.Contains(block, "Objective: CHILD-TASK: read the lexer") {
		t.Errorf("the grandchild's block does not name the child's objective:\n%s", block)
	}
}

// TestCodexLineage_ReceiptNamesTheChild: the root spawns two helpers of one type; the receipt
// of the SECOND names its sub-agent before that sub-agent starts. Its start pairs with the
// second spawn, exactly, though the first is older.
func TestCodexLineage_ReceiptNamesTheChild(t *testing.T) {
	w := newCodexWorld(t)
	w.hook("SessionStart", "", map[string]any{"source": "startup"})
	w.hook("UserPromptSubmit", "", map[string]any{"prompt": "ROOT-OBJECTIVE: audit the parser"})
	w.spawn("", "call_a", "TASK-A: the lexer")
	w.spawn("", "call_b", "TASK-B: the writer")
	w.receipt("", "call_b", "TASK-B: the writer", "agent-b")
	if r := mustRun(t, w.e, w.run("call_b")); r.ChildID != "" || r.Status != kv.RunPending {
		t.Fatalf("after its receipt, run call_b: child %q status %s, want none yet, pending", r.ChildID, r.Status)
	}
	block := w.start("agent-b", codexRoot, 1, "TASK-B: the writer")
	b := mustSession(t, w.e, w.id("agent-b"))
	if b.Objective != "TASK-B: the writer" || b.ParentID != codexRoot {
		t.Errorf("agent-b: objective %q parent %q, want TASK-B… and the root", b.Objective, b.ParentID)
	}
	if r := mustRun(t, w.e, w.run("call_b")); r.ChildID != w.id("agent-b") || r.Provisional || r.Status != kv.RunRunning {
		t.Errorf("run call_b: child %q provisional %v status %s, want agent-b, exact, running", r.ChildID, r.Provisional, r.Status)
	}
	if r := mustRun(t, w.e, w.run("call_a")); r.ChildID != "" {
		t.Errorf("run call_a took child %q; it has none yet", r.ChildID)
	}
	if !strings.Contains(block, "TASK-B: the writer") || strings.Contains(block, "TASK-A") {
		t.Errorf("agent-b's block names the wrong task:\n%s", block)
	}

	// The sub-agent's prompt is its own: the root's objective stays, the sub-agent's
	// transcript is read.
	w.hook("UserPromptSubmit", "agent-b", map[string]any{"prompt": "TASK-B: the writer"})
	if root := mustSession(t, w.e, codexRoot); root.Objective != "ROOT-OBJECTIVE: audit the parser" {
		t.Errorf("root objective %q after a sub-agent's prompt", root.Objective)
	}
	turns, err := w.e.Store.Turns(t.Context(), "default", w.id("agent-b"), 0, 0)
	if err != nil || len(turns) == 0 || turns[0].Text != "TASK-B: the writer" {
		t.Errorf("agent-b's transcript: %v %v, want its task read", turns, err)
	}

	// Its SubagentStop ends the run with its last message.
	w.hook("SubagentStop", "agent-b", map[string]any{"agent_transcript_path": w.path("agent-b"), "last_assistant_message": "RESULT-B", "transcript_path": w.path(codexRoot)})
	if r := mustRun(t, w.e, w.run("call_b")); r.Status != kv.RunCompleted || r.Result != "RESULT-B" {
		t.Errorf("run call_b after SubagentStop: %s %q, want completed RESULT-B", r.Status, r.Result)
	}
}

// TestCodexCompaction: PreCompact, PostCompact, then SessionStart(resume) and
// SessionStart(compact), as Codex 0.169 sends them when resuming compacts: the reinforcement
// comes once, in the first start's reply, in place of the recovered checkpoint (both replies
// reach the same request).
func TestCodexCompaction(t *testing.T) {
	w := newCodexWorld(t)
	w.hook("SessionStart", "", map[string]any{"source": "startup"})
	w.hook("UserPromptSubmit", "", map[string]any{"prompt": "ROOT-OBJECTIVE: audit the parser"})
	w.hook("PreCompact", "", map[string]any{"trigger": "auto"})
	if a := w.hook("PostCompact", "", map[string]any{"trigger": "auto"}); a.Context != "" {
		t.Errorf("PostCompact answered context %q; Codex's schema takes none", a.Context)
	}
	got := w.hook("SessionStart", "", map[string]any{"source": "resume"}).Context
	if !strings.HasPrefix(got, "[Objective Reinforcement]") || !strings.Contains(got, "ROOT-OBJECTIVE: audit the parser") {
		t.Errorf("SessionStart(resume) after the compaction: %q, want the reinforcement with the objective", got)
	}
	if strings.Contains(got, "## Recovered Session Checkpoint") {
		t.Errorf("SessionStart(resume) gave the recovered checkpoint beside the reinforcement: the objective twice")
	}
	if again := w.hook("SessionStart", "", map[string]any{"source": "compact"}).Context; again != "" {
		t.Errorf("a repeated SessionStart(compact) in the same epoch got %q, want nothing", again)
	}
	if s := mustSession(t, w.e, codexRoot); s.Compactions != 1 {
		t.Errorf("compactions %d, want 1 (PostCompact and SessionStart(compact) are one)", s.Compactions)
	}
}

// TestCodexLineage_StartBeforeReceipt: two spawns of the root wait; B's sub-agent starts before
// any receipt and is guessed onto the older spawn, A. A's receipt then names another sub-agent,
// which starts: it takes A exactly, and B's late receipt moves B's sub-agent to B. Both runs
// end exact, each sub-agent with its own task.
func TestCodexLineage_StartBeforeReceipt(t *testing.T) {
	w := newCodexWorld(t)
	w.hook("SessionStart", "", map[string]any{"source": "startup"})
	w.hook("UserPromptSubmit", "", map[string]any{"prompt": "ROOT-OBJECTIVE: audit the parser"})
	w.spawn("", "call_a", "TASK-A: the lexer")
	w.spawn("", "call_b", "TASK-B: the writer")
	w.start("agent-b", codexRoot, 1, "TASK-B: the writer")
	if r := mustRun(t, w.e, w.run("call_a")); r.ChildID != w.id("agent-b") || !r.Provisional {
		t.Fatalf("agent-b, started first, is on run call_a provisional %v (child %q): the test needs the guess", r.Provisional, r.ChildID)
	}
	w.receipt("", "call_a", "TASK-A: the lexer", "agent-a")
	w.start("agent-a", codexRoot, 1, "TASK-A: the lexer")
	w.receipt("", "call_b", "TASK-B: the writer", "agent-b")
	for _, c := range []struct{ run, agent, task string }{{"call_a", "agent-a", "TASK-A: the lexer"}, {"call_b", "agent-b", "TASK-B: the writer"}} {
		if r := mustRun(t, w.e, w.run(c.run)); r.ChildID != w.id(c.agent) || r.Provisional || r.Status != kv.RunRunning {
			t.Errorf("run %s: child %q provisional %v status %s, want %s, exact, running", c.run, r.ChildID, r.Provisional, r.Status, c.agent)
		}
		if s := mustSession(t, w.e, w.id(c.agent)); s.Objective != c.task {
			t.Errorf("%s: objective %q, want %q", c.agent, s.Objective, c.task)
		}
	}
}

// TestCodexLineage_ReceiptOfAnUnseenSpawn: heirloom missed a spawn's PreToolUse and its
// sub-agent started with no run to pair; the receipt then records the run with its sub-agent.
func TestCodexLineage_ReceiptOfAnUnseenSpawn(t *testing.T) {
	w := newCodexWorld(t)
	w.hook("SessionStart", "", map[string]any{"source": "startup"})
	w.start("agent-x", codexRoot, 1, "TASK-X: late")
	w.receipt("", "call_x", "TASK-X: late", "agent-x")
	if r := mustRun(t, w.e, w.run("call_x")); r.ChildID != w.id("agent-x") || r.Status != kv.RunRunning || r.Provisional {
		t.Errorf("run call_x: child %q status %s provisional %v, want agent-x, running, exact", r.ChildID, r.Status, r.Provisional)
	}
}

// TestCodexLineage_NamedParentNotStored: a grandchild's rollout names a child heirloom never
// stored (heirloom started while the child ran): the grandchild is filed under the root,
// marked as a guess, rather than lost.
func TestCodexLineage_NamedParentNotStored(t *testing.T) {
	w := newCodexWorld(t)
	w.hook("SessionStart", "", map[string]any{"source": "startup"})
	w.rollout("child-1", codexRoot, 1, "CHILD-TASK: unseen")
	block := w.start("grand-1", "child-1", 2, "GRAND-TASK: dig")
	g := mustSession(t, w.e, w.id("grand-1"))
	if g.ParentID != codexRoot || !g.ParentInferred {
		t.Errorf("grandchild: parent %q inferred %v, want the root, inferred", g.ParentID, g.ParentInferred)
	}
	if !strings.HasPrefix(block, "## Inherited from Parent Session") {
		t.Errorf("the grandchild got no block from its root: %q", block)
	}
}

// TestCodexLineage_CallIDsPerSession: two sessions whose provider numbers calls alike
// ("call_1" in each) get a run each, every run with its own sub-agent and task.
func TestCodexLineage_CallIDsPerSession(t *testing.T) {
	w := newCodexWorld(t)
	other := &codexWorld{t: t, e: w.e, dir: w.dir, root: "01a21df2-0000-7000-8000-000000000002"}
	other.rollout(other.root, "", 0, "OTHER-OBJECTIVE")
	for _, s := range []*codexWorld{w, other} {
		s.hook("SessionStart", "", map[string]any{"source": "startup"})
		task := "TASK of " + s.root
		s.spawn("", "call_1", task)
		s.receipt("", "call_1", task, "agent-"+s.root[len(s.root)-1:])
		s.start("agent-"+s.root[len(s.root)-1:], s.root, 1, task)
	}
	for _, s := range []*codexWorld{w, other} {
		r := mustRun(t, w.e, s.run("call_1"))
		if r.RootID != s.root || r.ChildID != s.id("agent-"+s.root[len(s.root)-1:]) || r.Prompt != "TASK of "+s.root {
			t.Errorf("run %s: root %q child %q prompt %q, want its own session's", r.ID, r.RootID, r.ChildID, r.Prompt)
		}
	}
}
