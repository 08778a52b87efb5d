package inject_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// recoveredCase is the content of a testdata/recovered/<case>.input.json file.
type recoveredCase struct {
	Checkpoint  kv.Checkpoint
	SameSession bool
	Now         time.Time
	MaxChars    int
	Finished    []kv.Run // the session's sub-agent runs, cast after the digest
	MaxTokens   int      // runs.max_result_tokens for those casts
}

// TestRecoveredBlock_Golden renders every testdata/recovered/<case>.input.json and compares the
// result byte for byte with <case>.golden. Run with -update to rewrite the golden files.
func TestRecoveredBlock_Golden(t *testing.T) {
	for _, name := range goldenCases(t, "recovered") {
		t.Run(name, func(t *testing.T) {
			var c recoveredCase
			readInput(t, "recovered", name, &c)
			r := inject.Recovery{Checkpoint: c.Checkpoint, SameSession: c.SameSession, Now: c.Now,
				Finished: c.Finished, Cast: inject.CastOptions{MaxTokens: c.MaxTokens, Retention: 24 * time.Hour}}
			got := inject.RecoveryBlock(r, c.MaxChars)
			checkRecoveredBlock(t, got, c.MaxChars)
			if len(c.Finished) == 0 && got != inject.RecoveredBlock(c.Checkpoint, c.SameSession, c.Now, c.MaxChars) {
				t.Errorf("RecoveredBlock differs from RecoveryBlock without runs")
			}
			if again := inject.RecoveryBlock(r, c.MaxChars); again != got {
				t.Errorf("second call differs:\n%s", again)
			}
			checkGolden(t, filepath.Join("testdata", "recovered", name+".golden"), got)
		})
	}
}

// checkRecoveredBlock checks the block's invariants: within the cap, valid UTF-8, the heading
// first.
func checkRecoveredBlock(t *testing.T, out string, max int) {
	t.Helper()
	if max <= 0 {
		max = inject.DefaultRecoveredChars
	}
	if n := inject.Len(out); n > max {
		t.Fatalf("Len(RecoveredBlock) = %d, want <= %d", n, max)
	}
	if !utf8.ValidString(out) {
		t.Fatalf("RecoveredBlock: invalid UTF-8: %q", out)
	}
	if out != "" && !strings.HasPrefix(out, inject.RecoveredHeading+"\n") {
		t.Fatalf("RecoveredBlock does not start with its heading line: %q", out)
	}
}

func TestRecoveredBlock_Age(t *testing.T) {
	now := time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		ago  time.Duration
		want string
	}{
		{-time.Hour, "taken just now"},
		{59 * time.Second, "taken just now"},
		{time.Minute, "taken 1 min ago"},
		{59 * time.Minute, "taken 59 min ago"},
		{time.Hour, "taken 1h 0m ago"},
		{47*time.Hour + 59*time.Minute, "taken 47h 59m ago"},
		{48 * time.Hour, "taken 2 days ago"},
		{30 * 24 * time.Hour, "taken 30 days ago"},
	}
	for _, tt := range tests {
		c := kv.Checkpoint{SessionID: "s", Digest: kv.Digest{Objective: "o"}, CreatedAt: now.Add(-tt.ago)}
		out := inject.RecoveredBlock(c, true, now, 0)
		if !strings.Contains(out, tt.want+".") {
			t.Errorf("age %v: want %q in\n%s", tt.ago, tt.want, out)
		}
	}
}

func TestRecoveredBlock_Empty(t *testing.T) {
	now := time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC)
	for _, c := range []kv.Checkpoint{
		{},
		{SessionID: "s", Trigger: kv.TriggerPeriodic, Prompts: 3, CreatedAt: now},
		{SessionID: "s", Digest: kv.Digest{Objective: " ", Prompts: []string{"\n"}}},
	} {
		if got := inject.RecoveredBlock(c, false, now, 0); got != "" {
			t.Errorf("RecoveredBlock(%+v) = %q, want \"\"", c, got)
		}
	}
	// An agent's own checkpoint holding only its summary and next steps is not empty.
	agent := kv.Checkpoint{SessionID: "s", Trigger: kv.TriggerAgent, CreatedAt: now, Digest: kv.Digest{Summary: "Invoices on v2.", NextSteps: []string{"Port credit notes."}}}
	if got := inject.RecoveredBlock(agent, false, now, 0); !strings.Contains(got, "Summary: Invoices on v2.") || !strings.Contains(got, "- Port credit notes.") {
		t.Errorf("a summary-only checkpoint recovers as %q", got)
	}
	// Too small for the heading and any of the From line.
	c := kv.Checkpoint{SessionID: "s", Digest: kv.Digest{Objective: "o"}}
	if got := inject.RecoveredBlock(c, true, now, inject.Len(inject.RecoveredHeading)+3); got != "" {
		t.Errorf("tiny budget: got %q, want \"\"", got)
	}
}

func FuzzRecoveredBlock(f *testing.F) {
	f.Add("Fix the flaky test", "Never sleep.", "s1", "/srv/p", "periodic", int64(3600), true, 4000)
	f.Add("", "", "", "", "", int64(0), false, 0)
	f.Add("Objectif 😀", strings.Repeat("必ず 👍🏽 ", 500), "😀", "/srv/アプリ", "x\ny", int64(-5), false, 90)
	f.Add("password=hunter2", fakePEM, fakeGitHub, "https://x:pa55word@h/r", "agent", int64(1<<40), true, 45)
	f.Fuzz(func(t *testing.T, objective, text, session, project, trigger string, ago int64, same bool, max int) {
		now := time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC)
		c := kv.Checkpoint{
			SessionID: session, Harness: "claude-code", Project: project, Trigger: trigger, Prompts: len(text) % 50,
			Digest: kv.Digest{
				Objective:    objective,
				Constraints:  []kv.Statement{{Text: text, Inferred: true}},
				Files:        []string{project},
				FinishedRuns: []kv.RunDigest{{Description: session, Status: trigger, Result: text}},
			},
			CreatedAt: now.Add(-time.Duration(ago)),
		}
		max %= 20000
		out := inject.RecoveredBlock(c, same, now, max)
		checkRecoveredBlock(t, out, max)
		if again := inject.RecoveredBlock(c, same, now, max); again != out {
			t.Fatalf("RecoveredBlock not deterministic")
		}
	})
}
