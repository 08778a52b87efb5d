package inject_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// objectiveCase is the content of a testdata/objective/<case>.input.json file.
type objectiveCase struct {
	Reinforcement inject.Reinforcement
	MaxChars      int
}

// TestObjectiveBlock_Golden renders every testdata/objective/<case>.input.json and compares the
// result byte for byte with <case>.golden. Run with -update to rewrite the golden files.
func TestObjectiveBlock_Golden(t *testing.T) {
	for _, name := range goldenCases(t, "objective") {
		t.Run(name, func(t *testing.T) {
			var c objectiveCase
			readInput(t, "objective", name, &c)
			got := inject.ObjectiveBlock(c.Reinforcement, c.MaxChars)
			checkObjectiveBlock(t, got, c.MaxChars)
			if again := inject.ObjectiveBlock(c.Reinforcement, c.MaxChars); again != got {
				t.Errorf("second call differs:\n%s", again)
			}
			checkGolden(t, filepath.Join("testdata", "objective", name+".golden"), got)
		})
	}
}

// checkObjectiveBlock checks the block's invariants: within the cap, valid UTF-8, the heading
// first.
func checkObjectiveBlock(t *testing.T, out string, max int) {
	t.Helper()
	if max <= 0 {
		max = inject.DefaultMaxChars
	}
	if n := inject.Len(out); n > max {
		t.Fatalf("Len(ObjectiveBlock) = %d, want <= %d", n, max)
	}
	if !utf8.ValidString(out) {
		t.Fatalf("ObjectiveBlock: invalid UTF-8: %q", out)
	}
	if out != "" && !strings.HasPrefix(out, inject.ObjectiveHeading+"\n") {
		t.Fatalf("ObjectiveBlock does not start with its heading line: %q", out)
	}
}

func TestObjectiveBlock_Empty(t *testing.T) {
	for _, r := range []inject.Reinforcement{
		{},
		{Objective: " \n\t"},
		{Checkpoint: &kv.Checkpoint{}},
		{Finished: []kv.Run{{ID: "r", Status: kv.RunCompleted, Result: "done"}}},
	} {
		if got := inject.ObjectiveBlock(r, 0); got != "" {
			t.Errorf("ObjectiveBlock(%+v) = %q, want \"\"", r, got)
		}
	}
}

// TestObjectiveBlock_ObjectiveKept checks that the objective survives every budget that can
// hold the heading and it, and is cut, never dropped, below that.
func TestObjectiveBlock_ObjectiveKept(t *testing.T) {
	r := inject.Reinforcement{
		Objective: "Migrate the quarvel export to ledger v2.",
		Checkpoint: &kv.Checkpoint{Trigger: kv.TriggerPreCompaction, Digest: kv.Digest{
			Constraints:   []kv.Statement{{Text: strings.Repeat("Never do this. ", 40), Inferred: true}},
			Prompts:       []string{strings.Repeat("prompt ", 100)},
			LastAssistant: strings.Repeat("reply ", 100),
		}},
	}
	for i := range 20 {
		r.Finished = append(r.Finished, kv.Run{ID: fmt.Sprintf("r%d", i), Status: kv.RunCompleted,
			Description: fmt.Sprintf("task %d", i), Result: strings.Repeat("result ", 60),
			EndedAt: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC)})
	}
	whole := inject.ObjectiveBlock(r, 100000)
	for max := inject.Len(whole) + 10; max >= 30; max-- {
		out := inject.ObjectiveBlock(r, max)
		checkObjectiveBlock(t, out, max)
		if max >= inject.Len(inject.ObjectiveHeading+"\nObjective: Migrate the quarvel export to ledger v2.") &&
			!strings.Contains(out, "quarvel export to ledger v2.") {
			t.Fatalf("max %d: objective missing:\n%s", max, out)
		}
		if !strings.Contains(out, "\nObjective: Migrate") && (out != "" || max >= inject.Len(inject.ObjectiveHeading)+1+32) {
			t.Fatalf("max %d: objective dropped:\n%s", max, out)
		}
	}
	// At the default budget: 8 finished runs, the last-ended kept, and the checkpoint.
	out := inject.ObjectiveBlock(r, 0)
	if strings.Contains(out, "[Subagent Result: task 11]") || !strings.Contains(out, "[Subagent Result: task 12]") || !strings.Contains(out, "[Subagent Result: task 19]") {
		t.Errorf("want tasks 12 … 19 kept:\n%s", out)
	}
	if !strings.Contains(out, "Checkpoint taken before the compaction:") {
		t.Errorf("want the checkpoint section:\n%s", out)
	}
}

// TestObjectiveBlock_FinishedNotStale checks that a run listed as finished is not shown again
// from the checkpoint, where it may still be running.
func TestObjectiveBlock_FinishedNotStale(t *testing.T) {
	r := inject.Reinforcement{
		Objective: "o",
		Checkpoint: &kv.Checkpoint{Digest: kv.Digest{
			OpenRuns:     []kv.RunDigest{{RunID: "r1", Description: "bisect", Status: "running"}, {RunID: "r2", Description: "lint", Status: "pending"}},
			FinishedRuns: []kv.RunDigest{{RunID: "r0", Description: "survey", Status: "completed", Result: "old"}},
		}},
		Finished: []kv.Run{{ID: "r1", Status: kv.RunCompleted, Description: "bisect", Result: "Commit abc broke it."}, {ID: "r0", Status: kv.RunCompleted, Description: "survey", Result: "new"}},
	}
	out := inject.ObjectiveBlock(r, 0)
	if strings.Count(out, "bisect") != 1 || strings.Contains(out, "[running]") || strings.Contains(out, "old") {
		t.Errorf("stale runs shown:\n%s", out)
	}
	if !strings.Contains(out, "- lint [pending]") || !strings.Contains(out, "Commit abc broke it.") {
		t.Errorf("want the open run and the finished result:\n%s", out)
	}
}

func FuzzObjectiveBlock(f *testing.F) {
	f.Add("Fix the flaky test", "Never sleep.", "Done. Found it.", "bisect", 9500)
	f.Add("", "", "", "", 0)
	f.Add("Objectif: réparer 😀", strings.Repeat("must 😀 ", 500), strings.Repeat("résultat ", 900), "日本語", 300)
	f.Add("o", "c", "r", "d", 1)
	f.Add("password=hunter2", "never "+fakeJWT, fakePEM, fakeGitHub, 60)
	f.Add("a\xffb", "\xff", "\n\n", " ", 27)
	f.Fuzz(func(t *testing.T, objective, constraint, result, desc string, max int) {
		r := inject.Reinforcement{
			Objective: objective,
			Checkpoint: &kv.Checkpoint{Trigger: kv.TriggerPreCompaction, Digest: kv.Digest{
				Objective:     constraint,
				Constraints:   []kv.Statement{{Text: constraint, Inferred: true}},
				Prompts:       []string{result},
				LastAssistant: result,
				OpenRuns:      []kv.RunDigest{{RunID: "b", Description: desc}},
			}},
			Finished: []kv.Run{{ID: "a", Status: kv.RunCompleted, Description: desc, Result: result}},
		}
		max %= 20000
		out := inject.ObjectiveBlock(r, max)
		checkObjectiveBlock(t, out, max)
		if again := inject.ObjectiveBlock(r, max); again != out {
			t.Fatalf("ObjectiveBlock not deterministic")
		}
	})
}
