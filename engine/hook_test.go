package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
)

// The decisions of a harness that calls hooks (Claude Code), driven through its adapter's
// decoder as the hook endpoint does: inheritance at a sub-agent's start, pairing by type and
// order, provisional pairings corrected, the compaction agent skipped, transcript ingest.

func TestInheritAtSubagentStart(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	mustHook(t, e, cct.Event(tr, S, "SessionStart", map[string]any{"source": "startup"}))
	cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "Port the parser to Go. MARK-7781. Never touch vendor/."), cct.AssistantLine("a1", "Reading parse.c now."))
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Port the parser to Go. MARK-7781. Never touch vendor/."}))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_1", "Explore", "Find every caller of parse()", ""))
	// The spawn's checkpoint is written in the background; a SubagentStart waits for it only
	// SpawnRecordWait (5 ms here), so on a loaded machine the first reply could go without its
	// digest and the repeated one with it. Let it land first: the test is about idempotence.
	waitFor(t, "the spawn checkpoint", func() bool { return checkpointCount(t, e, S) > 0 })
	got := mustHook(t, e, cct.Start(tr, S, "agent1", "Explore"))

	for _, want := range []string{"## Inherited from Parent Session", "MARK-7781", "Reading parse.c now.", "Never touch vendor/"} {
		if !strings.Contains(got, want) {
			t.Errorf("inherited block lacks %q:\n%s", want, got)
		}
	}
	child := mustSession(t, e, S+":agent1")
	if child.ParentID != S || child.Depth != 1 || child.Objective != "Find every caller of parse()" || child.AgentType != "Explore" {
		t.Fatalf("child: got %+v", child)
	}
	if r := mustRun(t, e, "toolu_1"); r.ChildID != S+":agent1" || r.Status != kv.RunRunning || r.Provisional {
		t.Fatalf("run: got %+v", r)
	}
	// A repeated SubagentStart is idempotent: same reply, no second pairing.
	if again := mustHook(t, e, cct.Start(tr, S, "agent1", "Explore")); again != got {
		t.Fatalf("repeated SubagentStart: reply changed")
	}

	// The sub-agent finishes: SubagentStop then PostToolUse record the result.
	sub := filepath.Join(filepath.Dir(tr.Transcript), "S", "subagents", "agent-agent1.jsonl")
	cct.AppendLines(t, sub, cct.UserLine("c1", "Find every caller of parse()"), cct.AssistantLine("c2", "Three callers."))
	mustHook(t, e, cct.Event(tr, S, "SubagentStop", map[string]any{"agent_id": "agent1", "agent_type": "Explore", "agent_transcript_path": sub, "last_assistant_message": "Three callers."}))
	mustHook(t, e, cct.Result(tr, S, "toolu_1", "agent1", "Three callers: a, b, c."))
	r := mustRun(t, e, "toolu_1")
	if r.Status != "completed" || r.Result != "Three callers: a, b, c." || r.Tokens != 1234 || r.DurationMs != 5678 {
		t.Fatalf("finished run: got %+v", r)
	}
	if c := mustSession(t, e, S+":agent1"); c.Status != kv.StatusEnded || c.TurnCount != 2 {
		t.Fatalf("finished child: got status %s turns %d", c.Status, c.TurnCount)
	}
}

func TestNothingToInherit(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	if got := mustHook(t, e, cct.Start(tr, S, "agent1", "Explore")); got != "" {
		t.Fatalf("parent with nothing: got %q, want no context", got)
	}
}

func TestInheritDisabled(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, func(e *engine.Engine) { e.Config.Passive = true })
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "objective here"}))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_1", "Explore", "task", ""))
	if got := mustHook(t, e, cct.Start(tr, S, "agent1", "Explore")); got != "" {
		t.Fatalf("inherit disabled: got %q", got)
	}
	if c := mustSession(t, e, S+":agent1"); c.ParentID != S {
		t.Fatalf("lineage is still recorded when inheritance is off: got %+v", c)
	}
}

