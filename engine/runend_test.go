package engine_test

import (
	"path/filepath"
	"testing"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// TestEndReasons_ClaudeCode: every way Claude Code reports a sub-agent's end sets the run's end
// reason and turns: the spawn's result (completed), its failure (failed), the user's interrupt
// (killed), a background launch that keeps the run open until its SubagentStop.
func TestEndReasons_ClaudeCode(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, noPeriodic)
	cct.AppendLines(t, tr.Transcript, exchange("S", 0, "Port the parser.", "Delegating.")...)
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Port the parser."}))
	start := func(tool, agent string) {
		t.Helper()
		mustHook(t, e, cct.Spawn(tr, S, tool, "Explore", "task "+tool, ""))
		mustHook(t, e, cct.Start(tr, S, agent, "Explore"))
	}
	failure := func(tool string, interrupt bool) map[string]any {
		return cct.Event(tr, S, "PostToolUseFailure", map[string]any{"tool_name": "Agent", "tool_use_id": tool,
			"tool_input": map[string]any{"prompt": "x"}, "error": "stopped", "is_interrupt": interrupt})
	}

	// Completed: SubagentStop, then the spawn's result; the turns are the child's stored ones.
	start("toolu_ok", "a1")
	sub := filepath.Join(filepath.Dir(tr.Transcript), "S", "subagents", "agent-a1.jsonl")
	cct.AppendLines(t, sub, cct.UserLine("c1", "task"), cct.AssistantLine("c2", "Three."), cct.AssistantLine("c3", "Done."))
	mustHook(t, e, cct.Event(tr, S, "SubagentStop", map[string]any{"agent_id": "a1", "agent_type": "Explore", "agent_transcript_path": sub, "last_assistant_message": "Done."}))
	if r := mustRun(t, e, "toolu_ok"); r.Status != kv.RunCompleted || r.EndReason != kv.EndCompleted || r.EndedAt.IsZero() {
		t.Errorf("after SubagentStop: %s / %s", r.Status, r.EndReason)
	}
	mustHook(t, e, cct.Result(tr, S, "toolu_ok", "a1", "Done: three callers."))
	if r := mustRun(t, e, "toolu_ok"); r.EndReason != kv.EndCompleted || r.Turns != 3 || r.Result != "Done: three callers." {
		t.Errorf("completed run: end reason %q, turns %d, result %q; want completed, 3 (the child's), the tool's", r.EndReason, r.Turns, r.Result)
	}

	// Claude Code writes transcripts asynchronously: at SubagentStop the sub-agent's may still be
	// empty. Its turns are read at the spawn's result.
	start("toolu_late", "a6")
	late := filepath.Join(filepath.Dir(tr.Transcript), "S", "subagents", "agent-a6.jsonl")
	mustHook(t, e, cct.Event(tr, S, "SubagentStop", map[string]any{"agent_id": "a6", "agent_type": "Explore", "agent_transcript_path": late, "last_assistant_message": "Late."}))
	cct.AppendLines(t, late, cct.UserLine("l1", "task"), cct.AssistantLine("l2", "Late."))
	mustHook(t, e, cct.Result(tr, S, "toolu_late", "a6", "Late."))
	if r := mustRun(t, e, "toolu_late"); r.Turns != 2 {
		t.Errorf("run whose transcript came after its SubagentStop: turns %d, want 2", r.Turns)
	}

	// ... and may finish writing it after the spawn's result: the turns are read a moment later.
	start("toolu_later", "a7")
	later := filepath.Join(filepath.Dir(tr.Transcript), "S", "subagents", "agent-a7.jsonl")
	mustHook(t, e, cct.Event(tr, S, "SubagentStop", map[string]any{"agent_id": "a7", "agent_type": "Explore", "agent_transcript_path": later, "last_assistant_message": "Later."}))
	mustHook(t, e, cct.Result(tr, S, "toolu_later", "a7", "Later."))
	cct.AppendLines(t, later, cct.UserLine("m1", "task"), cct.AssistantLine("m2", "Later."), cct.AssistantLine("m3", "Done."))
	waitFor(t, "the turns of a transcript written after the spawn's result", func() bool { return mustRun(t, e, "toolu_later").Turns == 3 })

	// Failed and killed: PostToolUseFailure.
	start("toolu_fail", "a2")
	mustHook(t, e, failure("toolu_fail", false))
	if r := mustRun(t, e, "toolu_fail"); r.Status != kv.RunFailed || r.EndReason != kv.EndFailed {
		t.Errorf("failed run: %s / %s", r.Status, r.EndReason)
	}
	start("toolu_stop", "a3")
	mustHook(t, e, failure("toolu_stop", true))
	if r := mustRun(t, e, "toolu_stop"); r.Status != kv.RunInterrupted || r.EndReason != kv.EndKilled {
		t.Errorf("interrupted run: %s / %s", r.Status, r.EndReason)
	}

	// The harness's step count wins over the stored turns.
	start("toolu_steps", "a4")
	mustHook(t, e, cct.Event(tr, S, "PostToolUse", map[string]any{"tool_name": "Agent", "tool_use_id": "toolu_steps",
		"tool_response": map[string]any{"status": "completed", "agentId": "a4", "content": "ok", "totalToolUseCount": 7}}))
	if r := mustRun(t, e, "toolu_steps"); r.Turns != 7 || r.EndReason != kv.EndCompleted {
		t.Errorf("run with steps: turns %d, end %q; want 7, completed", r.Turns, r.EndReason)
	}

	// A background launch is no end: the run stays running until its SubagentStop.
	start("toolu_bg", "a5")
	mustHook(t, e, cct.Event(tr, S, "PostToolUse", map[string]any{"tool_name": "Agent", "tool_use_id": "toolu_bg",
		"tool_response": map[string]any{"status": "async_launched", "agentId": "a5"}}))
	if r := mustRun(t, e, "toolu_bg"); r.Status != kv.RunRunning || r.EndReason != "" || !r.EndedAt.IsZero() {
		t.Errorf("launched run: %s / %q, ended %v; want still running", r.Status, r.EndReason, r.EndedAt)
	}
	mustHook(t, e, cct.Event(tr, S, "SubagentStop", map[string]any{"agent_id": "a5", "agent_type": "Explore", "last_assistant_message": "Background work done."}))
	if r := mustRun(t, e, "toolu_bg"); r.Status != kv.RunCompleted || r.EndReason != kv.EndCompleted || r.Result != "Background work done." {
		t.Errorf("background run after its SubagentStop: %s / %s, %q", r.Status, r.EndReason, r.Result)
	}
}

