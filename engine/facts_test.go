package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
)

// TestFacts_Inherited: constraints and decisions stated early in a long parent session, in the
// words people use (no "must" or "never"), reach the child once each, under their own
// sections; a later change of plan supersedes the decision it names, and the block says so; the
// parent's checkpoints carry them.
func TestFacts_Inherited(t *testing.T) {
	tr := cct.NewTree(t, "P")
	e := openEngine(t, tr, nil)
	prompts := map[int]string{
		2:  "Leave the vendored code alone.",
		5:  "We'll use Postgres from now on.",
		9:  "The v1 API has to stay backwards compatible.",
		60: "Change of plan: switch from Postgres to SQLite.",
	}
	for i := range 100 {
		prompt, ok := prompts[i]
		if !ok {
			prompt = fmt.Sprintf("step %d: tidy the CLI flags", i)
		}
		cct.AppendLines(t, tr.Transcript, exchange("P", i, prompt, fmt.Sprintf("Done with step %d.", i))...)
		mustHook(t, e, cct.Event(tr, P, "UserPromptSubmit", map[string]any{"prompt": prompt}))
	}
	cct.AppendLines(t, tr.Transcript, cct.ToolUseLine("P-spawn", "toolu_1", "Delegating."))
	mustHook(t, e, cct.Spawn(tr, P, "toolu_1", "general-purpose", "Write the SQLite migration"))
	block := mustHook(t, e, cct.Start(tr, P, "c1", "general-purpose"))

	_, constraints, _ := strings.Cut(block, "\n\n### Active constraints\n")
	constraints, _, _ = strings.Cut(constraints, "\n\n")
	for _, want := range []string{"- Leave the vendored code alone.", "- The v1 API has to stay backwards compatible."} {
		if !strings.Contains(constraints, want) {
			t.Errorf("constraints lack %q:\n%s", want, block)
		}
		// Once among the block's own sections; the recent transcript is the parent's words as
		// they were, and may hold the prompt that said it.
		if n := strings.Count(withoutSection(block, "### Recent transcript"), strings.TrimPrefix(want, "- ")); n != 1 {
			t.Errorf("%q is said %d times in the block's sections:\n%s", want, n, block)
		}
	}
	_, decisions, ok := strings.Cut(block, "\n\n### Decisions and changes of plan\n")
	if !ok {
		t.Fatalf("no decisions section:\n%s", block)
	}
	decisions, _, _ = strings.Cut(decisions, "\n\n")
	// The prompts are turns 0, 2, 4, … of the transcript: prompt 60 is turn 120.
	want := `- Change of plan: switch from Postgres to SQLite. (turn 120; replaces "We'll use Postgres from now on.")`
	if decisions != want {
		t.Errorf("decisions:\n%s\nwant\n%s", decisions, want)
	}

	facts, err := e.Store.Facts(t.Context(), "default", P)
	if err != nil {
		t.Fatal(err)
	}
	if len(facts) != 4 {
		t.Errorf("the parent's ledger: %+v, want 4 facts", facts)
	}
	cp, err := e.Store.LatestCheckpoint(t.Context(), "default", P)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, s := range cp.Digest.Decisions {
		texts = append(texts, s.Text)
	}
	if len(texts) != 1 || texts[0] != "Change of plan: switch from Postgres to SQLite." {
		t.Errorf("the checkpoint's decisions: %q, want the change of plan alone", texts)
	}
	var kinds []string
	for _, s := range cp.Digest.Constraints {
		kinds = append(kinds, s.Text)
	}
	if !strings.Contains(strings.Join(kinds, "|"), "Leave the vendored code alone.") {
		t.Errorf("the checkpoint's constraints: %q", kinds)
	}
}

// withoutSection returns block without the section under heading (up to the next one).
func withoutSection(block, heading string) string {
	before, rest, ok := strings.Cut(block, "\n\n"+heading+"\n")
	if !ok {
		return block
	}
	if _, after, ok := strings.Cut(rest, "\n\n###"); ok {
		return before + "\n\n###" + after
	}
	return before
}

