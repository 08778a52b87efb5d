package kv_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
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
	if f := figures(t, s, "main"); f.Docs != 3 || f.Terms != 8 || f.Stamp != 3 {
		t.Errorf("figures after the upsert: %+v, want 3 docs, 8 terms, stamp 3", f)
	}
	// The replaced turn keeps its stamp, so that a search's later pages still see it.
	x, err := s.IndexReader(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	err = x.Postings(ctx, "only", false, func(p kv.Posting) error {
		if p.Stamp != 2 {
			t.Errorf("the replaced turn's posting has stamp %d, want its first, 2", p.Stamp)
		}
		return nil
	})
	x.Close()
	if err != nil {
		t.Fatal(err)
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
	indexAgrees(t, s, "main", words(1))
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

// indexAgrees checks that scope's index is exactly what its stored turns give: every term of
// every turn has its posting (count, length, role), every posting names a stored turn that holds
// its term, a turn's postings share one stamp no newer than the scope's, and the scope's figures
// are the turns' count and summed lengths. It returns how many turns it checked.
func indexAgrees(tb testing.TB, s *kv.Store, scope string, ix kv.Indexer) int {
	tb.Helper()
	ctx := tb.Context()
	type doc struct {
		session string
		seq     uint64
	}
	want := map[string]int{} // term 0 session 0 seq → count
	lens := map[doc]int{}
	roles := map[doc]string{}
	var docs, terms uint64
	sessions, err := s.ListSessions(ctx, scope, kv.SessionFilter{})
	if err != nil {
		tb.Fatal(err)
	}
	checked := 0
	for _, sess := range sessions {
		turns, err := s.Turns(ctx, scope, sess.ID, 0, 0)
		if err != nil {
			tb.Fatal(err)
		}
		if uint64(len(turns)) != sess.TurnCount {
			tb.Errorf("session %s: %d turns stored, TurnCount %d", sess.ID, len(turns), sess.TurnCount)
		}
		for _, turn := range turns {
			checked++
			text := turn.Text
			if turn.Tool != "" {
				text = turn.Tool + "\n" + turn.Text
			}
			n := 0
			ix.Terms(text, func(term string) {
				want[term+"\x00"+sess.ID+"\x00"+fmt.Sprint(turn.Seq)]++
				n++
			})
			if n > 0 {
				d := doc{sess.ID, turn.Seq}
				lens[d], roles[d] = n, turn.Role
				docs++
				terms += uint64(n)
			}
		}
	}
	fig := figures(tb, s, scope)
	x, err := s.IndexReader(ctx, scope)
	if err != nil {
		tb.Fatal(err)
	}
	defer x.Close()
	got := map[string]int{}
	stamps := map[doc]uint64{}
	bad := 0
	err = x.Postings(ctx, "", true, func(p kv.Posting) error {
		d := doc{p.Session, p.Seq}
		got[p.Term+"\x00"+p.Session+"\x00"+fmt.Sprint(p.Seq)] = p.TF
		if lens[d] != p.Len || roles[d] != p.Role || p.Stamp == 0 || p.Stamp > fig.Stamp {
			if bad++; bad <= 5 {
				tb.Errorf("posting %q of %s/%d: length %d, role %q, stamp %d; want %d, %q, a stamp in 1..%d", p.Term, p.Session, p.Seq, p.Len, p.Role, p.Stamp, lens[d], roles[d], fig.Stamp)
			}
		}
		if st, ok := stamps[d]; ok && st != p.Stamp {
			tb.Errorf("%s/%d: postings of stamps %d and %d", p.Session, p.Seq, st, p.Stamp)
		}
		stamps[d] = p.Stamp
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	for k, n := range want {
		if got[k] != n {
			if bad++; bad <= 10 {
				tb.Errorf("posting %q: count %d, want %d", strings.ReplaceAll(k, "\x00", "/"), got[k], n)
			}
		}
	}
	for k := range got {
		if want[k] == 0 {
			if bad++; bad <= 10 {
				tb.Errorf("posting %q names no stored turn holding it", strings.ReplaceAll(k, "\x00", "/"))
			}
		}
	}
	if fig.Docs != docs || fig.Terms != terms {
		tb.Errorf("figures %+v, want %d docs and %d terms", fig, docs, terms)
	}
	return checked
}

// crashDirEnv names, in the child process TestIndex_SIGKILL starts, the store to ingest into;
// crashModeEnv what it does there.
const (
	crashDirEnv  = "HEIRLOOM_KV_CRASH_DIR"
	crashModeEnv = "HEIRLOOM_KV_CRASH_MODE"
)

// crashVocabulary is what the child's turns are made of: some words often, most rarely.
var crashVocabulary = strings.Fields("deploy ledger header cancel context parse rotate key " +
	"alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho")

// crashChild ingests turns into the store in dir until it is killed, printing "ack SESSION N"
// after each write the store acknowledged (N: the session's turn count then), "del SESSION"
// after a deletion. In mode "reindex" it opens the store under another index version and
// rebuilds the index while it ingests, printing "progress DONE TOTAL" after each chunk and
// "rebuilt ERR" at the end.
func crashChild(t *testing.T, dir, mode string) {
	ctx := context.Background()
	s := kv.NewStore(dir)
	s.Index = words(1)
	if mode == "reindex" {
		s.Index = words(2)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	if mode == "reindex" {
		go func() {
			err := s.Reindex(ctx, func(done, total uint64) { fmt.Println("progress", done, total) })
			fmt.Println("rebuilt", err)
		}()
	}
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	text := func() string {
		var b strings.Builder
		for range 5 + rng.IntN(60) {
			w := crashVocabulary[min(rng.IntN(len(crashVocabulary)), rng.IntN(len(crashVocabulary)))]
			if rng.IntN(9) == 0 {
				w = fmt.Sprintf("w%d", rng.IntN(5000))
			}
			b.WriteString(w + " ")
		}
		return b.String()
	}
	roles := []string{"user", "assistant", "tool", "system"}
	prefix := fmt.Sprintf("p%d-", os.Getpid())
	for i := 0; ; i++ {
		id := prefix + fmt.Sprint(i%7)
		switch {
		case i < 7:
			if err := s.PutSession(ctx, newSession("main", id)); err != nil {
				t.Fatal(err)
			}
		case i%23 == 0:
			// Delete a session and start it again.
			if _, err := s.DeleteSession(ctx, "main", id); err != nil {
				t.Fatal(err)
			}
			fmt.Println("del", id)
			if err := s.PutSession(ctx, newSession("main", id)); err != nil {
				t.Fatal(err)
			}
		case i%3 == 0:
			// A streamed record grows: the turn is replaced in place.
			turns := []kv.Turn{{SourceID: fmt.Sprint("src", rng.IntN(i)), Role: "assistant", Text: text()}}
			if _, _, err := s.UpsertTurns(ctx, "main", id, turns); err != nil {
				t.Fatal(err)
			}
		default:
			turns := make([]kv.Turn, 1+rng.IntN(6))
			for j := range turns {
				turns[j] = kv.Turn{SourceID: fmt.Sprint("src", i*8+j), Role: roles[rng.IntN(len(roles))], Text: text()}
				if j == 0 {
					turns[j].Tool = "Bash"
				}
			}
			if _, err := s.AppendTurns(ctx, "main", id, turns, kv.TranscriptPos{}); err != nil {
				t.Fatal(err)
			}
		}
		sess, err := s.GetSession(ctx, "main", id)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("ack", id, sess.TurnCount)
	}
}

// TestIndex_SIGKILL kills a process with SIGKILL while it ingests turns (appends, in-place
// replacements, deletions), again and again into the same store, and after each kill reopens
// the store: every acknowledged write is there, and index and turns agree. The last rounds kill
// it while it also rebuilds the index under a new version; the rebuild then starts over.
func TestIndex_SIGKILL(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(t, dir, os.Getenv(crashModeEnv))
		return
	}
	dir := t.TempDir()
	acked := map[string]uint64{} // session → the turn count a write acknowledged
	for round, mode := range []string{"ingest", "ingest", "ingest", "reindex", "reindex"} {
		version := 1
		if mode == "reindex" {
			version = 2
			if round == 3 {
				// Enough turns, indexed under version 1, that the child's rebuild takes many
				// chunks.
				s := openIndexed(t, dir, 1)
				for i := range 10 {
					id := fmt.Sprint("bulk", i)
					mustSession(t, s, "main", id)
					turns := make([]kv.Turn, 600)
					for j := range turns {
						turns[j] = kv.Turn{Role: "user", Text: fmt.Sprintf("bulk turn %d of %s", j, id)}
					}
					if _, err := s.AppendTurns(t.Context(), "main", id, turns, kv.TranscriptPos{}); err != nil {
						t.Fatal(err)
					}
				}
				s.Close()
			}
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestIndex_SIGKILL$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashModeEnv+"="+mode)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Killed after some writes; in a rebuild, as soon as it is under way. What it printed
		// before the kill was acknowledged, read before it or after.
		lines := bufio.NewScanner(out)
		target := 30 + 40*round
		if mode == "reindex" {
			target = 5
		}
		n, rebuilding, rebuilt := 0, false, false
		read := func() {
			f := strings.Fields(lines.Text())
			switch {
			case len(f) == 3 && f[0] == "ack":
				c, _ := strconv.ParseUint(f[2], 10, 64)
				acked[f[1]] = c
				n++
			case len(f) == 2 && f[0] == "del":
				delete(acked, f[1])
			case len(f) == 3 && f[0] == "progress":
				rebuilding = true
			case len(f) > 0 && f[0] == "rebuilt":
				rebuilt = true
			}
		}
		for (n < target || mode == "reindex" && !rebuilding) && !rebuilt && lines.Scan() {
			read()
		}
		if n < target || mode == "reindex" && !rebuilding || rebuilt {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: the child stopped after %d writes, rebuilt %v: %v\n%s", round, n, rebuilt, lines.Err(), stderr.String())
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() {
			read()
		}
		if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("round %d: the child ended with %v, want killed\n%s", round, err, stderr.String())
		}

		s := openIndexed(t, dir, version)
		for id, c := range acked {
			sess, err := s.GetSession(t.Context(), "main", id)
			if err != nil || sess.TurnCount < c {
				t.Errorf("round %d: session %s: %d turns, %v; %d were acknowledged", round, id, sess.TurnCount, err, c)
			}
		}
		if st := s.IndexStatus(); st.Building != (mode == "reindex" && !rebuilt) {
			t.Errorf("round %d: index status %+v after a kill during %s", round, st, mode)
		}
		if mode == "reindex" {
			if err := s.Reindex(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
		}
		turns := indexAgrees(t, s, "main", words(version))
		t.Logf("round %d (%s): killed after %d writes; checked %d stored turns against the index", round, mode, n, turns)
		s.Close()
	}
}

// SessionPostings reads a term's postings in the sessions named only: in session order whatever
// order they are named in, each once, a prefix of another session's id not taken for it, and a
// term that only starts like the one asked for left out.
func TestIndex_SessionPostings(t *testing.T) {
	ctx := t.Context()
	s := openIndexed(t, t.TempDir(), 1)
	for _, id := range []string{"a", "ab", "b", "c"} {
		mustSession(t, s, "main", id)
		if _, err := s.AppendTurns(ctx, "main", id, []kv.Turn{
			{Role: "user", Text: "ledger in " + id},
			{Role: "assistant", Text: "ledgers ledger"},
		}, kv.TranscriptPos{}); err != nil {
			t.Fatal(err)
		}
	}
	x, err := s.IndexReader(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	read := func(ids ...string) []string {
		var out []string
		err := x.SessionPostings(ctx, "ledger", ids, func(p kv.Posting) error {
			out = append(out, fmt.Sprintf("%s/%d:%d", p.Session, p.Seq, p.TF))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got, want := read("c", "a", "c", "unknown"), []string{"a/0:1", "a/1:1", "c/0:1", "c/1:1"}; !slices.Equal(got, want) {
		t.Errorf("sessions c, a, c, unknown: %v, want %v", got, want)
	}
	if got := read(); len(got) != 0 {
		t.Errorf("no sessions: %v", got)
	}
	if got, want := read("ab"), []string{"ab/0:1", "ab/1:1"}; !slices.Equal(got, want) {
		t.Errorf("session ab: %v, want %v", got, want)
	}
	if err := x.SessionPostings(ctx, "ledger", []string{"bad\x00id"}, func(kv.Posting) error { return nil }); err == nil {
		t.Error("an id with a NUL was taken")
	}
}
