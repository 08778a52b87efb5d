package engine_test

import (
	"strings"
	"testing"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
)

// TestPacket_SubagentStart: the block a Claude Code sub-agent inherits states its own task, the
// files the task names, its workspace and its depth against spawn.max_depth, a grandchild's
// one level deeper; a repeated SubagentStart says the same.
func TestPacket_SubagentStart(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "Port the parser to Go."), cct.AssistantLine("a1", "Delegating."))
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Port the parser to Go."}))
	task := "Port cmd/parse.c to parse.go; keep lexer.go as it is."
	mustHook(t, e, cct.Spawn(tr, S, "toolu_1", "general-purpose", task))
	block := mustHook(t, e, cct.Start(tr, S, "c1", "general-purpose"))
	for _, want := range []string{
		"\n\n### Your task\n" + task + "\n(heirloom keeps this as your objective: it is restated to you after a compaction)",
		"\n\n### Files your task names\n- cmd/parse.c\n- parse.go\n- lexer.go",
		"\n\n### Your workspace\n/work/app",
		"\n\n### Your depth\ndepth 1 of 3 (spawn.max_depth)",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("child's block lacks %q:\n%s", want, block)
		}
	}
	if again := mustHook(t, e, cct.Start(tr, S, "c1", "general-purpose")); again != block {
		t.Errorf("repeated SubagentStart: the block changed:\n%s", again)
	}

	mustHook(t, e, cct.Spawn(tr, S, "toolu_2", "Explore", "Read lexer.go", "c1"))
	grand := mustHook(t, e, cct.Start(tr, S, "g1", "Explore"))
	if !strings.Contains(grand, "\n\n### Your task\nRead lexer.go\n") || !strings.Contains(grand, "\n\n### Your depth\ndepth 2 of 3 (spawn.max_depth)") {
		t.Errorf("grandchild's block:\n%s", grand)
	}
}

// TestPacket_Inject: a plugin harness's child gets the packet too, from what the stream told
// of it: the task, its directory, its depth; with no limit it says so.
func TestPacket_Inject(t *testing.T) {
	e := openEngine(t, cct.NewTree(t, "unused"), limits(0, 0, engine.SpawnEnforce))
	block := injectChild(t, e, []adapters.Turn{{ID: "p1", Role: "user", Text: "Split store.go by record."}}, "Move runs out of store.go into runs.go.")
	for _, want := range []string{
		"\n\n### Your task\nMove runs out of store.go into runs.go.\n",
		"\n\n### Files your task names\n- store.go\n- runs.go",
		"\n\n### Your workspace\n/srv/app",
		"\n\n### Your depth\ndepth 1 (no spawn.max_depth)",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("child's block lacks %q:\n%s", want, block)
		}
	}
}

// injectChild streams an OpenCode parent ses_P with turns, in /srv/app, and its child ses_C
// spawned with prompt, through e, and returns the block the child's first model call gets.
func injectChild(t *testing.T, e *engine.Engine, turns []adapters.Turn, prompt string) string {
	t.Helper()
	ev := func(kind adapters.Kind, id string) adapters.Event {
		return adapters.Event{Harness: "opencode", Kind: kind, SessionID: id, Cwd: "/srv/app"}
	}
	parent := ev(adapters.KindTurns, "ses_P")
	parent.Turns = turns
	child := ev(adapters.KindSessionStart, "ses_C")
	child.ParentSessionID = "ses_P"
	spawn := ev(adapters.KindSpawn, "ses_P")
	spawn.Spawn = &adapters.Spawn{ToolUseID: "call_1", ChildSessionID: "ses_C", Prompt: prompt, Type: "general"}
	for _, ev := range []adapters.Event{ev(adapters.KindSessionStart, "ses_P"), parent, child, spawn} {
		if err := e.Consume(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
	}
	block, err := e.Inject(t.Context(), engine.InjectRequest{Harness: "opencode", Session: "ses_C"})
	if err != nil {
		t.Fatal(err)
	}
	return block
}

// TestPacket_ProvisionalHasNoTask: a sub-agent paired by a guess (two pending spawns of its
// type from different issuers) is not told a task that may be its sibling's.
func TestPacket_ProvisionalHasNoTask(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "Split it."), cct.AssistantLine("a1", "Spawning."))
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Split it."}))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_mid", "general-purpose", "middle task"))
	mustHook(t, e, cct.Start(tr, S, "mid", "general-purpose"))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_X", "Explore", "task X from root"))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_Y", "Explore", "task Y from mid", "mid"))
	block := mustHook(t, e, cct.Start(tr, S, "agentY", "Explore"))
	if r := mustRun(t, e, "toolu_X"); !r.Provisional {
		t.Fatalf("setup: want a provisional pairing, got %+v", r)
	}
	if strings.Contains(block, "### Your task") || strings.Contains(block, "task X") {
		t.Errorf("a guessed pairing's block states a task:\n%s", block)
	}
	if !strings.Contains(block, "### Your depth\n") {
		t.Errorf("a guessed pairing's block lacks its depth:\n%s", block)
	}
	if again := mustHook(t, e, cct.Start(tr, S, "agentY", "Explore")); again != block {
		t.Errorf("repeated SubagentStart while still a guess: the block changed:\n%s", again)
	}
}
