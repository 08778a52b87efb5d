package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/heirloom-dev/heirloom/proxy"
)

// TestRunsShow_ShortIDCheap: `heirloom runs show` with an id the API does not know asks for
// the runs whose id starts with it, a few at most, never a thousand runs with their results.
func TestRunsShow_ShortIDCheap(t *testing.T) {
	const full = "toolu_01LONGLONGLONGLONGLONG"
	var mu sync.Mutex
	var lists []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/api/runs":
			mu.Lock()
			lists = append(lists, r.URL.RawQuery)
			mu.Unlock()
			var runs []proxy.APIRun
			if p := r.URL.Query().Get("prefix"); p != "" && strings.HasPrefix(full, p) {
				runs = append(runs, proxy.APIRun{ID: full})
			}
			json.NewEncoder(w).Encode(proxy.RunsReply{Runs: runs})
		case r.URL.Path == "/api/runs/"+full:
			json.NewEncoder(w).Encode(proxy.RunReply{Run: proxy.APIRun{ID: full}, Cast: "[Subagent Result: it]"})
		default:
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"error": "no run", "code": proxy.ECodeNotFound})
		}
	}))
	t.Cleanup(api.Close)
	var stdout, stderr bytes.Buffer
	c := &RunsCommand{Env: []string{"HEIRLOOM_URL=" + api.URL}, Stdout: &stdout, Stderr: &stderr}
	if err := c.Run(t.Context(), []string{"show", "toolu_01LONGLO"}); err != nil {
		t.Fatalf("runs show: %v (%s)", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "[Subagent Result: it]") {
		t.Errorf("printed %q", stdout.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lists) != 1 || lists[0] != "limit=100&prefix=toolu_01LONGLO" {
		t.Errorf("list requests: %q; want one asking for the runs whose id starts with the short id", lists)
	}
}

func TestSearchPrefix(t *testing.T) {
	for _, tt := range []struct{ short, want string }{
		{"toolu_01ABCDEF", "toolu_01ABCDEF"},                    // one part: a prefix as it is
		{"agent:main:subagent:0f3c9a1b", "agent:main:subagent"}, // "subagent" may be a cut part, as far as it can tell
		{"agent:research:subagent:0f3c9a1b", "agent:research"},  // a middle part may be cut
		{"call_1", "call_1"},
	} {
		if got := searchPrefix(tt.short); got != tt.want {
			t.Errorf("searchPrefix(%q): got %q, want %q", tt.short, got, tt.want)
		}
		if !strings.HasPrefix(tt.short, tt.want) {
			t.Errorf("%q is not a prefix of %q", tt.want, tt.short)
		}
	}
	long := "agent:research-and-planning:subagent:0f3c9a1b-2222-3333-4444-555566667777"
	if short := shortID(long); !strings.HasPrefix(long, searchPrefix(short)) {
		t.Errorf("shortID(%q) = %q, whose searchPrefix %q is no prefix of the id", long, short, searchPrefix(short))
	}
}
