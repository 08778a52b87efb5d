package kv_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/heirloom-dev/heirloom/kv"
)

// lineage is what a pairing change touches, read back from the store: each session's parent,
// depth, title and objective, and each run's child, provisional mark and status.
type lineage struct {
	Sessions map[string][4]string
	Runs     map[string][3]string
}

func readLineage(t *testing.T, s *kv.Store, scope string) lineage {
	t.Helper()
	l := lineage{Sessions: map[string][4]string{}, Runs: map[string][3]string{}}
	sessions, err := s.ListSessions(t.Context(), scope, kv.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sess := range sessions {
		l.Sessions[sess.ID] = [4]string{sess.ParentID, fmt.Sprint(sess.Depth), sess.Title, sess.Objective}
	}
	runs, err := s.ListRuns(t.Context(), scope, kv.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		l.Runs[r.ID] = [3]string{r.ChildID, fmt.Sprint(r.Provisional), r.Status}
	}
	return l
}

// swap is a provisional pairing corrected in one transaction: run right gets child c, run
// wrong (which held c) gets right's previous child, and both children take their run's task.
func swap(tx *kv.Tx, scope, right, c string) error {
	run, err := tx.GetRun(scope, right)
	if err != nil {
		return err
	}
	wrong, err := tx.RunByChild(scope, c)
	if err != nil {
		return err
	}
	prev := run.ChildID
	if _, err := tx.UpdateRun(scope, wrong.ID, func(r *kv.Run, _ bool) error {
		r.ChildID = ""
		return nil
	}); err != nil {
		return err
	}
	for _, p := range []struct{ run, child string }{{right, c}, {wrong.ID, prev}} {
		r, err := tx.UpdateRun(scope, p.run, func(r *kv.Run, _ bool) error {
			r.ChildID, r.Provisional = p.child, p.run != right
			return nil
		})
		if err != nil {
			return err
		}
		if _, err := tx.UpdateSession(scope, p.child, func(sess *kv.Session, _ bool) error {
			sess.Title, sess.Objective = r.Description, r.Prompt
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// seedSwap stores two running runs of root, each holding the other's child by a guess.
func seedSwap(t *testing.T, s *kv.Store) {
	t.Helper()
	for _, id := range []string{"root", "root:a", "root:b"} {
		sess := kv.Session{Scope: "default", ID: id, Harness: "claude-code", Status: kv.StatusActive}
		if id != "root" {
			sess.ParentID, sess.Depth = "root", 1
		}
		if err := s.PutSession(t.Context(), sess); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []struct{ id, child string }{{"t1", "root:b"}, {"t2", "root:a"}} {
		run := newRun("default", r.id, "root")
		run.Description, run.Prompt = "task of "+r.id, "prompt of "+r.id
		run.ChildID, run.Provisional, run.Status = r.child, true, kv.RunRunning
		mustUpdateRun(t, s, run)
	}
}

// TestUpdate_AtomicAtEveryStep fails a correction of a provisional pairing at each of its steps
// in turn and finds the store exactly as before every time, then lets it through and finds it
// exactly as after.
func TestUpdate_AtomicAtEveryStep(t *testing.T) {
	s := MustOpenStore(t)
	seedSwap(t, s)
	before := readLineage(t, s, "default")
	injected := errors.New("injected")
	for k := 0; ; k++ {
		step := 0
		s.Fault = func(name string) error {
			if step++; step-1 == k {
				return injected
			}
			return nil
		}
		err := s.Update(t.Context(), func(tx *kv.Tx) error { return swap(tx, "default", "t1", "root:a") })
		s.Fault = nil
		if err == nil {
			if k == 0 {
				t.Fatal("no step reached the fault hook")
			}
			break
		}
		if !errors.Is(err, injected) {
			t.Fatalf("step %d: got %v, want the injected error", k, err)
		}
		if got := readLineage(t, s, "default"); !reflect.DeepEqual(got, before) {
			t.Fatalf("failed at step %d: store changed:\ngot  %v\nwant %v", k, got, before)
		}
	}
	got := readLineage(t, s, "default")
	want := lineage{
		Sessions: map[string][4]string{
			"root":   {"", "0", "", ""},
			"root:a": {"root", "1", "task of t1", "prompt of t1"},
			"root:b": {"root", "1", "task of t2", "prompt of t2"},
		},
		Runs: map[string][3]string{"t1": {"root:a", "false", kv.RunRunning}, "t2": {"root:b", "true", kv.RunRunning}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after the swap:\ngot  %v\nwant %v", got, want)
	}
	assertChild(t, s, "default", "root:a", "t1")
	assertChild(t, s, "default", "root:b", "t2")
	guessed, err := s.ProvisionalRuns(t.Context(), "default", "root")
	if err != nil {
		t.Fatal(err)
	}
	assertRunIDs(t, guessed, "t2")
}

// TestUpdate_OneCommit: a transaction's writes are one synced batch; one with no writes
// commits nothing.
func TestUpdate_OneCommit(t *testing.T) {
	s := MustOpenStore(t)
	seedSwap(t, s)
	before := s.Stats()
	if err := s.Update(t.Context(), func(tx *kv.Tx) error { return swap(tx, "default", "t1", "root:a") }); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().Sub(before).Commits; got != 1 {
		t.Errorf("commits for one transaction: got %d, want 1", got)
	}
	before = s.Stats()
	if err := s.Update(t.Context(), func(tx *kv.Tx) error {
		_, err := tx.GetRun("default", "t1")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().Sub(before).Commits; got != 0 {
		t.Errorf("commits for a read-only transaction: got %d, want 0", got)
	}
}

// TestUpdate_ReadsOwnWrites: inside a transaction a record written earlier reads back as
// written, and the child index follows a release.
func TestUpdate_ReadsOwnWrites(t *testing.T) {
	s := MustOpenStore(t)
	seedSwap(t, s)
	err := s.Update(t.Context(), func(tx *kv.Tx) error {
		if _, err := tx.UpdateRun("default", "t2", func(r *kv.Run, _ bool) error {
			r.ChildID = ""
			return nil
		}); err != nil {
			return err
		}
		if _, err := tx.RunByChild("default", "root:a"); !errors.Is(err, kv.ErrNotFound) {
			return fmt.Errorf("released child: got %v, want ErrNotFound", err)
		}
		r, err := tx.GetRun("default", "t2")
		if err != nil || r.ChildID != "" {
			return fmt.Errorf("run read back: got %+v, %v", r, err)
		}
		return errors.New("roll back")
	})
	if err == nil || err.Error() != "roll back" {
		t.Fatal(err)
	}
	assertChild(t, s, "default", "root:a", "t2")
}

func TestTailWindow(t *testing.T) {
	turns := make([]kv.Turn, 10)
	for i := range turns {
		turns[i] = kv.Turn{Seq: uint64(i), Role: "user", Text: "0123456789"} // 10 bytes each
	}
	seqs := func(list []kv.Turn) []uint64 {
		var out []uint64
		for _, t := range list {
			out = append(out, t.Seq)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		w    kv.TailWindow
		want []uint64
	}{
		{"zero takes none", kv.TailWindow{}, nil},
		{"min turns", kv.TailWindow{MinTurns: 3, MaxTurns: 10, TextBytes: 1}, []uint64{7, 8, 9}},
		{"widened", kv.TailWindow{MinTurns: 2, MaxTurns: 5, TextBytes: 35}, []uint64{5, 6, 7, 8, 9}},
		{"short enough", kv.TailWindow{MinTurns: 4, MaxTurns: 8, TextBytes: 35}, []uint64{6, 7, 8, 9}},
		{"max turns", kv.TailWindow{MinTurns: 1, MaxTurns: 2, TextBytes: 1000}, []uint64{8, 9}},
		{"fewer than min", kv.TailWindow{MinTurns: 40, MaxTurns: 200, TextBytes: 1}, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := seqs(tc.w.Cut(turns)); !slices.Equal(got, tc.want) {
				t.Errorf("Cut: got %v, want %v", got, tc.want)
			}
			// Complete: the newest k turns hold the window exactly when k reaches its size.
			for k := range len(turns) + 1 {
				if got, want := tc.w.Complete(turns[len(turns)-k:], uint64(len(turns))), k >= len(tc.want); got != want {
					t.Errorf("Complete over the newest %d: got %v, want %v", k, got, want)
				}
			}
		})
	}
}

// TestView reads a session, its tail window and its latest checkpoint in one go, with one
// session decode, the window's turns decoded and one checkpoint decoded, and agrees with
// TailWindow.Cut over all turns.
func TestView(t *testing.T) {
	s := MustOpenStore(t)
	ctx := t.Context()
	if err := s.PutSession(ctx, kv.Session{Scope: "default", ID: "p", Harness: "claude-code", Status: kv.StatusActive}); err != nil {
		t.Fatal(err)
	}
	var all []kv.Turn
	for i := range 60 {
		text := "short"
		if i%7 == 0 {
			text = string(make([]byte, 900))
		}
		all = append(all, kv.Turn{Role: "assistant", Text: text})
	}
	if _, err := s.AppendTurns(ctx, "default", "p", all, kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.PutCheckpoint(ctx, kv.Checkpoint{Scope: "default", SessionID: "p", Trigger: kv.TriggerPeriodic}); err != nil {
			t.Fatal(err)
		}
	}
	latest, err := s.LatestCheckpoint(ctx, "default", "p")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.Turns(ctx, "default", "p", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := kv.TailWindow{MinTurns: 10, MaxTurns: 50, TextBytes: 2000}
	before := s.Stats()
	v, err := s.View(ctx, "default", "p", kv.ViewOptions{Tail: w, Checkpoint: true})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Stats().Sub(before)
	want := w.Cut(stored)
	if !reflect.DeepEqual(v.Tail, want) {
		t.Fatalf("tail: got %d turns from %d, want %d from %d", len(v.Tail), v.Tail[0].Seq, len(want), want[0].Seq)
	}
	if v.Session.ID != "p" || v.Checkpoint == nil || v.Checkpoint.ID != latest.ID {
		t.Fatalf("view: session %q, checkpoint %v; want p and %s", v.Session.ID, v.Checkpoint, latest.ID)
	}
	if got.Sessions != 1 || got.Turns != int64(len(want)) || got.Checkpoints != 1 || got.Commits != 0 {
		t.Errorf("decodes: got sessions %d, turns %d, checkpoints %d, commits %d; want 1, %d, 1, 0",
			got.Sessions, got.Turns, got.Checkpoints, got.Commits, len(want))
	}
	if _, err := s.View(ctx, "default", "nobody", kv.ViewOptions{}); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("view of an unknown session: got %v, want ErrNotFound", err)
	}
}

// TestAppendTranscript returns the session as written and the turns stored with their Seq.
func TestAppendTranscript(t *testing.T) {
	s := MustOpenStore(t)
	ctx := t.Context()
	if err := s.PutSession(ctx, kv.Session{Scope: "default", ID: "p", Harness: "claude-code", Status: kv.StatusActive}); err != nil {
		t.Fatal(err)
	}
	first, err := s.AppendTranscript(ctx, "default", "p", []kv.Turn{{SourceID: "a", Role: "user", Text: "one"}}, kv.TranscriptPos{Path: "/x", Offset: 10})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.AppendTranscript(ctx, "default", "p", []kv.Turn{
		{SourceID: "a", Role: "user", Text: "one"}, {SourceID: "b", Role: "assistant", Text: "two", Files: []string{"f.go"}},
	}, kv.TranscriptPos{Path: "/x", Offset: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Turns) != 1 || len(a.Turns) != 1 || a.Turns[0].SourceID != "b" || a.Turns[0].Seq != 1 {
		t.Fatalf("appended: got %+v then %+v; want a@0 then b@1", first.Turns, a.Turns)
	}
	stored, err := s.GetSession(ctx, "default", "p")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Session, stored) {
		t.Fatalf("session returned:\n%+v\nstored:\n%+v", a.Session, stored)
	}
	if stored.TurnCount != 2 || stored.Transcript.Offset != 20 || !slices.Equal(stored.Files, []string{"f.go"}) {
		t.Fatalf("session after append: %+v", stored)
	}
}

// TestLatestCheckpointWith finds the newest checkpoint with a trigger, stopping there, and only
// among the newest within.
func TestLatestCheckpointWith(t *testing.T) {
	s := MustOpenStore(t)
	ctx := t.Context()
	var ids []string
	for _, trig := range []string{kv.TriggerPreCompaction, kv.TriggerPeriodic, kv.TriggerSpawn, kv.TriggerPeriodic} {
		c, err := s.PutCheckpoint(ctx, kv.Checkpoint{Scope: "default", SessionID: "p", Trigger: trig})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	before := s.Stats()
	c, err := s.LatestCheckpointWith(ctx, "default", "p", kv.TriggerSpawn, 0)
	if err != nil || c.ID != ids[2] {
		t.Fatalf("latest spawn checkpoint: got %v, %v; want %s", c.ID, err, ids[2])
	}
	if got := s.Stats().Sub(before).Checkpoints; got != 2 {
		t.Errorf("checkpoints decoded: got %d, want 2 (it stops at the match)", got)
	}
	if c, err := s.LatestCheckpointWith(ctx, "default", "p", kv.TriggerPreCompaction, 0); err != nil || c.ID != ids[0] {
		t.Errorf("latest pre-compaction checkpoint: got %v, %v; want %s", c.ID, err, ids[0])
	}
	if _, err := s.LatestCheckpointWith(ctx, "default", "p", kv.TriggerPreCompaction, 3); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("pre-compaction within the newest 3: got %v, want ErrNotFound", err)
	}
}

// TestRunIndexes: runs are listed by the session that asked for them, and a root's
// provisionally paired runs are listed until confirmed.
func TestRunIndexes(t *testing.T) {
	s := MustOpenStore(t)
	ctx := t.Context()
	a := newRun("default", "t1", "root")
	mustUpdateRun(t, s, a)
	b := newRun("default", "t2", "root")
	b.ParentID = "root:x"
	mustUpdateRun(t, s, b)
	assertParent := func(parent string, want ...string) {
		t.Helper()
		got, err := s.ListRuns(ctx, "default", kv.RunFilter{ParentID: parent})
		if err != nil {
			t.Fatal(err)
		}
		assertRunIDs(t, got, want...)
	}
	assertParent("root", "t1")
	assertParent("root:x", "t2")
	b.ParentID = "root"
	mustUpdateRun(t, s, b)
	assertParent("root", "t2", "t1")
	assertParent("root:x")

	a.ChildID, a.Provisional, a.Status = "root:c", true, kv.RunRunning
	mustUpdateRun(t, s, a)
	guessed, err := s.ProvisionalRuns(ctx, "default", "root")
	if err != nil {
		t.Fatal(err)
	}
	assertRunIDs(t, guessed, "t1")
	a.Provisional = false
	mustUpdateRun(t, s, a)
	if guessed, err = s.ProvisionalRuns(ctx, "default", "root"); err != nil {
		t.Fatal(err)
	}
	assertRunIDs(t, guessed)
}
