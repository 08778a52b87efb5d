package engine_test

import (
	"strings"
	"testing"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/inject/heading"
)

// TestBlocks_Recorded: the block a sub-agent gets at its SubagentStart is recorded, whole, with
// its parent and a confirmed pairing; a plugin's inject is recorded the same way; a reply with
// no context records nothing.
func TestBlocks_Recorded(t *testing.T) {
	tr := cct.NewTree(t, "P")
	e := openEngine(t, tr, nil)
	cct.AppendLines(t, tr.Transcript, exchange("P", 0, "Port the lexer; BLOCK-MARK.", "On it.")...)
	mustHook(t, e, cct.Event(tr, P, "UserPromptSubmit", map[string]any{"prompt": "Port the lexer; BLOCK-MARK."}))
	cct.AppendLines(t, tr.Transcript, cct.ToolUseLine("P-spawn", "toolu_1", "Delegating"))
	mustHook(t, e, cct.Spawn(tr, P, "toolu_1", "general-purpose", "Check the tokenizer tables"))
	block := mustHook(t, e, cct.Start(tr, P, "c1", "general-purpose"))
	if !strings.Contains(block, "BLOCK-MARK") {
		t.Fatalf("no inherited block:\n%s", block)
	}
	got, err := e.Store.Blocks(t.Context(), "default", P+":c1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d deliveries recorded for the sub-agent, want 1", len(got))
	}
	b := got[0]
	if b.Text != block || b.Via != "subagent_start" || b.Harness != "claude-code" || b.ParentID != P || b.Provisional ||
		len(b.Headings) != 1 || b.Headings[0] != heading.Inherited || b.Chars == 0 {
		t.Errorf("recorded: %+v", b)
	}
	if top, _ := e.Store.Blocks(t.Context(), "default", P, 0); len(top) != 0 {
		t.Errorf("the parent, given no context, has %d deliveries", len(top))
	}
}

// TestBlocks_ProvisionalPairing: a sub-agent paired by a guess (two pending spawns of its type
// from different issuers) is recorded as provisionally paired, with the parent guessed; so is
// its repeated SubagentStart.
func TestBlocks_ProvisionalPairing(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "Split it."), cct.AssistantLine("a1", "Spawning."))
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Split it."}))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_mid", "general-purpose", "middle task"))
	mustHook(t, e, cct.Start(tr, S, "mid", "general-purpose"))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_X", "Explore", "task X from root"))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_Y", "Explore", "task Y from mid", "mid"))
	mustHook(t, e, cct.Start(tr, S, "agentY", "Explore"))
	mustHook(t, e, cct.Start(tr, S, "agentY", "Explore"))
	r := mustRun(t, e, "toolu_X")
	if !r.Provisional {
		t.Fatalf("setup: want a provisional pairing, got %+v", r)
	}
	got, err := e.Store.Blocks(t.Context(), "default", S+":agentY", 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("deliveries: %d, %v; want both SubagentStarts", len(got), err)
	}
	for _, b := range got {
		if !b.Provisional || b.ParentID != r.ParentID {
			t.Errorf("recorded: provisional %v, parent %q; want provisional, the guessed parent %q", b.Provisional, b.ParentID, r.ParentID)
		}
	}
	if mid, _ := e.Store.Blocks(t.Context(), "default", S+":mid", 0); len(mid) != 1 || mid[0].Provisional {
		t.Errorf("the exactly paired sub-agent's delivery: %+v", mid)
	}
}