// Two parallel spawns of the same type from different issuers (the root and a sub-agent): the
// start order is a guess, marked provisional, and corrected by the spawn results.
func TestProvisionalPairingCorrected(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "root objective"}))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_mid", "general-purpose", "middle task", ""))
	mustHook(t, e, cct.Start(tr, S, "mid", "general-purpose"))

	// Root spawns X (older), the sub-agent "mid" spawns Y; both Explore.
	mustHook(t, e, cct.Spawn(tr, S, "toolu_X", "Explore", "task X from root", ""))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_Y", "Explore", "task Y from mid", "mid"))
	// Y's sub-agent starts first: paired (wrongly) with the oldest candidate, X.
	mustHook(t, e, cct.Start(tr, S, "agentY", "Explore"))
	if r := mustRun(t, e, "toolu_X"); r.ChildID != S+":agentY" || !r.Provisional {
		t.Fatalf("guess: got %+v, want X provisionally paired with agentY", r)
	}
	mustHook(t, e, cct.Start(tr, S, "agentX", "Explore"))

	// The results say which is which.
	mustHook(t, e, cct.Result(tr, S, "toolu_Y", "agentY", "Y done"))
	mustHook(t, e, cct.Result(tr, S, "toolu_X", "agentX", "X done"))

	x, y := mustRun(t, e, "toolu_X"), mustRun(t, e, "toolu_Y")
	if x.ChildID != S+":agentX" || x.Provisional || y.ChildID != S+":agentY" || y.Provisional {
		t.Fatalf("after correction: X %+v, Y %+v", x, y)
	}
	cy, cx := mustSession(t, e, S+":agentY"), mustSession(t, e, S+":agentX")
	if cy.ParentID != S+":mid" || cy.Depth != 2 || cy.Objective != "task Y from mid" {
		t.Fatalf("agentY: got parent %q depth %d objective %q", cy.ParentID, cy.Depth, cy.Objective)
	}
	if cx.ParentID != S || cx.Depth != 1 || cx.Objective != "task X from root" {
		t.Fatalf("agentX: got parent %q depth %d objective %q", cx.ParentID, cx.Depth, cx.Objective)
	}
}

// Different types never pair with each other, whatever the start order.
func TestPairByType(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	started(t, e, tr, S)
	mustHook(t, e, cct.Spawn(tr, S, "toolu_A", "Explore", "explore it", ""))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_B", "Plan", "plan it", ""))
	mustHook(t, e, cct.Start(tr, S, "b", "Plan"))
	mustHook(t, e, cct.Start(tr, S, "a", "Explore"))
	if a, b := mustRun(t, e, "toolu_A"), mustRun(t, e, "toolu_B"); a.ChildID != S+":a" || b.ChildID != S+":b" || a.Provisional || b.Provisional {
		t.Fatalf("got A %+v B %+v", a, b)
	}
}

// The compaction agent's SubagentStop creates no session and no run.
func TestCompactionAgentIgnored(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	mustHook(t, e, cct.Event(tr, S, "SubagentStop", map[string]any{"agent_id": "acompact1", "agent_type": "", "last_assistant_message": "summary"}))
	if _, err := e.Store.GetSession(t.Context(), "default", S+":acompact1"); err == nil {
		t.Fatal("compaction agent recorded as a session")
	}
	runs, _ := e.Store.ListRuns(t.Context(), "default", kv.RunFilter{})
	if len(runs) != 0 {
		t.Fatalf("got %d runs", len(runs))
	}
}

// Without session_id (older Claude Code) the parent is the most recent active session of the
// project, and the guess is recorded.
func TestInferredParent(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "objective OBJ-1"}))
	got := mustHook(t, e, map[string]any{"hook_event_name": "SubagentStart", "cwd": "/work/app", "agent_id": "old1", "agent_type": "Explore"})
	c := mustSession(t, e, S+":old1")
	if c.ParentID != S || !c.ParentInferred {
		t.Fatalf("got %+v", c)
	}
	if !strings.Contains(got, "OBJ-1") {
		t.Fatalf("inferred parent's block lacks its objective: %q", got)
	}
}

