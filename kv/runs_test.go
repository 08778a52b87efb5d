package kv_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

// newRun returns a valid pending run of root, asked for by root itself.
func newRun(scope, id, root string) kv.Run {
	return kv.Run{
		Scope: scope, ID: id, Harness: "claude-code", RootID: root, ParentID: root,
		Description: "look around", Prompt: "find the bug", Type: "Explore", Status: kv.RunPending,
	}
}

// mustUpdateRun writes r through UpdateRun, replacing whatever is stored, and returns the result.
func mustUpdateRun(tb testing.TB, s *kv.Store, r kv.Run) kv.Run {
	tb.Helper()
	got, err := s.UpdateRun(tb.Context(), r.Scope, r.ID, func(stored *kv.Run, exists bool) error {
		*stored = r
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

// pair changes the stored run id to be paired with child (running), or unpaired when child is "".
func pair(tb testing.TB, s *kv.Store, scope, id, child string) error {
	tb.Helper()
	_, err := s.UpdateRun(tb.Context(), scope, id, func(r *kv.Run, exists bool) error {
		if !exists {
			tb.Fatalf("run %s not stored", id)
		}
		r.ChildID = child
		r.Status = kv.RunRunning
		return nil
	})
	return err
}

func assertRun(t *testing.T, got, want kv.Run) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("run:\n got %+v\nwant %+v", got, want)
	}
}

// assertRunIDs checks the runs' IDs, in order.
func assertRunIDs(t *testing.T, got []kv.Run, want ...string) {
	t.Helper()
	ids := make([]string, len(got))
	for i, r := range got {
		ids[i] = r.ID
	}
	if !slicesEqual(ids, want) {
		t.Fatalf("run ids: got %q, want %q", ids, want)
	}
}

// assertPending checks the pending runs of root, in order.
func assertPending(t *testing.T, s *kv.Store, scope, root string, want ...string) {
	t.Helper()
	got, err := s.PendingRuns(t.Context(), scope, root)
	if err != nil {
		t.Fatal(err)
	}
	assertRunIDs(t, got, want...)
}

// assertChild checks which run RunByChild finds for child; "" means none.
func assertChild(t *testing.T, s *kv.Store, scope, child, wantRun string) {
	t.Helper()
	got, err := s.RunByChild(t.Context(), scope, child)
	if wantRun == "" {
		if !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("run by child %s: got %+v, %v; want ErrNotFound", child, got, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("run by child %s: %v", child, err)
	}
	if got.ID != wantRun || got.ChildID != child {
		t.Fatalf("run by child %s: got run %s (child %q), want %s", child, got.ID, got.ChildID, wantRun)
	}
}

func TestUpdateRun(t *testing.T) {
	ctx := t.Context()
	t.Run("CreatePendingThenPair", func(t *testing.T) {
		s := MustOpenStore(t)
		in := newRun("main", "toolu_1", "root")
		got, err := s.UpdateRun(ctx, "main", "toolu_1", func(r *kv.Run, exists bool) error {
			if exists {
				t.Errorf("exists: got true, want false")
			}
			if r.Scope != "main" || r.ID != "toolu_1" {
				t.Errorf("prefilled: got %s/%s, want main/toolu_1", r.Scope, r.ID)
			}
			*r = in
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := in
		want.CreatedAt = epoch.Add(time.Second) // stamped: none given
		assertRun(t, got, want)
		stored, err := s.GetRun(ctx, "main", "toolu_1")
		if err != nil {
			t.Fatal(err)
		}
		assertRun(t, stored, want)
		assertPending(t, s, "main", "root", "toolu_1")
		assertChild(t, s, "main", "root:agent1", "")

		// Pairing takes it out of the pending index and into the child index.
		started := epoch.Add(time.Minute)
		got, err = s.UpdateRun(ctx, "main", "toolu_1", func(r *kv.Run, exists bool) error {
			if !exists {
				t.Errorf("exists: got false, want true")
			}
			assertRun(t, *r, want)
			r.ChildID = "root:agent1"
			r.Provisional = true
			r.Status = kv.RunRunning
			r.StartedAt = started
			r.CreatedAt = epoch.AddDate(-1, 0, 0) // kept from the stored run: ignored
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want.ChildID, want.Provisional, want.Status, want.StartedAt = "root:agent1", true, kv.RunRunning, started
		assertRun(t, got, want)
		assertPending(t, s, "main", "root")
		assertChild(t, s, "main", "root:agent1", "toolu_1")

		// Finishing keeps the pairing; every field round-trips.
		ended := started.Add(90 * time.Second)
		got, err = s.UpdateRun(ctx, "main", "toolu_1", func(r *kv.Run, exists bool) error {
			r.Provisional = false
			r.Status = kv.RunCompleted
			r.Result = "found it: off by one"
			r.Tokens = 12345
			r.DurationMs = 90000
			r.EndedAt = ended
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want.Provisional, want.Status, want.Result = false, kv.RunCompleted, "found it: off by one"
		want.Tokens, want.DurationMs, want.EndedAt = 12345, 90000, ended
		assertRun(t, got, want)
		stored, err = s.GetRun(ctx, "main", "toolu_1")
		if err != nil {
			t.Fatal(err)
		}
		assertRun(t, stored, want)
		assertPending(t, s, "main", "root")
		assertChild(t, s, "main", "root:agent1", "toolu_1")
	})
	t.Run("CreatedAtGiven", func(t *testing.T) {
		s := MustOpenStore(t)
		in := newRun("main", "r", "root")
		in.CreatedAt = time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
		got := mustUpdateRun(t, s, in)
		if !got.CreatedAt.Equal(in.CreatedAt) || got.CreatedAt.Location() != time.UTC {
			t.Fatalf("CreatedAt: got %v, want %v in UTC", got.CreatedAt, in.CreatedAt)
		}
		stored, err := s.GetRun(ctx, "main", "r")
		if err != nil {
			t.Fatal(err)
		}
		assertRun(t, stored, got)
	})
	t.Run("TimesInUTC", func(t *testing.T) {
		// A wall clock reading in another zone, with a monotonic part: what UpdateRun returns is
		// exactly what GetRun reads back.
		s := MustOpenStore(t)
		in := newRun("main", "r", "root")
		in.StartedAt = time.Now().In(time.FixedZone("x", 3600))
		in.EndedAt = in.StartedAt.Add(time.Second)
		got := mustUpdateRun(t, s, in)
		if !got.StartedAt.Equal(in.StartedAt) || got.StartedAt.Location() != time.UTC || got.EndedAt.Location() != time.UTC {
			t.Fatalf("times: got %v, %v; want %v, %v in UTC", got.StartedAt, got.EndedAt, in.StartedAt, in.EndedAt)
		}
		stored, err := s.GetRun(ctx, "main", "r")
		if err != nil {
			t.Fatal(err)
		}
		assertRun(t, stored, got)
	})
	t.Run("BackToPending", func(t *testing.T) {
		s := MustOpenStore(t)
		mustUpdateRun(t, s, newRun("main", "r", "root"))
		if err := pair(t, s, "main", "r", "root:a"); err != nil {
			t.Fatal(err)
		}
		// A pairing found wrong is undone: the run waits again and the child is free.
		_, err := s.UpdateRun(ctx, "main", "r", func(r *kv.Run, exists bool) error {
			r.ChildID, r.Status, r.StartedAt = "", kv.RunPending, time.Time{}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		assertPending(t, s, "main", "root", "r")
		assertChild(t, s, "main", "root:a", "")
	})
	t.Run("UnpairedButNotPending", func(t *testing.T) {
		s := MustOpenStore(t)
		mustUpdateRun(t, s, newRun("main", "r", "root"))
		// A spawn that failed before any sub-agent started leaves the pending index.
		_, err := s.UpdateRun(ctx, "main", "r", func(r *kv.Run, exists bool) error {
			r.Status = kv.RunFailed
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		assertPending(t, s, "main", "root")
	})
	t.Run("CorrectionSwap", func(t *testing.T) {
		s := MustOpenStore(t)
		mustUpdateRun(t, s, newRun("main", "a", "root"))
		mustUpdateRun(t, s, newRun("main", "b", "root"))
		for _, p := range [][2]string{{"a", "root:x"}, {"b", "root:y"}} {
			if err := pair(t, s, "main", p[0], p[1]); err != nil {
				t.Fatal(err)
			}
		}
		// Swapping in one step is refused: x is still a's.
		if err := pair(t, s, "main", "b", "root:x"); err == nil {
			t.Fatal("pair b with a's child: got nil error")
		}
		// Clear a, then give its child to b, then b's old child to a.
		if err := pair(t, s, "main", "a", ""); err != nil {
			t.Fatal(err)
		}
		assertChild(t, s, "main", "root:x", "")
		if err := pair(t, s, "main", "b", "root:x"); err != nil {
			t.Fatal(err)
		}
		assertChild(t, s, "main", "root:x", "b")
		assertChild(t, s, "main", "root:y", "")
		if err := pair(t, s, "main", "a", "root:y"); err != nil {
			t.Fatal(err)
		}
		assertChild(t, s, "main", "root:x", "b")
		assertChild(t, s, "main", "root:y", "a")
		assertPending(t, s, "main", "root")
	})
	t.Run("ErrChildTaken", func(t *testing.T) {
		s := MustOpenStore(t)
		mustUpdateRun(t, s, newRun("main", "a", "root"))
		if err := pair(t, s, "main", "a", "root:x"); err != nil {
			t.Fatal(err)
		}
		// An existing run may not claim it...
		mustUpdateRun(t, s, newRun("main", "b", "root"))
		err := pair(t, s, "main", "b", "root:x")
		if err == nil || !strings.Contains(err.Error(), "root:x") || !strings.Contains(err.Error(), "already paired") {
			t.Fatalf("got %v, want an error naming the child as already paired", err)
		}
		// ...nor a new one.
		taken := newRun("main", "c", "root")
		taken.ChildID, taken.Status = "root:x", kv.RunRunning
		if _, err := s.UpdateRun(ctx, "main", "c", func(r *kv.Run, _ bool) error { *r = taken; return nil }); err == nil {
			t.Fatal("new run claiming a paired child: got nil error")
		}
		if _, err := s.GetRun(ctx, "main", "c"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("refused new run: got %v, want ErrNotFound", err)
		}
		b, err := s.GetRun(ctx, "main", "b")
		if err != nil {
			t.Fatal(err)
		}
		if b.ChildID != "" || b.Status != kv.RunPending {
			t.Fatalf("refused run b changed: got %+v", b)
		}
		assertChild(t, s, "main", "root:x", "a")
		assertPending(t, s, "main", "root", "b")
		// Re-writing the owner with its own child is fine.
		if err := pair(t, s, "main", "a", "root:x"); err != nil {
			t.Fatalf("re-pair a with its own child: %v", err)
		}
	})
	t.Run("FnError", func(t *testing.T) {
		s := MustOpenStore(t)
		boom := errors.New("boom")
		_, err := s.UpdateRun(ctx, "main", "r", func(r *kv.Run, exists bool) error {
			*r = newRun("main", "r", "root")
			return boom
		})
		if err != boom {
			t.Fatalf("got %v, want the fn's error as is", err)
		}
		if _, err := s.GetRun(ctx, "main", "r"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("after fn error: got %v, want ErrNotFound", err)
		}
		assertPending(t, s, "main", "root")
	})
	t.Run("Invalid", func(t *testing.T) {
		s := MustOpenStore(t)
		mustUpdateRun(t, s, newRun("main", "r", "root"))
		for name, change := range map[string]func(r *kv.Run){
			"NoHarness":   func(r *kv.Run) { r.Harness = "" },
			"NoStatus":    func(r *kv.Run) { r.Status = "" },
			"NoParent":    func(r *kv.Run) { r.ParentID = "" },
			"NULChild":    func(r *kv.Run) { r.ChildID = "a\x00b" },
			"RootChanged": func(r *kv.Run) { r.RootID = "other" },
			"IDChanged":   func(r *kv.Run) { r.ID = "other" },
			"ScopeMoved":  func(r *kv.Run) { r.Scope = "other" },
		} {
			_, err := s.UpdateRun(ctx, "main", "r", func(r *kv.Run, _ bool) error { change(r); return nil })
			if err == nil {
				t.Errorf("%s: got nil error", name)
			}
		}
		stored, err := s.GetRun(ctx, "main", "r")
		if err != nil {
			t.Fatal(err)
		}
		if want := newRun("main", "r", "root"); stored.Harness != want.Harness || stored.Status != want.Status || stored.RootID != "root" {
			t.Fatalf("refused changes were written: got %+v", stored)
		}
		if _, err := s.UpdateRun(ctx, "main", "", func(*kv.Run, bool) error { return nil }); err == nil {
			t.Error("empty id: got nil error")
		}
		if _, err := s.UpdateRun(ctx, "", "r", func(*kv.Run, bool) error { return nil }); err == nil {
			t.Error("empty scope: got nil error")
		}
		list, err := s.ListRuns(ctx, "main", kv.RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		assertRunIDs(t, list, "r")
	})
}

func TestGetRun_ErrNotFound(t *testing.T) {
	s := MustOpenStore(t)
	_, err := s.GetRun(t.Context(), "main", "nope")
	if !errors.Is(err, kv.ErrNotFound) || !strings.Contains(err.Error(), "main/nope") {
		t.Fatalf("got %v, want ErrNotFound naming main/nope", err)
	}
	_, err = s.RunByChild(t.Context(), "main", "nope")
	if !errors.Is(err, kv.ErrNotFound) || !strings.Contains(err.Error(), "main/nope") {
		t.Fatalf("run by child: got %v, want ErrNotFound naming main/nope", err)
	}
}

func TestPendingRuns(t *testing.T) {
	s := MustOpenStore(t)
	// Created out of order: pending runs list oldest first by CreatedAt.
	for _, r := range []struct {
		id, root string
		at       time.Duration
	}{{"r3", "root", 3}, {"r1", "root", 1}, {"r2", "root", 2}, {"o1", "root2", 1}, {"o2", "roo", 1}} {
		in := newRun("main", r.id, r.root)
		in.CreatedAt = epoch.Add(r.at * time.Hour)
		mustUpdateRun(t, s, in)
	}
	other := newRun("mainx", "x1", "root") // another scope with the same root id
	mustUpdateRun(t, s, other)

	assertPending(t, s, "main", "root", "r1", "r2", "r3")
	assertPending(t, s, "main", "root2", "o1")
	assertPending(t, s, "main", "roo", "o2")
	assertPending(t, s, "mainx", "root", "x1")
	assertPending(t, s, "main", "nobody")
	if err := pair(t, s, "main", "r2", "root:a"); err != nil {
		t.Fatal(err)
	}
	assertPending(t, s, "main", "root", "r1", "r3")
	if _, err := s.PendingRuns(t.Context(), "main", ""); err == nil {
		t.Fatal("empty root: got nil error")
	}
}

func TestListRuns(t *testing.T) {
	ctx := t.Context()
	s := MustOpenStore(t)
	put := func(id, root, parent, child, status string, at time.Duration) {
		t.Helper()
		r := newRun("main", id, root)
		r.ParentID, r.ChildID, r.Status = parent, child, status
		r.CreatedAt = epoch.Add(at * time.Minute)
		mustUpdateRun(t, s, r)
	}
	put("a", "root1", "root1", "root1:x", kv.RunCompleted, 1)
	put("b", "root1", "root1:x", "root1:y", kv.RunRunning, 2)
	put("c", "root2", "root2", "", kv.RunPending, 3)
	put("d", "root1", "root1", "", kv.RunPending, 4)
	put("e2", "root2", "root2", "root2:z", kv.RunFailed, 5) // same CreatedAt as e1: ties by ID
	put("e1", "root2", "root2", "", kv.RunPending, 5)
	mustUpdateRun(t, s, newRun("mai", "zz", "root1"))
	mustUpdateRun(t, s, newRun("mainx", "zz", "root1"))

	tests := []struct {
		name string
		f    kv.RunFilter
		want []string
	}{
		{"All", kv.RunFilter{}, []string{"e1", "e2", "d", "c", "b", "a"}},
		{"Limit", kv.RunFilter{Limit: 2}, []string{"e1", "e2"}},
		{"Root", kv.RunFilter{RootID: "root1"}, []string{"d", "b", "a"}},
		{"RootLimit", kv.RunFilter{RootID: "root1", Limit: 2}, []string{"d", "b"}},
		{"Parent", kv.RunFilter{ParentID: "root1:x"}, []string{"b"}},
		{"Child", kv.RunFilter{ChildID: "root2:z"}, []string{"e2"}},
		{"Status", kv.RunFilter{Status: kv.RunPending}, []string{"e1", "d", "c"}},
		{"RootStatus", kv.RunFilter{RootID: "root2", Status: kv.RunPending}, []string{"e1", "c"}},
		{"NoMatch", kv.RunFilter{Status: "nope"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.ListRuns(ctx, "main", tt.f)
			if err != nil {
				t.Fatal(err)
			}
			assertRunIDs(t, got, tt.want...)
		})
	}
	t.Run("EmptyScope", func(t *testing.T) {
		got, err := s.ListRuns(ctx, "nobody", kv.RunFilter{})
		if err != nil || got == nil || len(got) != 0 {
			t.Fatalf("got %v, %v; want an empty, non-nil list", got, err)
		}
		if _, err := s.ListRuns(ctx, "", kv.RunFilter{}); err == nil {
			t.Fatal("empty scope: got nil error")
		}
	})
	t.Run("OrderKeptAfterUpdate", func(t *testing.T) {
		// Updating a run does not move it: the order is by CreatedAt, which is kept.
		if err := pair(t, s, "main", "c", "root2:w"); err != nil {
			t.Fatal(err)
		}
		got, err := s.ListRuns(ctx, "main", kv.RunFilter{RootID: "root2"})
		if err != nil {
			t.Fatal(err)
		}
		assertRunIDs(t, got, "e1", "e2", "c")
	})
}

func TestRuns_Reopen(t *testing.T) {
	dir := testDir(t)
	ctx := t.Context()
	s := kv.NewStore(dir)
	s.Now = stepClock()
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	mustUpdateRun(t, s, newRun("main", "paired", "root"))
	if err := pair(t, s, "main", "paired", "root:a"); err != nil {
		t.Fatal(err)
	}
	wantPending := mustUpdateRun(t, s, newRun("main", "waiting", "root"))
	wantPaired, err := s.GetRun(ctx, "main", "paired")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = kv.NewStore(dir)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetRun(ctx, "main", "paired")
	if err != nil {
		t.Fatal(err)
	}
	assertRun(t, got, wantPaired)
	assertChild(t, s, "main", "root:a", "paired")
	pending, err := s.PendingRuns(ctx, "main", "root")
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 {
		t.Fatalf("pending after reopen: got %d runs, want 1", len(pending))
	}
	assertRun(t, pending[0], wantPending)
	list, err := s.ListRuns(ctx, "main", kv.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	assertRunIDs(t, list, "waiting", "paired")
	// The child index still refuses a second claim after reopen.
	if err := pair(t, s, "main", "waiting", "root:a"); err == nil {
		t.Fatal("claim a paired child after reopen: got nil error")
	}
}

func TestRuns_ErrClosed(t *testing.T) {
	s := kv.NewStore(t.TempDir())
	ctx := t.Context()
	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, kv.ErrClosed) {
			t.Errorf("%s: got %v, want ErrClosed", name, err)
		}
	}
	_, err := s.UpdateRun(ctx, "main", "r", func(*kv.Run, bool) error { return nil })
	check("UpdateRun", err)
	_, err = s.GetRun(ctx, "main", "r")
	check("GetRun", err)
	_, err = s.RunByChild(ctx, "main", "c")
	check("RunByChild", err)
	_, err = s.PendingRuns(ctx, "main", "root")
	check("PendingRuns", err)
	_, err = s.ListRuns(ctx, "main", kv.RunFilter{})
	check("ListRuns", err)
}
