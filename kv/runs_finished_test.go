package kv

import (
	"slices"
	"testing"
	"time"
)

// TestLatestFinishedRuns: the newest n finished runs a session asked for, newest first; open and
// refused runs are skipped, other sessions' runs never read, and the walk stops at the n-th.
func TestLatestFinishedRuns(t *testing.T) {
	s := openAt(t, t.TempDir())
	at := func(min int) time.Time { return lifecycleEpoch.Add(time.Duration(min) * time.Minute) }
	for i := range 20 {
		putTestRun(t, s, Run{ID: "old" + string(rune('a'+i)), ParentID: "root", ChildID: "root:" + string(rune('a'+i)), Status: RunCompleted, Result: "r", CreatedAt: at(i), EndedAt: at(i + 1)})
	}
	putTestRun(t, s, Run{ID: "f1", ParentID: "root", ChildID: "root:f1", Status: "failed", CreatedAt: at(30), EndedAt: at(31)})
	putTestRun(t, s, Run{ID: "x1", ParentID: "root", Status: RunRefused, Reason: "depth", CreatedAt: at(32)})
	putTestRun(t, s, Run{ID: "p1", ParentID: "root", Status: RunPending, CreatedAt: at(33)})
	putTestRun(t, s, Run{ID: "o1", ParentID: "other", ChildID: "other:a", Status: RunCompleted, CreatedAt: at(34), EndedAt: at(35)})

	before := s.Stats()
	got, err := s.LatestFinishedRuns(t.Context(), "default", "root", 3)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if want := []string{"f1", "oldt", "olds"}; !slices.Equal(ids, want) {
		t.Errorf("got %v, want %v", ids, want)
	}
	if n := s.Stats().Sub(before).Runs; n != 5 {
		t.Errorf("runs decoded: %d, want 5 (the pending, the refused and the three kept)", n)
	}
	if got, err := s.LatestFinishedRuns(t.Context(), "default", "root", 0); err != nil || len(got) != 0 {
		t.Errorf("n 0: got %v, %v", got, err)
	}
}