func TestIngest(t *testing.T) {
	t.Run("PartialLineAndShrink", func(t *testing.T) {
		tr := cct.NewTree(t, "S")
		e := openEngine(t, tr, nil)
		cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "one"))
		// A partial last record is left for the next read.
		f, _ := os.OpenFile(tr.Transcript, os.O_APPEND|os.O_WRONLY, 0o644)
		f.WriteString(cct.UserLine("u2", "two")[:20])
		f.Close()
		mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "one"}))
		if n := mustSession(t, e, S).TurnCount; n != 1 {
			t.Fatalf("after partial line: got %d turns, want 1", n)
		}
		// The file is replaced by a shorter one holding u1 again and u3: re-read, no duplicate.
		os.Remove(tr.Transcript)
		cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "one"), cct.UserLine("u3", "three"))
		mustHook(t, e, cct.Event(tr, S, "Stop", nil))
		turns, _ := e.Store.Turns(t.Context(), "default", S, 0, 0)
		if len(turns) != 2 || turns[0].SourceID != "u1" || turns[1].SourceID != "u3" {
			t.Fatalf("after replace: got %+v", turns)
		}
		mustHook(t, e, cct.Event(tr, S, "Stop", nil))
		if n := mustSession(t, e, S).TurnCount; n != 2 {
			t.Fatalf("repeat read: got %d turns, want 2", n)
		}
	})
	t.Run("MissingFile", func(t *testing.T) {
		tr := cct.NewTree(t, "S")
		e := openEngine(t, tr, nil)
		mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "p"}))
		cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "one"))
		mustHook(t, e, cct.Event(tr, S, "Stop", nil))
		if n := mustSession(t, e, S).TurnCount; n != 1 {
			t.Fatalf("got %d turns after the file appeared", n)
		}
	})
	t.Run("ErrOutsideRoots", func(t *testing.T) {
		tr := cct.NewTree(t, "S")
		e := openEngine(t, tr, nil)
		outside := filepath.Join(t.TempDir(), "secret.jsonl")
		cct.AppendLines(t, outside, cct.UserLine("u1", "secret"))
		// A symlink inside the root pointing outside is refused too.
		link := filepath.Join(filepath.Dir(tr.Transcript), "L.jsonl")
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		for i, p := range []string{outside, link, filepath.Join(tr.Root, "..", "..", filepath.Base(filepath.Dir(outside)), "secret.jsonl")} {
			sid := fmt.Sprintf("5e550000-0000-4000-8000-0000000000a%d", i)
			mustHook(t, e, map[string]any{"session_id": sid, "transcript_path": p, "cwd": "/w", "hook_event_name": "UserPromptSubmit", "prompt": "p"})
			if n := mustSession(t, e, sid).TurnCount; n != 0 {
				t.Fatalf("%s: read %d turns from outside the roots", p, n)
			}
		}
	})
	t.Run("ReadCap", func(t *testing.T) {
		tr := cct.NewTree(t, "S")
		e := openEngine(t, tr, func(e *engine.Engine) { e.Config.HookReadBytes, e.Config.MaxReadBytes = 300, 300 })
		cct.AppendLines(t, tr.Transcript, cct.UserLine("big", strings.Repeat("x", 1000)), cct.UserLine("u1", "a"), cct.UserLine("u2", "b"), cct.UserLine("u3", "c"))
		// More than a hook reads: the rest is read in the background, 300 bytes at a time.
		mustHook(t, e, cct.Event(tr, S, "Stop", nil))
		var turns []kv.Turn
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if turns, _ = e.Store.Turns(t.Context(), "default", S, 0, 0); len(turns) >= 3 {
				break
			}
		}
		var ids []string
		for _, tt := range turns {
			ids = append(ids, tt.SourceID)
		}
		if strings.Join(ids, ",") != "u1,u2,u3" {
			t.Fatalf("with a 300-byte cap: got turns %v, want the oversized record skipped and the rest read", ids)
		}
	})
}

// Claude Code writes its transcript asynchronously: the spawning turn can land after the
// sub-agent started. SubagentStart waits for it (boundedly) so the tail holds the parent's latest
// work.
func TestSpawnRecordAwaited(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, func(e *engine.Engine) { e.Config.SpawnRecordWait = 2 * time.Second })
	cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "Port the parser."))
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Port the parser."}))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_late", "Explore", "find callers", ""))
	go func() {
		time.Sleep(100 * time.Millisecond)
		cct.AppendLines(t, tr.Transcript, cct.ToolUseLine("a1", "toolu_late", "LATE-TURN: delegating the search."))
	}()
	got := mustHook(t, e, cct.Start(tr, S, "agent1", "Explore"))
	if !strings.Contains(got, "LATE-TURN") {
		t.Fatalf("the inherited tail lacks the spawning turn written after SubagentStart arrived:\n%s", got)
	}
}

