package kv

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

var lifecycleEpoch = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// putTestRun stores r in scope default (harness claude-code, root "root" unless set).
func putTestRun(t *testing.T, s *Store, r Run) {
	t.Helper()
	if r.RootID == "" {
		r.RootID = "root"
	}
	if _, err := s.UpdateRun(t.Context(), "default", r.ID, func(run *Run, _ bool) error {
		r.Scope, r.Harness = "default", "claude-code"
		*run = r
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestRunLifecycleIndexes(t *testing.T) {
	s := openAt(t, t.TempDir())
	ctx := t.Context()
	at := func(min int) time.Time { return lifecycleEpoch.Add(time.Duration(min) * time.Minute) }
	putTestRun(t, s, Run{ID: "p1", ParentID: "root", Status: RunPending, CreatedAt: at(0)})
	putTestRun(t, s, Run{ID: "r1", ParentID: "root", ChildID: "root:a", Status: RunRunning, CreatedAt: at(1)})
	putTestRun(t, s, Run{ID: "r2", ParentID: "root:a", ChildID: "root:b", Status: RunRunning, CreatedAt: at(2)})
	putTestRun(t, s, Run{ID: "c1", ParentID: "root", ChildID: "root:c", Status: RunCompleted, Result: "done", CreatedAt: at(3), EndedAt: at(4)})
	putTestRun(t, s, Run{ID: "x1", ParentID: "root", Status: RunRefused, Reason: "depth", CreatedAt: at(5)})

	active := func(parent string, max int) int {
		t.Helper()
		n, err := s.ActiveChildren(ctx, "default", parent, max)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	open := func(before time.Time) []string {
		t.Helper()
		list, err := s.OpenRuns(ctx, "default", before, 0)
		if err != nil {
			t.Fatal(err)
		}
		return runIDs(list)
	}
	full := func(before time.Time) []string {
		t.Helper()
		list, err := s.FullResultRuns(ctx, "default", before, 0)
		if err != nil {
			t.Fatal(err)
		}
		return runIDs(list)
	}
	if got := active("root", 0); got != 2 {
		t.Errorf("root's active children: %d, want 2 (p1 pending, r1 running; c1 done, x1 refused)", got)
	}
	if got := active("root", 1); got != 1 {
		t.Errorf("counting at most 1: %d", got)
	}
	if got := active("root:a", 0); got != 1 {
		t.Errorf("root:a's active children: %d, want 1", got)
	}
	if got := open(time.Time{}); !slices.Equal(got, []string{"p1", "r1", "r2"}) {
		t.Errorf("open runs: %v", got)
	}
	if got := open(at(2)); !slices.Equal(got, []string{"p1", "r1"}) {
		t.Errorf("open runs created before minute 2: %v", got)
	}
	if got := full(at(10)); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("full-result runs: %v", got)
	}
	if got := full(at(4)); len(got) != 0 {
		t.Errorf("full-result runs ended before minute 4: %v, want none (c1 ended at 4)", got)
	}

	// r1 ends with a result; r2 moves to another parent; c1's result is swept.
	putTestRun(t, s, Run{ID: "r1", ParentID: "root", ChildID: "root:a", Status: RunCompleted, EndReason: EndCompleted, Result: "ok", CreatedAt: at(1), EndedAt: at(6)})
	putTestRun(t, s, Run{ID: "r2", ParentID: "root", ChildID: "root:b", Status: RunRunning, CreatedAt: at(2)})
	putTestRun(t, s, Run{ID: "c1", ParentID: "root", ChildID: "root:c", Status: RunCompleted, Result: "d…", Swept: true, CreatedAt: at(3), EndedAt: at(4)})
	if got := active("root", 0); got != 2 {
		t.Errorf("root's active children after the changes: %d, want 2 (p1, r2)", got)
	}
	if got := active("root:a", 0); got != 0 {
		t.Errorf("root:a's active children after r2 moved: %d, want 0", got)
	}
	if got := open(time.Time{}); !slices.Equal(got, []string{"p1", "r2"}) {
		t.Errorf("open runs after the changes: %v", got)
	}
	if got := full(at(10)); !slices.Equal(got, []string{"r1"}) {
		t.Errorf("full-result runs after the changes: %v, want [r1]", got)
	}
}

// TestSchema_Upgrade2To3 opens a store written at version 2 (runs without the lifecycle
// indexes) and finds them built.
func TestSchema_Upgrade2To3(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir)
	ctx := t.Context()
	putTestRun(t, s, Run{ID: "p1", ParentID: "root", Status: RunPending, CreatedAt: lifecycleEpoch})
	putTestRun(t, s, Run{ID: "c1", ParentID: "root", ChildID: "root:c", Status: RunCompleted, Result: "done", CreatedAt: lifecycleEpoch, EndedAt: lifecycleEpoch.Add(time.Minute)})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := pebble.Open(filepath.Join(dir, pebbleDirName), &pebble.Options{Logger: pebbleLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []byte{prefixRunOpen, prefixRunActive, prefixRunResult} {
		if err := db.DeleteRange([]byte{p}, []byte{p + 1}, pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Set(schemaKey, encodeUint(2), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, dir)
	if n, err := s.ActiveChildren(ctx, "default", "root", 0); err != nil || n != 1 {
		t.Errorf("active children after upgrade: %d, %v; want 1", n, err)
	}
	if list, err := s.OpenRuns(ctx, "default", time.Time{}, 0); err != nil || !slices.Equal(runIDs(list), []string{"p1"}) {
		t.Errorf("open runs after upgrade: %v, %v", runIDs(list), err)
	}
	if list, err := s.FullResultRuns(ctx, "default", lifecycleEpoch.Add(time.Hour), 0); err != nil || !slices.Equal(runIDs(list), []string{"c1"}) {
		t.Errorf("full-result runs after upgrade: %v, %v", runIDs(list), err)
	}
}
