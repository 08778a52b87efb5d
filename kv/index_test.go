package kv_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/kv"
)

// words is a plain Indexer for the store's tests: lower-cased fields, at a version of the
// test's choosing.
type words int

func (words) Terms(text string, add func(string)) {
	for _, f := range strings.Fields(strings.ToLower(text)) {
		add(f)
	}
}

func (w words) Version() int { return int(w) }

// openIndexed opens a store in dir with the words indexer at version v.
func openIndexed(tb testing.TB, dir string, v int) *kv.Store {
	tb.Helper()
	s := kv.NewStore(dir)
	s.Index = words(v)
	if err := s.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// postingsOf lists term's postings in scope as "session/seq:tf/len/role".
func postingsOf(tb testing.TB, s *kv.Store, scope, term string, prefix bool) []string {
	tb.Helper()
	x, err := s.IndexReader(tb.Context(), scope)
	if err != nil {
		tb.Fatal(err)
	}
	defer x.Close()
	var out []string
	err = x.Postings(tb.Context(), term, prefix, func(p kv.Posting) error {
		out = append(out, fmt.Sprintf("%s/%d:%d/%d/%s", p.Session, p.Seq, p.TF, p.Len, p.Role))
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func figures(tb testing.TB, s *kv.Store, scope string) kv.IndexFigures {
	tb.Helper()
	x, err := s.IndexReader(tb.Context(), scope)
	if err != nil {
		tb.Fatal(err)
	}
	defer x.Close()
	f, err := x.Figures(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

func TestIndex_AppendUpsertDelete(t *testing.T) {
	ctx := t.Context()
	s := openIndexed(t, t.TempDir(), 1)
	if st := s.IndexStatus(); !st.Enabled || st.Building {
		t.Fatalf("a new store's index: %+v, want enabled and ready", st)
	}
	mustSession(t, s, "main", "a")
	mustSession(t, s, "main", "b")
	mustSession(t, s, "other", "a")
	if _, err := s.AppendTurns(ctx, "main", "a", []kv.Turn{
		{SourceID: "1", Role: "user", Text: "deploy the Ledger ledger"},
		{SourceID: "2", Role: "assistant", Text: "ledger header", Tool: "Read"},
	}, kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendTurns(ctx, "main", "b", []kv.Turn{{Role: "user", Text: "ledger again"}}, kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendTurns(ctx, "other", "a", []kv.Turn{{Role: "user", Text: "ledger elsewhere"}}, kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"a/0:2/4/user", "a/1:1/3/assistant", "b/0:1/2/user"}
	if got := postingsOf(t, s, "main", "ledger", false); !slices.Equal(got, want) {
		t.Errorf("postings of ledger: %v, want %v", got, want)
	}
	if got := postingsOf(t, s, "main", "read", false); !slices.Equal(got, []string{"a/1:1/3/assistant"}) {
		t.Errorf("the tool's name is not indexed: %v", got)
	}
	if got := postingsOf(t, s, "main", "le", true); len(got) != 3 {
		t.Errorf("prefix le: %v, want the 3 ledger postings", got)
	}
	if got := postingsOf(t, s, "main", "ledge", false); len(got) != 0 {
		t.Errorf("a word that is only a prefix matched: %v", got)
	}
	if f := figures(t, s, "main"); f.Docs != 3 || f.Terms != 9 || f.Stamp != 3 {
		t.Errorf("figures: %+v, want 3 docs, 9 terms, stamp 3", f)
	}

	// A streamed record that grows replaces its postings.
	if _, _, err := s.UpsertTurns(ctx, "main", "a", []kv.Turn{{SourceID: "2", Role: "assistant", Text: "header only"}}); err != nil {
		t.Fatal(err)
	}
	if got := postingsOf(t, s, "main", "ledger", false); !slices.Equal(got, []string{"a/0:2/4/user", "b/0:1/2/user"}) {
		t.Errorf("after the upsert, ledger: %v", got)
	}
	if got := postingsOf(t, s, "main", "only", false); !slices.Equal(got, []string{"a/1:1/2/assistant"}) {
		t.Errorf("after the upsert, only: %v", got)
	}
	if f := figures(t, s, "main"); f.Docs != 3 || f.Terms != 8 {
		t.Errorf("figures after the upsert: %+v, want 3 docs, 8 terms", f)
	}

	// Deleting a session takes its postings, turns and checkpoints, and nothing else.
	if _, err := s.PutCheckpoint(ctx, kv.Checkpoint{Scope: "main", SessionID: "a", Trigger: kv.TriggerAgent}); err != nil {
		t.Fatal(err)
	}
	d, err := s.DeleteSession(ctx, "main", "a")
	if err != nil || d.Turns != 2 || d.Checkpoints != 1 {
		t.Fatalf("DeleteSession: %+v, %v; want 2 turns and 1 checkpoint", d, err)
	}
	if got := postingsOf(t, s, "main", "", true); !slices.Equal(got, []string{"b/0:1/2/user", "b/0:1/2/user"}) {
		t.Errorf("postings left in main: %v, want b's two", got)
	}
	if got := postingsOf(t, s, "other", "ledger", false); !slices.Equal(got, []string{"a/0:1/2/user"}) {
		t.Errorf("another scope's session of the same id lost its postings: %v", got)
	}
	if f := figures(t, s, "main"); f.Docs != 1 || f.Terms != 2 {
		t.Errorf("figures after the delete: %+v, want 1 doc, 2 terms", f)
	}
	if _, err := s.GetSession(ctx, "main", "a"); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("the deleted session is still read: %v", err)
	}
	if _, err := s.Turns(ctx, "main", "a", 0, 0); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("the deleted session's turns: %v", err)
	}
	if _, err := s.LatestCheckpoint(ctx, "main", "a"); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("the deleted session's checkpoint: %v", err)
	}
	if list, _ := s.ListSessions(ctx, "main", kv.SessionFilter{}); len(list) != 1 || list[0].ID != "b" {
		t.Errorf("sessions left: %v", list)
	}
	if _, err := s.DeleteSession(ctx, "main", "a"); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("deleting twice: %v, want ErrNotFound", err)
	}
	// A new session of the same id starts clean.
	mustSession(t, s, "main", "a")
	if _, err := s.AppendTurns(ctx, "main", "a", []kv.Turn{{SourceID: "1", Role: "user", Text: "fresh"}}, kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	if got := postingsOf(t, s, "main", "fresh", false); !slices.Equal(got, []string{"a/0:1/1/user"}) {
		t.Errorf("a session made again after delete: %v", got)
	}
}

// TestIndex_Reindex: a store written without an index (or under another version) is marked due
// at Open and rebuilt by Reindex, turns stored meanwhile are indexed exactly once, and a whole
// index is not rebuilt again.
func TestIndex_Reindex(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	plain := kv.NewStore(dir)
	if err := plain.Open(); err != nil {
		t.Fatal(err)
	}
	const sessions, perSession = 6, 300
	for i := range sessions {
		id := fmt.Sprintf("s%d", i)
		mustSession(t, plain, "main", id)
		turns := make([]kv.Turn, perSession)
		for j := range turns {
			turns[j] = kv.Turn{Role: "user", Text: fmt.Sprintf("common word%d", j)}
		}
		if _, err := plain.AppendTurns(ctx, "main", id, turns, kv.TranscriptPos{}); err != nil {
			t.Fatal(err)
		}
	}
	plain.Close()

	s := kv.NewStore(dir)
	s.Index = words(1)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	if st := s.IndexStatus(); !st.Building {
		t.Fatalf("a store with unindexed turns: %+v, want building", st)
	}
	// Turns stored during the rebuild: in a session it has done, and in one it has not reached.
	calls := 0
	err := s.Reindex(ctx, func(done, total uint64) {
		calls++
		if calls != 2 {
			return
		}
		for _, id := range []string{"s0", "s5"} {
			if _, err := s.AppendTurns(ctx, "main", id, []kv.Turn{{Role: "user", Text: "common late"}}, kv.TranscriptPos{}); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 3 {
		t.Errorf("progress called %d times: the rebuild was not chunked", calls)
	}
	st := s.IndexStatus()
	if st.Building || st.Done < sessions*perSession || st.Total != sessions*perSession {
		t.Errorf("status after Reindex: %+v", st)
	}
	all := sessions*perSession + 2
	if got := postingsOf(t, s, "main", "common", false); len(got) != all {
		t.Errorf("common: %d postings, want %d (every turn once)", len(got), all)
	}
	if got := postingsOf(t, s, "main", "late", false); !slices.Equal(got, []string{"s0/300:1/2/user", "s5/300:1/2/user"}) {
		t.Errorf("late: %v", got)
	}
	if f := figures(t, s, "main"); f.Docs != uint64(all) || f.Terms != uint64(2*all) {
		t.Errorf("figures: %+v, want %d docs", f, all)
	}
	s.Close()

	// Whole: opened again, nothing is due.
	s = openIndexed(t, dir, 1)
	if st := s.IndexStatus(); st.Building {
		t.Errorf("a whole index is due again: %+v", st)
	}
	s.Close()
	// Another version: due again.
	s = openIndexed(t, dir, 2)
	if st := s.IndexStatus(); !st.Building {
		t.Errorf("an index of another version is not due: %+v", st)
	}
	// Cancelled midway, it stays due.
	cctx, cancel := context.WithCancel(ctx)
	err = s.Reindex(cctx, func(done, total uint64) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Reindex: %v", err)
	}
	s.Close()
	s = openIndexed(t, dir, 2)
	if st := s.IndexStatus(); !st.Building {
		t.Errorf("an interrupted rebuild is not due again: %+v", st)
	}
	if err := s.Reindex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := postingsOf(t, s, "main", "common", false); len(got) != all {
		t.Errorf("after the second rebuild, common: %d postings, want %d", len(got), all)
	}
	s.Close()

	// Opened without an indexer, the store forgets its index; with one again, it is rebuilt.
	plain = kv.NewStore(dir)
	if err := plain.Open(); err != nil {
		t.Fatal(err)
	}
	plain.Close()
	s = openIndexed(t, dir, 2)
	if st := s.IndexStatus(); !st.Building {
		t.Errorf("an index the store did not keep up is not due: %+v", st)
	}
}