// The last candidate left after a guess is a guess too: the earlier guess may have taken its
// spawn. Both are corrected by the results.
func TestPairingByEliminationIsProvisional(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "root objective"}))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_a1", "general-purpose", "middle task", ""))
	mustHook(t, e, cct.Start(tr, S, "a1", "general-purpose"))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_B", "Explore", "task B from root", ""))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_C", "Explore", "task C from a1", "a1"))
	mustHook(t, e, cct.Start(tr, S, "a2", "Explore")) // guessed: B (truly C's)
	mustHook(t, e, cct.Start(tr, S, "a3", "Explore")) // by elimination: C (truly B's)
	if c := mustRun(t, e, "toolu_C"); c.ChildID != S+":a3" || !c.Provisional {
		t.Fatalf("pairing by elimination after a guess: got %+v, want provisional", c)
	}
	mustHook(t, e, cct.Result(tr, S, "toolu_C", "a2", "C done"))
	mustHook(t, e, cct.Result(tr, S, "toolu_B", "a3", "B done"))
	b, c := mustRun(t, e, "toolu_B"), mustRun(t, e, "toolu_C")
	if b.ChildID != S+":a3" || b.Provisional || c.ChildID != S+":a2" || c.Provisional {
		t.Fatalf("after results: B %+v, C %+v", b, c)
	}
	if a2, a3 := mustSession(t, e, S+":a2"), mustSession(t, e, S+":a3"); a2.ParentID != S+":a1" || a3.ParentID != S || a2.Depth != 2 || a3.Depth != 1 {
		t.Fatalf("parents after correction: a2 %q/%d, a3 %q/%d", a2.ParentID, a2.Depth, a3.ParentID, a3.Depth)
	}
}

// TestInheritedWindowWidens: when the parent's newest 40 turns hold little text, the window
// widens to 200, so a constraint stated before a long reply still reaches the child's active
// constraints.
func TestInheritedWindowWidens(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, noPeriodic)
	lines := []string{cct.UserLine("u-c", "Never touch vendor/ under any circumstances."), cct.AssistantLine("a-long", strings.Repeat("long reply ", 700))}
	for i := range 20 {
		lines = append(lines, exchange("S", i, "ok?", "ok")...)
	}
	cct.AppendLines(t, tr.Transcript, lines...)
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Port the parser."}))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_1", "Explore", "find callers"))
	got := mustHook(t, e, cct.Start(tr, S, "agent1", "Explore"))
	if !strings.Contains(got, "### Active constraints\n- Never touch vendor/ under any circumstances.") {
		t.Fatalf("constraint stated before the long reply missing from the active constraints:\n%s", got)
	}
}

// TestSubagentCheckpointsNotRecovered: a sub-agent's checkpoints (its own spawns, or one asked
// for) are never what a new session of the project recovers: that is another top-level
// session's latest.
func TestSubagentCheckpointsNotRecovered(t *testing.T) {
	tr := cct.NewTree(t, "P")
	e := openEngine(t, tr, noPeriodic)
	cct.AppendLines(t, tr.Transcript, exchange("P", 0, "TOP-OBJECTIVE: port the parser", "ok")...)
	mustHook(t, e, cct.Event(tr, P, "UserPromptSubmit", map[string]any{"prompt": "TOP-OBJECTIVE: port the parser"}))
	if _, err := e.Checkpoint(t.Context(), "default", P, kv.TriggerExplicit, engine.Statements{}); err != nil {
		t.Fatal(err)
	}
	mustHook(t, e, cct.Spawn(tr, P, "toolu_1", "general-purpose", "CHILD-TASK: list callers"))
	mustHook(t, e, cct.Start(tr, P, "a1", "general-purpose"))
	mustHook(t, e, cct.Spawn(tr, P, "toolu_2", "general-purpose", "GRANDCHILD-TASK", "a1"))
	if _, err := e.Checkpoint(t.Context(), "default", P+":a1", kv.TriggerExplicit, engine.Statements{}); err != nil {
		t.Fatal(err)
	}
	got := mustHook(t, e, map[string]any{"session_id": Q, "transcript_path": tr.Transcript, "cwd": "/work/app", "hook_event_name": "SessionStart", "source": "startup"})
	if !strings.Contains(got, "## Recovered Session Checkpoint") || !strings.Contains(got, "TOP-OBJECTIVE") || strings.Contains(got, "CHILD-TASK") {
		t.Fatalf("a new session recovered:\n%s\nwant the top-level session's checkpoint, never the sub-agent's", got)
	}
}

// TestReinforcement_PreCompactionCheckpoint: after a compaction the reinforcement hands back the
// checkpoint taken before it, however many checkpoints (spawns, explicit ones) came after.
func TestReinforcement_PreCompactionCheckpoint(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, noPeriodic)
	cct.AppendLines(t, tr.Transcript, exchange("S", 0, "Port the parser. PRE-MARK-1", "Reading parse.c.")...)
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Port the parser. PRE-MARK-1"}))
	mustHook(t, e, cct.Event(tr, S, "PreCompact", map[string]any{"trigger": "manual", "custom_instructions": "keep PRE-MARK-2"}))
	for range 25 {
		if _, err := e.Checkpoint(t.Context(), "default", S, kv.TriggerExplicit, engine.Statements{}); err != nil {
			t.Fatal(err)
		}
	}
	got := mustHook(t, e, cct.Event(tr, S, "SessionStart", map[string]any{"source": "compact"}))
	if !strings.Contains(got, "Checkpoint taken before the compaction:") || !strings.Contains(got, "PRE-MARK-2") {
		t.Fatalf("reinforcement without the pre-compaction checkpoint:\n%s", got)
	}
}

