package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
)

// relevantParent writes a parent session whose middle holds a finding (the ledger watermark
// going backwards) among 120 exchanges about other things, and spawns a sub-agent whose task is
// about that finding. It returns the child's block.
func relevantParent(t *testing.T, configure func(*engine.Engine)) string {
	t.Helper()
	tr := cct.NewTree(t, "P")
	e := openEngine(t, tr, configure)
	for i := range 120 {
		prompt := fmt.Sprintf("step %d: tidy the CLI flags and the help text", i)
		reply := fmt.Sprintf("Done with step %d; the flags read better now.", i)
		if i == 40 {
			reply = "Found it: the ledger watermark goes backwards after a compaction when the segment index is empty."
		}
		cct.AppendLines(t, tr.Transcript, exchange("P", i, prompt, reply)...)
		mustHook(t, e, cct.Event(tr, P, "UserPromptSubmit", map[string]any{"prompt": prompt}))
	}
	task := "Write a regression test for the ledger watermark going backwards"
	cct.AppendLines(t, tr.Transcript, cct.ToolUseLine("P-spawn", "toolu_1", "Delegating: "+task))
	mustHook(t, e, cct.Spawn(tr, P, "toolu_1", "general-purpose", task))
	return mustHook(t, e, cct.Start(tr, P, "c1", "general-purpose"))
}

// TestRelevant_MidSessionFinding: the finding from the middle of the parent's session, long out
// of the recent transcript, reaches the child under "Relevant to your task", attributed to the
// parent's turn; the spawn's own prompt is not repeated there.
func TestRelevant_MidSessionFinding(t *testing.T) {
	block := relevantParent(t, nil)
	_, section, ok := strings.Cut(block, "\n\n### Relevant to your task\n")
	if !ok {
		t.Fatalf("no relevant section:\n%s", block)
	}
	section, _, _ = strings.Cut(section, "\n\n")
	want := "- [parent, turn 81, assistant] Found it: the ledger watermark goes backwards after a compaction when the segment index is empty."
	if first, _, _ := strings.Cut(section, "\n"); first != want {
		t.Errorf("first passage:\n%s\nwant\n%s\nsection:\n%s", first, want, section)
	}
	if strings.Contains(section, "Delegating") || strings.Contains(section, "Write a regression test") {
		t.Errorf("the spawn's own prompt is a passage:\n%s", section)
	}
	if i, j := strings.Index(block, "### Relevant to your task"), strings.Index(block, "### Recent transcript"); j >= 0 && i > j {
		t.Errorf("the relevant section comes after the recent transcript:\n%s", block)
	}
	if n := len([]rune(block)); n > engine.DefaultConfig().MaxContextChars {
		t.Errorf("block of %d characters, over the cap", n)
	}
}

// TestRelevant_Off: inherit.relevant_passages 0 leaves the section out.
func TestRelevant_Off(t *testing.T) {
	block := relevantParent(t, func(e *engine.Engine) { e.Config.RelevantPassages = 0 })
	if strings.Contains(block, "Relevant to your task") || strings.Contains(block, "watermark goes backwards") {
		t.Errorf("section off, yet:\n%s", block)
	}
	if !strings.Contains(block, "## Inherited from Parent Session") {
		t.Errorf("no block:\n%s", block)
	}
}

