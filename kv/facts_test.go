package kv_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/kv"
)

// rules is a FactFinder for the store's tests: a turn's lines that start with "RULE " are
// constraints; a turn stored again replaces what it stated.
type rules struct{}

func (rules) Detect(t *kv.Turn) []kv.Fact {
	var out []kv.Fact
	for _, line := range strings.Split(t.Text, "\n") {
		if rest, ok := strings.CutPrefix(line, "RULE "); ok {
			out = append(out, kv.Fact{Kind: kv.FactConstraint, Text: rest, Role: t.Role})
		}
	}
	return out
}

func (rules) Note(ledger []kv.Fact, t *kv.Turn, found []kv.Fact) []kv.Fact {
	out := slices.DeleteFunc(slices.Clone(ledger), func(f kv.Fact) bool { return f.Seq == t.Seq })
	for _, f := range found {
		f.Seq = t.Seq
		out = append(out, f)
	}
	return out
}

// The facts ledger is a record of its own, written in the batch that stores the turns, read
// only when a turn states something or is stored again, and removed with its session.
func TestFacts_Ledger(t *testing.T) {
	ctx := t.Context()
	s := kv.NewStore(t.TempDir())
	s.Ledger = rules{}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	mustSession(t, s, "main", "a")
	ledger := func() []string {
		facts, err := s.Facts(ctx, "main", "a")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range facts {
			out = append(out, fmt.Sprintf("%d %s", f.Seq, f.Text))
		}
		return out
	}

	before := s.Stats()
	if _, err := s.AppendTurns(ctx, "main", "a", []kv.Turn{
		{SourceID: "m0", Role: "user", Text: "nothing to see"},
		{SourceID: "m1", Role: "assistant", Text: "nor here"},
	}, kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	quiet := s.Stats().Sub(before)
	if got := ledger(); got != nil {
		t.Errorf("a turn stating nothing made a ledger: %q", got)
	}
	before = s.Stats()
	if _, err := s.AppendTurns(ctx, "main", "a", []kv.Turn{
		{SourceID: "m2", Role: "user", Text: "RULE no vendor edits"},
		{SourceID: "m3", Role: "user", Text: "RULE tabs\nRULE no panics"},
	}, kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	if stating := s.Stats().Sub(before); stating.Gets != quiet.Gets+1 {
		t.Errorf("Gets: %d for two turns stating nothing, %d for two stating facts; want one more (the ledger, read once)", quiet.Gets, stating.Gets)
	}
	if got, want := ledger(), []string{"2 no vendor edits", "3 tabs", "3 no panics"}; !slices.Equal(got, want) {
		t.Errorf("ledger %q, want %q", got, want)
	}
	// A record stored again in place takes back what it stated.
	if _, _, err := s.UpsertTurns(ctx, "main", "a", []kv.Turn{{SourceID: "m3", Role: "user", Text: "RULE tabs only"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := ledger(), []string{"2 no vendor edits", "3 tabs only"}; !slices.Equal(got, want) {
		t.Errorf("after the upsert: ledger %q, want %q", got, want)
	}
	// The session record does not carry it: a session read decodes no ledger.
	if sess, err := s.GetSession(ctx, "main", "a"); err != nil || sess.TurnCount != 4 {
		t.Fatalf("session: %+v, %v", sess, err)
	}
	if _, err := s.DeleteSession(ctx, "main", "a"); err != nil {
		t.Fatal(err)
	}
	if got := ledger(); got != nil {
		t.Errorf("after DeleteSession: ledger %q", got)
	}
}
