package kv_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/search"
)

func assertTurns(t *testing.T, got, want []kv.Turn) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("turns: got %d, want %d", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("turn %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// withSeqs returns a copy of turns numbered from first.
func withSeqs(turns []kv.Turn, first uint64) []kv.Turn {
	out := make([]kv.Turn, len(turns))
	for i, t := range turns {
		t.Seq = first + uint64(i)
		out[i] = t
	}
	return out
}

// makeTurns returns n user turns with SourceIDs prefix0, prefix1, ….
func makeTurns(prefix string, from, n int) []kv.Turn {
	out := make([]kv.Turn, n)
	for i := range out {
		out[i] = kv.Turn{SourceID: fmt.Sprintf("%s%d", prefix, from+i), Role: "user", Text: fmt.Sprintf("turn %d", from+i)}
	}
	return out
}

// mustSession stores a new session and returns its id.
func mustSession(tb testing.TB, s *kv.Store, scope, id string) {
	tb.Helper()
	if err := s.PutSession(tb.Context(), newSession(scope, id)); err != nil {
		tb.Fatal(err)
	}
}

func TestAppendTurns(t *testing.T) {
	ctx := t.Context()
	t.Run("OK", func(t *testing.T) {
		s := MustOpenStore(t)
		mustSession(t, s, "main", "x")
		turns := []kv.Turn{
			{Seq: 99, SourceID: "u1", Role: "user", Text: "fix it", At: epoch},
			{SourceID: "a1", Role: "assistant", Text: "reading", Tool: "Read", Files: []string{"a.go", "b.go"}},
			{Role: "system", Text: "no source id"},
		}
		pos := kv.TranscriptPos{Path: "/t.jsonl", Offset: 300, Ident: "1:2"}
		added, err := s.AppendTurns(ctx, "main", "x", turns, pos)
		if err != nil {
			t.Fatal(err)
		}
		if added != 3 {
			t.Fatalf("added: got %d, want 3", added)
		}
		got, err := s.Turns(ctx, "main", "x", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		assertTurns(t, got, withSeqs(turns, 0))
		sess, err := s.GetSession(ctx, "main", "x")
		if err != nil {
			t.Fatal(err)
		}
		if sess.TurnCount != 3 || sess.Transcript != pos || !sess.UpdatedAt.Equal(epoch.Add(2e9)) {
			t.Fatalf("session: got TurnCount %d, Transcript %+v, UpdatedAt %v; want 3, %+v, %v",
				sess.TurnCount, sess.Transcript, sess.UpdatedAt, pos, epoch.Add(2e9))
		}
	})
	t.Run("Dedupe", func(t *testing.T) {
		s := MustOpenStore(t)
		mustSession(t, s, "main", "x")
		first := makeTurns("r", 0, 5)
		if n, err := s.AppendTurns(ctx, "main", "x", first, kv.TranscriptPos{Offset: 50}); err != nil || n != 5 {
			t.Fatalf("first append: got %d, %v; want 5, nil", n, err)
		}
		// The transcript is re-read from 0: the old records come again, plus two new ones.
		again := makeTurns("r", 0, 7)
		n, err := s.AppendTurns(ctx, "main", "x", again, kv.TranscriptPos{Offset: 70})
		if err != nil || n != 2 {
			t.Fatalf("re-read append: got %d, %v; want 2, nil", n, err)
		}
		// Exactly the same records again: nothing added, the position still recorded.
		n, err = s.AppendTurns(ctx, "main", "x", again, kv.TranscriptPos{Offset: 71})
		if err != nil || n != 0 {
			t.Fatalf("repeat append: got %d, %v; want 0, nil", n, err)
		}
		got, err := s.Turns(ctx, "main", "x", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		assertTurns(t, got, withSeqs(again, 0))
		sess, err := s.GetSession(ctx, "main", "x")
		if err != nil {
			t.Fatal(err)
		}
		if sess.TurnCount != 7 || sess.Transcript.Offset != 71 {
			t.Fatalf("session: got TurnCount %d, Offset %d; want 7, 71", sess.TurnCount, sess.Transcript.Offset)
		}
	})
	t.Run("DedupeWithinSlice", func(t *testing.T) {
		s := MustOpenStore(t)
		mustSession(t, s, "main", "x")
		turns := []kv.Turn{
			{SourceID: "a", Role: "user", Text: "1"},
			{SourceID: "b", Role: "assistant", Text: "2"},
			{SourceID: "a", Role: "user", Text: "1 again"},
			{Role: "system", Text: "3"},
			{Role: "system", Text: "3"},
		}
		n, err := s.AppendTurns(ctx, "main", "x", turns, kv.TranscriptPos{})
		if err != nil || n != 4 {
			t.Fatalf("got %d, %v; want 4, nil", n, err)
		}
		got, err := s.Turns(ctx, "main", "x", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		assertTurns(t, got, withSeqs([]kv.Turn{turns[0], turns[1], turns[3], turns[4]}, 0))
	})
	t.Run("DedupePerSession", func(t *testing.T) {
		s := MustOpenStore(t)
		mustSession(t, s, "main", "x")
		mustSession(t, s, "main", "y")
		turns := makeTurns("s", 0, 3)
		for _, id := range []string{"x", "y"} {
			if n, err := s.AppendTurns(ctx, "main", id, turns, kv.TranscriptPos{}); err != nil || n != 3 {
				t.Fatalf("append to %s: got %d, %v; want 3, nil", id, n, err)
			}
		}
	})
	t.Run("NoTurnsRecordsPos", func(t *testing.T) {
		s := MustOpenStore(t)
		mustSession(t, s, "main", "x")
		pos := kv.TranscriptPos{Path: "/t", Offset: 12, Ident: "9"}
		if n, err := s.AppendTurns(ctx, "main", "x", nil, pos); err != nil || n != 0 {
			t.Fatalf("got %d, %v; want 0, nil", n, err)
		}
		sess, err := s.GetSession(ctx, "main", "x")
		if err != nil {
			t.Fatal(err)
		}
		if sess.Transcript != pos {
			t.Fatalf("Transcript: got %+v, want %+v", sess.Transcript, pos)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := MustOpenStore(t)
		_, err := s.AppendTurns(ctx, "main", "nope", makeTurns("x", 0, 1), kv.TranscriptPos{})
		if !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("got %v, want ErrNotFound", err)
		}
		if !strings.Contains(err.Error(), "main/nope") {
			t.Fatalf("error %q: want it to name main/nope", err)
		}
	})
	t.Run("InvalidTurn", func(t *testing.T) {
		s := MustOpenStore(t)
		mustSession(t, s, "main", "x")
		turns := append(makeTurns("x", 0, 2), kv.Turn{Role: "robot"})
		if _, err := s.AppendTurns(ctx, "main", "x", turns, kv.TranscriptPos{Offset: 5}); err == nil {
			t.Fatal("got nil error for an invalid turn")
		}
		sess, err := s.GetSession(ctx, "main", "x")
		if err != nil {
			t.Fatal(err)
		}
		if sess.TurnCount != 0 || sess.Transcript.Offset != 0 {
			t.Fatalf("after a refused append: TurnCount %d, Offset %d; want 0, 0", sess.TurnCount, sess.Transcript.Offset)
		}
	})
	t.Run("PutKeepsTurnCount", func(t *testing.T) {
		s := MustOpenStore(t)
		mustSession(t, s, "main", "x")
		if _, err := s.AppendTurns(ctx, "main", "x", makeTurns("x", 0, 3), kv.TranscriptPos{}); err != nil {
			t.Fatal(err)
		}
		mustSession(t, s, "main", "x") // a stale copy with TurnCount 0
		if _, err := s.AppendTurns(ctx, "main", "x", makeTurns("x", 3, 1), kv.TranscriptPos{}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Turns(ctx, "main", "x", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		assertTurns(t, got, withSeqs(makeTurns("x", 0, 4), 0))
	})
}

func TestTurns(t *testing.T) {
	ctx := t.Context()
	s := MustOpenStore(t)
	mustSession(t, s, "main", "x")
	mustSession(t, s, "main", "x2") // "x" is a prefix of "x2": its turns must not leak into x's
	all := makeTurns("t", 0, 300)   // more than one byte of Seq
	if _, err := s.AppendTurns(ctx, "main", "x", all, kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendTurns(ctx, "main", "x2", makeTurns("o", 0, 5), kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	want := withSeqs(all, 0)

	for _, tt := range []struct {
		from  uint64
		limit int
		want  []kv.Turn
	}{
		{0, 0, want},
		{0, -1, want},
		{0, 10, want[:10]},
		{250, 0, want[250:]},
		{255, 3, want[255:258]},
		{299, 10, want[299:]},
		{300, 0, nil},
		{1 << 40, 0, nil},
	} {
		t.Run(fmt.Sprintf("from=%d,limit=%d", tt.from, tt.limit), func(t *testing.T) {
			got, err := s.Turns(ctx, "main", "x", tt.from, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			assertTurns(t, got, tt.want)
		})
	}
	if _, err := s.Turns(ctx, "main", "nope", 0, 0); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("missing session: got %v, want ErrNotFound", err)
	}
	mustSession(t, s, "main", "empty")
	if got, err := s.Turns(ctx, "main", "empty", 0, 0); err != nil || len(got) != 0 {
		t.Fatalf("empty session: got %d turns, %v; want 0, nil", len(got), err)
	}
}

func TestLastTurns(t *testing.T) {
	ctx := t.Context()
	s := MustOpenStore(t)
	mustSession(t, s, "main", "x")
	mustSession(t, s, "main", "x2")
	all := withSeqs(makeTurns("t", 0, 20), 0)
	if _, err := s.AppendTurns(ctx, "main", "x", all, kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendTurns(ctx, "main", "x2", makeTurns("o", 0, 5), kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		n    int
		want []kv.Turn
	}{
		{0, nil},
		{-3, nil},
		{1, all[19:]},
		{5, all[15:]},
		{20, all},
		{100, all},
	} {
		t.Run(fmt.Sprintf("n=%d", tt.n), func(t *testing.T) {
			got, err := s.LastTurns(ctx, "main", "x", tt.n)
			if err != nil {
				t.Fatal(err)
			}
			assertTurns(t, got, tt.want)
		})
	}
	if _, err := s.LastTurns(ctx, "main", "nope", 3); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("missing session: got %v, want ErrNotFound", err)
	}
}

// TestConcurrentWrites runs appends (with overlapping SourceIDs) and read-modify-write updates
// of one session from 8 goroutines; run it with -race.
func TestConcurrentWrites(t *testing.T) {
	const workers, rounds = 8, 40
	ctx := t.Context()
	s := MustOpenStore(t)
	mustSession(t, s, "main", "x")

	var wg sync.WaitGroup
	var mu sync.Mutex
	totalAdded := 0
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				turns := []kv.Turn{
					{SourceID: fmt.Sprintf("own-%d-%d", w, r), Role: "assistant", Text: "mine"},
					{SourceID: fmt.Sprintf("shared-%d", r), Role: "user", Text: "everyone's"},
				}
				n, err := s.AppendTurns(ctx, "main", "x", turns, kv.TranscriptPos{Offset: int64(r)})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				totalAdded += n
				mu.Unlock()
				_, err = s.UpdateSession(ctx, "main", "x", func(sess *kv.Session, exists bool) error {
					sess.Title += "."
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
				if _, err := s.LastTurns(ctx, "main", "x", 3); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	const want = workers*rounds + rounds // every own turn, each shared one once
	if totalAdded != want {
		t.Fatalf("added: got %d, want %d", totalAdded, want)
	}
	sess, err := s.GetSession(ctx, "main", "x")
	if err != nil {
		t.Fatal(err)
	}
	if sess.TurnCount != want {
		t.Fatalf("TurnCount: got %d, want %d", sess.TurnCount, want)
	}
	if len(sess.Title) != workers*rounds {
		t.Fatalf("updates: got %d, want %d", len(sess.Title), workers*rounds)
	}
	turns, err := s.Turns(ctx, "main", "x", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, tr := range turns {
		if tr.Seq != uint64(i) {
			t.Fatalf("turn %d: got Seq %d, want %d", i, tr.Seq, i)
		}
		if seen[tr.SourceID] {
			t.Fatalf("SourceID %s stored twice", tr.SourceID)
		}
		seen[tr.SourceID] = true
	}
	if len(turns) != want {
		t.Fatalf("turns: got %d, want %d", len(turns), want)
	}
	list, err := s.ListSessions(ctx, "main", kv.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	assertIDs(t, list, "x")
}

// fillTurns appends n turns to (main, x), in batches.
func fillTurns(b *testing.B, s *kv.Store, n int) {
	b.Helper()
	const batch = 5000
	for i := 0; i < n; i += batch {
		if _, err := s.AppendTurns(b.Context(), "main", "x", makeTurns("fill-", i, min(batch, n-i)), kv.TranscriptPos{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendTurns appends one new turn per operation to a session that already holds 100
// or 100,000 turns. Every append is a synced write, so the disk's fsync time dominates; the two
// sizes must cost the same. index=on is the store as serve opens it (search.Analyzer: the turn's
// postings go in the same batch); index=off is the same store without the search index, for
// comparison.
func BenchmarkAppendTurns(b *testing.B) {
	for _, existing := range []int{100, 100_000} {
		for _, index := range []bool{true, false} {
			b.Run(fmt.Sprintf("existing=%d/index=%s", existing, onOff(index)), func(b *testing.B) {
				s := openBenchStore(b, index)
				mustSession(b, s, "main", "x")
				fillTurns(b, s, existing)
				i := 0
				for b.Loop() {
					turn := []kv.Turn{{SourceID: fmt.Sprintf("new-%d", i), Role: "assistant", Text: "a reply of a few words"}}
					if _, err := s.AppendTurns(b.Context(), "main", "x", turn, kv.TranscriptPos{Offset: int64(i)}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// openBenchStore is MustOpenStore with the search index on (search.Analyzer, as serve opens the
// store) or off.
func openBenchStore(b *testing.B, index bool) *kv.Store {
	b.Helper()
	s := kv.NewStore(testDir(b))
	if index {
		s.Index = search.Analyzer{}
	}
	if err := s.Open(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	})
	return s
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// BenchmarkLastTurns reads the last 20 turns of a session of 100 or 100,000 turns, stored with
// the search index on as serve stores them.
func BenchmarkLastTurns(b *testing.B) {
	for _, existing := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("existing=%d", existing), func(b *testing.B) {
			s := openBenchStore(b, true)
			mustSession(b, s, "main", "x")
			fillTurns(b, s, existing)
			for b.Loop() {
				got, err := s.LastTurns(b.Context(), "main", "x", 20)
				if err != nil {
					b.Fatal(err)
				}
				if len(got) != 20 {
					b.Fatalf("got %d turns, want 20", len(got))
				}
			}
		})
	}
}

func TestUpsertTurns(t *testing.T) {
	s := MustOpenStore(t)
	ctx := t.Context()
	if err := s.PutSession(ctx, kv.Session{Scope: "sc", ID: "ses_1", Harness: "opencode", Status: kv.StatusActive}); err != nil {
		t.Fatal(err)
	}
	// A streamed part grows: the same source id three times, twice in one call.
	added, replaced, err := s.UpsertTurns(ctx, "sc", "ses_1", []kv.Turn{
		{SourceID: "prt_a", Role: "user", Text: "hello"},
		{SourceID: "prt_b", Role: "assistant", Text: "Wor"},
		{SourceID: "prt_b", Role: "assistant", Text: "Working", Files: []string{"a.go"}},
	})
	if err != nil || added != 2 || replaced != 0 {
		t.Fatalf("first upsert: got added %d replaced %d err %v, want 2, 0", added, replaced, err)
	}
	added, replaced, err = s.UpsertTurns(ctx, "sc", "ses_1", []kv.Turn{
		{SourceID: "prt_b", Role: "assistant", Text: "Working on it.", Files: []string{"b.go"}},
		{SourceID: "prt_c", Role: "tool", Tool: "read"},
	})
	if err != nil || added != 1 || replaced != 1 {
		t.Fatalf("second upsert: got added %d replaced %d err %v, want 1, 1", added, replaced, err)
	}
	turns, err := s.Turns(ctx, "sc", "ses_1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 3 || turns[1].Seq != 1 || turns[1].Text != "Working on it." || turns[2].SourceID != "prt_c" {
		t.Fatalf("got %+v", turns)
	}
	sess, _ := s.GetSession(ctx, "sc", "ses_1")
	if sess.TurnCount != 3 || len(sess.Files) != 2 || sess.Files[0] != "b.go" {
		t.Fatalf("session: got turn count %d files %v", sess.TurnCount, sess.Files)
	}
	// AppendTurns still skips known source ids.
	if n, err := s.AppendTurns(ctx, "sc", "ses_1", []kv.Turn{{SourceID: "prt_a", Role: "user", Text: "changed"}}, kv.TranscriptPos{}); err != nil || n != 0 {
		t.Fatalf("append of a known id: got %d, %v", n, err)
	}
	if _, _, err := s.UpsertTurns(ctx, "sc", "nope", []kv.Turn{{Role: "user"}}); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("unknown session: got %v, want ErrNotFound", err)
	}
}