// TestEndReasons_Stream: OpenCode's and OpenClaw's task results (completed, error, aborted)
// and a child going idle set the run's end reason; the turns are the child's stored ones.
func TestEndReasons_Stream(t *testing.T) {
	e := openEngine(t, cct.NewTree(t, "unused"), noPeriodic)
	consume := func(ev adapters.Event) {
		t.Helper()
		ev.Harness = "opencode"
		if err := e.Consume(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
	}
	consume(adapters.Event{Kind: adapters.KindSessionStart, SessionID: "ses_P"})
	for _, c := range []struct{ call, child, status, wantStatus, wantEnd string }{
		{"call_ok", "ses_c1", "completed", kv.RunCompleted, kv.EndCompleted},
		{"call_err", "ses_c2", adapters.StatusFailed, kv.RunFailed, kv.EndFailed},
		{"call_abort", "ses_c3", adapters.StatusInterrupted, kv.RunInterrupted, kv.EndKilled},
		{"call_odd", "ses_c4", "timed_out", "timed_out", kv.EndFailed},
	} {
		consume(adapters.Event{Kind: adapters.KindSessionStart, SessionID: c.child, ParentSessionID: "ses_P"})
		consume(adapters.Event{Kind: adapters.KindSpawn, SessionID: "ses_P", Spawn: &adapters.Spawn{ToolUseID: c.call, ChildSessionID: c.child, Prompt: "p", Type: "general"}})
		consume(adapters.Event{Kind: adapters.KindTurns, SessionID: c.child, Turns: []adapters.Turn{{ID: "u", Role: "user", Text: "p"}, {ID: "a", Role: "assistant", Text: "r"}}})
		consume(adapters.Event{Kind: adapters.KindSpawnResult, SessionID: "ses_P", Spawn: &adapters.Spawn{ToolUseID: c.call, ChildSessionID: c.child},
			Result: &adapters.Result{AgentID: c.child, Status: c.status, Text: "result"}})
		if r := mustRun(t, e, c.call); r.Status != c.wantStatus || r.EndReason != c.wantEnd || r.Turns != 2 {
			t.Errorf("%s (%s): status %q, end %q, turns %d; want %q, %q, 2", c.call, c.status, r.Status, r.EndReason, r.Turns, c.wantStatus, c.wantEnd)
		}
	}

	// Idle without a result: completed, the last reply its result.
	consume(adapters.Event{Kind: adapters.KindSessionStart, SessionID: "ses_c5", ParentSessionID: "ses_P"})
	consume(adapters.Event{Kind: adapters.KindSpawn, SessionID: "ses_P", Spawn: &adapters.Spawn{ToolUseID: "call_idle", ChildSessionID: "ses_c5", Prompt: "p"}})
	consume(adapters.Event{Kind: adapters.KindTurns, SessionID: "ses_c5", Turns: []adapters.Turn{{ID: "u", Role: "user", Text: "p"}, {ID: "a1", Role: "assistant", Text: "first"}, {ID: "a2", Role: "assistant", Text: "IDLE-RESULT"}}})
	consume(adapters.Event{Kind: adapters.KindIdle, SessionID: "ses_c5"})
	if r := mustRun(t, e, "call_idle"); r.Status != kv.RunCompleted || r.EndReason != kv.EndCompleted || r.Result != "IDLE-RESULT" || r.Turns != 3 {
		t.Errorf("idle child's run: %s / %s, %q, %d turns", r.Status, r.EndReason, r.Result, r.Turns)
	}
	// A launch reported as the call's result is no end (OpenClaw's accepted spawn).
	consume(adapters.Event{Kind: adapters.KindSpawn, SessionID: "ses_P", Spawn: &adapters.Spawn{ToolUseID: "call_bg", ChildSessionID: "ses_c6", Prompt: "p"}})
	consume(adapters.Event{Kind: adapters.KindSpawnResult, SessionID: "ses_P", Spawn: &adapters.Spawn{ToolUseID: "call_bg", ChildSessionID: "ses_c6"},
		Result: &adapters.Result{AgentID: "ses_c6", Status: "async_launched"}})
	if r := mustRun(t, e, "call_bg"); r.Status != kv.RunRunning || r.EndReason != "" {
		t.Errorf("launched run: %s / %q; want still running", r.Status, r.EndReason)
	}
}
