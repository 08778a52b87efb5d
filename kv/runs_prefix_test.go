package kv

import (
	"slices"
	"testing"
)

// TestRunsByIDPrefix: the runs whose id starts with a prefix, in id order, reading only those.
func TestRunsByIDPrefix(t *testing.T) {
	s := openAt(t, t.TempDir())
	for _, id := range []string{"toolu_01AAAA1", "toolu_01AAAA2", "toolu_01BBBB", "call_1", "agent:main:subagent:0f3c"} {
		putTestRun(t, s, Run{ID: id, ParentID: "root", Status: RunPending, CreatedAt: lifecycleEpoch})
	}
	ids := func(prefix string, limit int) []string {
		t.Helper()
		runs, err := s.RunsByIDPrefix(t.Context(), "default", prefix, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	before := s.Stats()
	if got := ids("toolu_01AAAA", 0); !slices.Equal(got, []string{"toolu_01AAAA1", "toolu_01AAAA2"}) {
		t.Errorf("toolu_01AAAA: got %v", got)
	}
	if n := s.Stats().Sub(before).Runs; n != 2 {
		t.Errorf("runs decoded: %d, want the 2 that match", n)
	}
	if got := ids("toolu_", 2); len(got) != 2 {
		t.Errorf("limit 2: got %v", got)
	}
	if got := ids("agent:main:subagent:0f3c", 0); !slices.Equal(got, []string{"agent:main:subagent:0f3c"}) {
		t.Errorf("a whole id: got %v", got)
	}
	if got := ids("nothing", 0); len(got) != 0 {
		t.Errorf("no match: got %v", got)
	}
	if _, err := s.RunsByIDPrefix(t.Context(), "default", "", 0); err == nil {
		t.Error("an empty prefix: no error")
	}
}
