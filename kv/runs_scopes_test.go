package kv

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestRunScopes checks that the sweeps find every scope with something to sweep, and only those,
// at one seek each.
func TestRunScopes(t *testing.T) {
	s := openAt(t, t.TempDir())
	ctx := t.Context()
	put := func(scope string, r Run) {
		t.Helper()
		if _, err := s.UpdateRun(ctx, scope, r.ID, func(run *Run, _ bool) error {
			r.Scope, r.Harness, r.RootID, r.ParentID = scope, "openclaw", "root", "root"
			*run = r
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	at := lifecycleEpoch
	for i := range 50 { // many runs in one scope cost one seek, not fifty
		put("main", Run{ID: fmt.Sprintf("m%d", i), Status: RunRunning, CreatedAt: at})
	}
	put("main", Run{ID: "done", Status: RunCompleted, Result: "r", CreatedAt: at, EndedAt: at.Add(time.Minute)})
	put("ops", Run{ID: "o1", Status: RunPending, CreatedAt: at})
	put("quiet", Run{ID: "q1", Status: RunCompleted, Result: "r", Swept: true, CreatedAt: at, EndedAt: at})
	put("results", Run{ID: "w1", Status: RunFailed, Result: "r", CreatedAt: at, EndedAt: at})

	before := s.Stats()
	open, err := s.OpenRunScopes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(open, []string{"main", "ops"}) {
		t.Errorf("scopes with open runs: %v, want [main ops]", open)
	}
	if cost := s.Stats().Sub(before); cost.Iterators != 1 || cost.Runs != 0 {
		t.Errorf("listing them cost %+v, want one iterator and no run read", cost)
	}
	full, err := s.FullResultScopes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(full, []string{"main", "results"}) {
		t.Errorf("scopes with full results: %v, want [main results] (quiet's is swept)", full)
	}

	empty := openAt(t, t.TempDir())
	if got, err := empty.OpenRunScopes(ctx); err != nil || len(got) != 0 {
		t.Errorf("empty store: %v, %v", got, err)
	}
}

// TestListRuns_Filters checks the filters the runs API passes through: harness, type and since,
// and that since stops the walk at the first older run.
func TestListRuns_Filters(t *testing.T) {
	s := openAt(t, t.TempDir())
	ctx := t.Context()
	at := func(min int) time.Time { return lifecycleEpoch.Add(time.Duration(min) * time.Minute) }
	put := func(r Run, harness string) {
		t.Helper()
		if _, err := s.UpdateRun(ctx, "default", r.ID, func(run *Run, _ bool) error {
			r.Scope, r.Harness = "default", harness
			if r.RootID == "" {
				r.RootID = "root"
			}
			*run = r
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		put(Run{ID: fmt.Sprintf("old%d", i), ParentID: "root", Type: "Explore", Status: RunCompleted, CreatedAt: at(i)}, "claude-code")
	}
	put(Run{ID: "a", ParentID: "root", Type: "general-purpose", Status: RunCompleted, CreatedAt: at(100)}, "claude-code")
	put(Run{ID: "b", ParentID: "root:x", Type: "Explore", Status: RunRunning, CreatedAt: at(101)}, "claude-code")
	put(Run{ID: "c", ParentID: "ses", RootID: "ses", Type: "general", Status: RunCompleted, CreatedAt: at(102)}, "opencode")

	list := func(f RunFilter) []string {
		t.Helper()
		runs, err := s.ListRuns(ctx, "default", f)
		if err != nil {
			t.Fatal(err)
		}
		return runIDs(runs)
	}
	if got := list(RunFilter{Harness: "opencode"}); !slices.Equal(got, []string{"c"}) {
		t.Errorf("harness opencode: %v", got)
	}
	if got := list(RunFilter{Type: "Explore", Since: at(50)}); !slices.Equal(got, []string{"b"}) {
		t.Errorf("type Explore since minute 50: %v", got)
	}
	if got := list(RunFilter{RootID: "root", Since: at(100)}); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("root since minute 100: %v", got)
	}
	if got := list(RunFilter{ParentID: "root", Since: at(38)}); !slices.Equal(got, []string{"a", "old39", "old38"}) {
		t.Errorf("parent root since minute 38: %v", got)
	}
	before := s.Stats()
	if got := list(RunFilter{Since: at(101)}); !slices.Equal(got, []string{"c", "b"}) {
		t.Errorf("since minute 101: %v", got)
	}
	if cost := s.Stats().Sub(before); cost.Runs != 2 {
		t.Errorf("since read %d runs, want 2: the walk stops at the first older run", cost.Runs)
	}
}