// TestRelevant_Inject: a plugin harness's child (OpenCode) gets the passages relevant to its
// task at its first model call, from the parent's streamed turns; a passage the recent
// transcript already shows is not repeated.
func TestRelevant_Inject(t *testing.T) {
	e := openEngine(t, cct.NewTree(t, "unused"), nil)
	var turns []adapters.Turn
	for i := range 300 { // the recent transcript shows the last hundred or so
		text := fmt.Sprintf("step %d: the flags read better now", i)
		if i == 20 {
			text = "The flaky upload test fails because the retry budget resets on every redirect."
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		turns = append(turns, adapters.Turn{ID: fmt.Sprintf("m%d", i), Role: role, Text: text})
	}
	block := injectChild(t, e, turns, "Fix the flaky upload test: the retry budget")
	want := "\n\n### Relevant to your task\n- [parent, turn 20, user] The flaky upload test fails because the retry budget resets on every redirect."
	if !strings.Contains(block, want) {
		t.Errorf("child's block lacks %q:\n%s", want, block)
	}
}

// TestRelevant_Capped: however many passages match, the block shows inherit.relevant_passages
// of them, and the tool output and tool turns the transcript only sums up are not taken for shown.
func TestRelevant_Capped(t *testing.T) {
	for _, n := range []int{6, 2} {
		e := openEngine(t, cct.NewTree(t, "unused"), func(e *engine.Engine) { e.Config.RelevantPassages = n })
		var turns []adapters.Turn
		for i := range 300 {
			text := fmt.Sprintf("step %d: the flags read better now", i)
			if i < 20 {
				text = fmt.Sprintf("finding %d: the upload retry budget resets on redirect %d", i, i)
			}
			turns = append(turns, adapters.Turn{ID: fmt.Sprintf("m%d", i), Role: "assistant", Text: text})
		}
		block := injectChild(t, e, turns, "Fix the upload retry budget")
		_, section, ok := strings.Cut(block, "\n\n### Relevant to your task\n")
		if !ok {
			t.Fatalf("n=%d: no relevant section:\n%s", n, block)
		}
		section, _, _ = strings.Cut(section, "\n\n")
		if got := strings.Count(section, "\n") + 1; got != n {
			t.Errorf("n=%d: %d passages:\n%s", n, got, section)
		}
	}
}

// fakeDescriber answers Describe with the events it holds for a session, and counts the calls.
type fakeDescriber struct {
	events map[string][]adapters.Event
	calls  int
}

func (d *fakeDescriber) Describe(_ context.Context, id string) ([]adapters.Event, error) {
	d.calls++
	evs, ok := d.events[id]
	if !ok {
		return nil, errors.New("not found")
	}
	return evs, nil
}

// TestInject_DescribesUnknown: an OpenCode child's first model call that beats the stream's
// report of it and of its parent has the harness describe them first, and gets the inherited
// block; a session known with its parent is not described again.
func TestInject_DescribesUnknown(t *testing.T) {
	e := openEngine(t, cct.NewTree(t, "unused"), nil)
	ev := func(kind adapters.Kind, id string) adapters.Event {
		return adapters.Event{Harness: "opencode", Kind: kind, SessionID: id, Cwd: "/srv/app"}
	}
	parentTurns := ev(adapters.KindTurns, "ses_P")
	parentTurns.Turns = []adapters.Turn{{ID: "m1", Role: "user", Text: "Port the lexer; DESCRIBED-MARKER."}}
	child := ev(adapters.KindSessionStart, "ses_C")
	child.ParentSessionID = "ses_P"
	d := &fakeDescriber{events: map[string][]adapters.Event{"ses_C": {ev(adapters.KindSessionStart, "ses_P"), parentTurns, child}}}
	e.Describers = map[string]adapters.Describer{"opencode": d}

	block, err := e.Inject(t.Context(), engine.InjectRequest{Harness: "opencode", Session: "ses_C", Parent: "ses_P"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(block, "## Inherited from Parent Session") || !strings.Contains(block, "DESCRIBED-MARKER") {
		t.Errorf("the child's first call, before the stream, got:\n%s", block)
	}
	if d.calls != 1 {
		t.Errorf("described %d times, want 1", d.calls)
	}
	if _, err := e.Inject(t.Context(), engine.InjectRequest{Harness: "opencode", Session: "ses_C", Parent: "ses_P"}); err != nil {
		t.Fatal(err)
	}
	if d.calls != 1 {
		t.Errorf("a known session with its known parent was described again (%d calls)", d.calls)
	}
}

// TestInject_DescribesUnknownChildOfKnownParent: the stream reported the parent, but not yet the
// child nor the parent's latest turns (it is behind); the child's first model call has the
// harness describe the child, which brings those turns, and they reach its block.
func TestInject_DescribesUnknownChildOfKnownParent(t *testing.T) {
	e := openEngine(t, cct.NewTree(t, "unused"), nil)
	ev := func(kind adapters.Kind, id string) adapters.Event {
		return adapters.Event{Harness: "opencode", Kind: kind, SessionID: id, Cwd: "/srv/app"}
	}
	first := ev(adapters.KindTurns, "ses_P")
	first.Turns = []adapters.Turn{{ID: "m1", Role: "user", Text: "Port the lexer."}}
	for _, x := range []adapters.Event{ev(adapters.KindSessionStart, "ses_P"), first} {
		if err := e.Consume(t.Context(), x); err != nil {
			t.Fatal(err)
		}
	}
	latest := ev(adapters.KindTurns, "ses_P")
	latest.Turns = []adapters.Turn{
		{ID: "m1", Role: "user", Text: "Port the lexer."},
		{ID: "m2", Role: "assistant", Text: "LATEST-MARKER: the tokenizer tables are generated; delegating the checks."},
	}
	child := ev(adapters.KindSessionStart, "ses_C")
	child.ParentSessionID = "ses_P"
	d := &fakeDescriber{events: map[string][]adapters.Event{"ses_C": {ev(adapters.KindSessionStart, "ses_P"), latest, child}}}
	e.Describers = map[string]adapters.Describer{"opencode": d}

	block, err := e.Inject(t.Context(), engine.InjectRequest{Harness: "opencode", Session: "ses_C", Parent: "ses_P"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(block, "LATEST-MARKER") {
		t.Errorf("the parent's latest turn, known only to the harness, is not in the child's block:\n%s", block)
	}
	if d.calls != 1 {
		t.Errorf("described %d times, want 1", d.calls)
	}
}