// A second spawn with no new turns in between still tells its child what the first sub-agent
// returned: a finished run makes the spawn checkpoint stale even when the transcript is not.
func TestSiblingResultInherited(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "Port the parser to Go."), cct.AssistantLine("a1", "Delegating the search."))
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Port the parser to Go."}))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_1", "Explore", "Find every caller of parse()", ""))
	first := mustHook(t, e, cct.Start(tr, S, "agent1", "Explore"))
	if strings.Contains(first, "Sub-agents finished") {
		t.Fatalf("first child: no sibling has finished yet:\n%s", first)
	}
	mustHook(t, e, cct.Event(tr, S, "SubagentStop", map[string]any{"agent_id": "agent1", "agent_type": "Explore", "last_assistant_message": "Three callers."}))
	mustHook(t, e, cct.Result(tr, S, "toolu_1", "agent1", "SIBLING-4412: three callers in a.go, b.go, c.go."))

	mustHook(t, e, cct.Spawn(tr, S, "toolu_2", "Plan", "Plan the port of those callers", ""))
	second := mustHook(t, e, cct.Start(tr, S, "agent2", "Plan"))
	if !strings.Contains(second, "Sub-agents finished") || !strings.Contains(second, "SIBLING-4412") {
		t.Fatalf("second child's block lacks its finished sibling's result:\n%s", second)
	}
}

// TestStrayEvents (issue 16, item 7): an event that starts no session (Stop, SessionEnd,
// PreCompact, a spawn and its result, SubagentStop, SubagentStart) naming a session heirloom
// never saw, whose transcript shows no turn, stores nothing and answers with nothing. When the
// transcript does show turns (heirloom started while the session ran), the session is recorded
// with them, and a SubagentStart records its sub-agent under it.
func TestStrayEvents(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	for _, ev := range []map[string]any{
		cct.Event(tr, S, "Stop", nil),
		cct.Event(tr, S, "SessionEnd", nil),
		cct.Event(tr, S, "PreCompact", map[string]any{"trigger": "manual"}),
		cct.Spawn(tr, S, "toolu_1", "Explore", "a task"),
		cct.Result(tr, S, "toolu_1", "a1", "done"),
		cct.Event(tr, S, "SubagentStop", map[string]any{"agent_id": "a1", "agent_type": "Explore"}),
		cct.Start(tr, S, "a1", "Explore"),
	} {
		if got := mustHook(t, e, ev); got != "" {
			t.Errorf("%v of an unseen session: got context %q, want none", ev["hook_event_name"], got)
		}
	}
	sessions, err := e.Store.ListSessions(t.Context(), "default", kv.SessionFilter{})
	if err != nil || len(sessions) != 0 {
		t.Fatalf("sessions after stray events: %+v, %v; want none", sessions, err)
	}
	if runs, err := e.Store.ListRuns(t.Context(), "default", kv.RunFilter{}); err != nil || len(runs) != 0 {
		t.Fatalf("runs after stray events: %+v, %v; want none", runs, err)
	}

	// Started before heirloom: its transcript shows it runs.
	cct.AppendLines(t, tr.Transcript, exchange("S", 0, "Port the parser. MIDMARK.", "Reading parse.c.")...)
	if got := mustHook(t, e, cct.Start(tr, S, "a1", "Explore")); !strings.Contains(got, "MIDMARK") {
		t.Errorf("a sub-agent of a session already running inherits nothing of it:\n%s", got)
	}
	if c := mustSession(t, e, S+":a1"); c.ParentID != S || c.Depth != 1 {
		t.Errorf("sub-agent of a session already running: parent %q depth %d, want S and 1", c.ParentID, c.Depth)
	}
	other := cct.Tree{Root: tr.Root, Transcript: filepath.Join(filepath.Dir(tr.Transcript), "T.jsonl")}
	cct.AppendLines(t, other.Transcript, exchange("T", 0, "Write the docs.", "Done.")...)
	mustHook(t, e, cct.Event(other, T, "Stop", nil))
	if s := mustSession(t, e, T); s.TurnCount != 2 || s.Status != kv.StatusActive {
		t.Errorf("a session first heard of at its Stop: %d turns, status %s; want its 2 turns, active", s.TurnCount, s.Status)
	}
}