// TestFacts_ReadAtSpawn: a change of plan the parent's transcript gained just before the spawn
// (read by SubagentStart itself) supersedes the decision it names in the child's block.
func TestFacts_ReadAtSpawn(t *testing.T) {
	tr := cct.NewTree(t, "P")
	e := openEngine(t, tr, nil)
	cct.AppendLines(t, tr.Transcript, exchange("P", 0, "We'll use Postgres from now on.", "Noted.")...)
	mustHook(t, e, cct.Event(tr, P, "UserPromptSubmit", map[string]any{"prompt": "We'll use Postgres from now on."}))
	mustHook(t, e, cct.Spawn(tr, P, "toolu_1", "general-purpose", "Write the SQLite migration"))
	// Written after the spawn's hook, as Claude Code writes its transcript behind its hooks: read
	// by SubagentStart itself.
	cct.AppendLines(t, tr.Transcript, exchange("P", 1, "Change of plan: switch from Postgres to SQLite.", "Switching.")...)
	cct.AppendLines(t, tr.Transcript, cct.ToolUseLine("P-spawn", "toolu_1", "Delegating."))
	block := mustHook(t, e, cct.Start(tr, P, "c1", "general-purpose"))
	_, decisions, ok := strings.Cut(block, "\n\n### Decisions and changes of plan\n")
	if !ok {
		t.Fatalf("no decisions section:\n%s", block)
	}
	decisions, _, _ = strings.Cut(decisions, "\n\n")
	if strings.Contains(decisions, "- We'll use Postgres") || !strings.Contains(decisions, `switch from Postgres to SQLite. (turn 2; replaces "We'll use Postgres from now on.")`) {
		t.Errorf("decisions:\n%s", decisions)
	}
}

// TestReset_FreshObjective: a harness that starts a new conversation under a session's key
// (OpenClaw's reset and new, a session start with Source clear) gets a fresh objective from its
// next prompt, and the old conversation's facts no longer hold.
func TestReset_FreshObjective(t *testing.T) {
	var mu sync.Mutex // the engine's background work reads the clock too
	now := time.Now()
	e := openEngine(t, cct.NewTree(t, "unused"), func(e *engine.Engine) {
		e.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	})
	ev := func(kind adapters.Kind) adapters.Event {
		return adapters.Event{Harness: "openclaw", Kind: kind, SessionID: "agent:main:main", Cwd: "/srv/app"}
	}
	turns := func(id, text string) adapters.Event {
		t := ev(adapters.KindTurns)
		t.Turns = []adapters.Turn{{ID: id, Role: "user", Text: text}}
		return t
	}
	reset := ev(adapters.KindSessionStart)
	reset.Source = adapters.SourceClear
	for _, x := range []adapters.Event{
		ev(adapters.KindSessionStart), turns("m1", "Port the lexer. Never touch vendor/. We'll use SQLite from now on."), turns("m2", "go on"),
		ev(adapters.KindPreCompact), // a checkpoint of the old conversation
		reset, turns("m3", "Write the release notes."),
		ev(adapters.KindPreCompact), // and, an hour later, one of the new
	} {
		if x.Kind == adapters.KindSessionStart && x.Source == adapters.SourceClear {
			mu.Lock()
			now = now.Add(time.Hour)
			mu.Unlock()
		}
		if err := e.Consume(t.Context(), x); err != nil {
			t.Fatal(err)
		}
	}
	sess, err := e.Store.GetSession(t.Context(), "default", "agent:main:main")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Objective != "Write the release notes." || sess.FreshObjective {
		t.Errorf("after the reset: objective %q (fresh %v), want the next prompt's", sess.Objective, sess.FreshObjective)
	}
	facts, err := e.Store.Facts(t.Context(), "default", "agent:main:main")
	if err != nil {
		t.Fatal(err)
	}
	if len(facts) != 0 {
		t.Errorf("the old conversation's facts hold after the reset: %+v", facts)
	}
	cp, err := e.Store.LatestCheckpoint(t.Context(), "default", "agent:main:main")
	if err != nil {
		t.Fatal(err)
	}
	d := cp.Digest
	if d.Objective != "Write the release notes." || len(d.Constraints) != 0 || len(d.Decisions) != 0 || slices.ContainsFunc(d.Prompts, func(p string) bool { return strings.Contains(p, "lexer") }) {
		t.Errorf("the checkpoint after the reset carries the old conversation: %+v", d)
	}
}
