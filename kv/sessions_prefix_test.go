package kv_test

import (
	"slices"
	"testing"
)

// TestSessionsByIDPrefix: the sessions whose id starts with a prefix, in id order, decoding only
// those.
func TestSessionsByIDPrefix(t *testing.T) {
	s := MustOpenStore(t)
	for _, id := range []string{"ses_abc1", "ses_abc2", "ses_b", "f50b1ca6-1b5a", "f50b1ca6-1b5a:agent-a1ba2876", "other"} {
		if err := s.PutSession(t.Context(), newSession("default", id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutSession(t.Context(), newSession("ops", "ses_abc3")); err != nil {
		t.Fatal(err)
	}
	ids := func(prefix string, limit int) []string {
		t.Helper()
		list, err := s.SessionsByIDPrefix(t.Context(), "default", prefix, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range list {
			out = append(out, x.ID)
		}
		return out
	}
	before := s.Stats()
	if got := ids("ses_abc", 0); !slices.Equal(got, []string{"ses_abc1", "ses_abc2"}) {
		t.Errorf("ses_abc: got %v (not the other scope's)", got)
	}
	if n := s.Stats().Sub(before).Sessions; n != 2 {
		t.Errorf("sessions decoded: %d, want the 2 that match", n)
	}
	if got := ids("f50b1ca6", 0); !slices.Equal(got, []string{"f50b1ca6-1b5a", "f50b1ca6-1b5a:agent-a1ba2876"}) {
		t.Errorf("f50b1ca6: got %v", got)
	}
	if got := ids("ses_", 1); len(got) != 1 {
		t.Errorf("limit 1: got %v", got)
	}
	if got := ids("zzz", 0); len(got) != 0 {
		t.Errorf("no match: got %v", got)
	}
	if _, err := s.SessionsByIDPrefix(t.Context(), "default", "", 0); err == nil {
		t.Error("an empty prefix: no error")
	}
}
