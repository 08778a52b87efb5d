package proxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

// fakeToken is a GitHub token shape that Redact must hide.
var fakeToken = "ghp" + "_" + strings.Repeat("a1B2", 9)

// send sends method path with body and decodes a 200 reply into v; it returns the status and,
// for an error reply, "code: message".
func send(t *testing.T, s *proxy.Server, method, path string, body any, v any) (int, string) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error, Code string }
		if err := json.Unmarshal(raw, &e); err != nil || e.Code == "" {
			t.Fatalf("%s %s: error reply %q is not {error, code}", method, path, raw)
		}
		return resp.StatusCode, e.Code + ": " + e.Error
	}
	if v != nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, ""
}

// searchFor runs one search and fails the test on an error reply.
func searchFor(t *testing.T, s *proxy.Server, req proxy.SearchRequest) proxy.SearchReply {
	t.Helper()
	var reply proxy.SearchReply
	if status, msg := send(t, s, http.MethodPost, "/api/sessions/search", req, &reply); status != http.StatusOK {
		t.Fatalf("search %+v: %d %s", req, status, msg)
	}
	return reply
}

func hitKeys(hits []proxy.SearchHit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s/%d", h.Session, h.Turn))
	}
	return out
}

func appendTurns(t *testing.T, s *proxy.Server, id string, turns ...kv.Turn) {
	t.Helper()
	if _, err := s.Engine.Store.AppendTurns(t.Context(), "default", id, turns, kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
}

func TestAPI_Search(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	appendTurns(t, s, "r:a",
		kv.Turn{Role: "assistant", Text: "The leak comes from context.WithCancel in ledger/header.go, never cancelled."},
		kv.Turn{Role: "tool", Tool: "Bash", Text: "export GITHUB_TOKEN=" + fakeToken + " && go test ./ledger"},
	)
	appendTurns(t, s, "o", kv.Turn{Role: "user", Text: "parse_ledger_header is slow"})

	t.Run("Hit", func(t *testing.T) {
		reply := searchFor(t, s, proxy.SearchRequest{Query: "WithCancel"})
		if len(reply.Hits) != 1 || reply.Cursor != "" {
			t.Fatalf("hits %v, cursor %q; want one, and no next page", hitKeys(reply.Hits), reply.Cursor)
		}
		h := reply.Hits[0]
		if h.Session != "r:a" || h.Turn != 0 || h.Role != "assistant" || h.Harness != "claude-code" || h.Project != "/src/app" || h.Title != "look around" || h.Score <= 0 {
			t.Errorf("hit %+v", h)
		}
		if !strings.Contains(h.Snippet, "**") || !strings.Contains(h.Snippet, "leak") {
			t.Errorf("snippet %q: want the matched word marked and its neighbours", h.Snippet)
		}
	})
	t.Run("CodeTerms", func(t *testing.T) {
		for q, want := range map[string][]string{
			"ledger":            {"o/0", "r:a/0", "r:a/1"},
			"header.go":         {"r:a/0"},
			"ParseLedgerHeader": {"o/0"},
			"cancel":            {"r:a/0"},
			"ledger -header":    {"r:a/1"},
			`"never cancelled"`: {"r:a/0"},
			"cancel*":           {"r:a/0"},
			"slow OR bash":      {"o/0", "r:a/1"},
		} {
			got := hitKeys(searchFor(t, s, proxy.SearchRequest{Query: q}).Hits)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: hits %v, want %v", q, got, want)
			}
		}
	})
	t.Run("Filters", func(t *testing.T) {
		for _, tt := range []struct {
			req  proxy.SearchRequest
			want []string
		}{
			{proxy.SearchRequest{Query: "ledger", Session: "r"}, []string{"r:a/0", "r:a/1"}}, // r's family holds r:a
			{proxy.SearchRequest{Query: "ledger", Session: "r:a:b"}, []string{}},
			{proxy.SearchRequest{Query: "ledger", Harness: "opencode"}, []string{"o/0"}},
			{proxy.SearchRequest{Query: "ledger", Project: "/real/app"}, []string{"r:a/0", "r:a/1"}},
			{proxy.SearchRequest{Query: "ledger", Role: "tool"}, []string{"r:a/1"}},
			{proxy.SearchRequest{Query: "ledger", Scope: "other"}, []string{}},
		} {
			got := hitKeys(searchFor(t, s, tt.req).Hits)
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("%+v: hits %v, want %v", tt.req, got, tt.want)
			}
		}
	})
	t.Run("ToolName", func(t *testing.T) {
		// A turn found by its tool's name shows that name marked in its snippet.
		reply := searchFor(t, s, proxy.SearchRequest{Query: "bash"})
		if len(reply.Hits) != 1 || !strings.Contains(reply.Hits[0].Snippet, "**Bash**") {
			t.Errorf("hits %+v: want r:a/1 with **Bash** in its snippet", reply.Hits)
		}
	})
	t.Run("Redacted", func(t *testing.T) {
		reply := searchFor(t, s, proxy.SearchRequest{Query: "GITHUB_TOKEN"})
		if len(reply.Hits) != 1 {
			t.Fatalf("hits %v", hitKeys(reply.Hits))
		}
		if sn := reply.Hits[0].Snippet; strings.Contains(sn, fakeToken) || strings.Contains(sn, "a1B2a1B2") || !strings.Contains(sn, inject.Redacted) {
			t.Errorf("snippet %q leaks the token", sn)
		}
		var tr proxy.TranscriptReply
		if status, msg := get(t, s, "/api/sessions/r:a/transcript", nil, &tr); status != http.StatusOK {
			t.Fatalf("transcript: %d %s", status, msg)
		}
		if txt := tr.Turns[1].Text; strings.Contains(txt, fakeToken) || !strings.Contains(txt, inject.Redacted) {
			t.Errorf("the transcript API leaks the token: %q", txt)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		for _, tt := range []struct {
			method, path string
			body         any
			status       int
			code         string
		}{
			{http.MethodPost, "/api/sessions/search", proxy.SearchRequest{}, 400, "invalid: query required"},
			{http.MethodPost, "/api/sessions/search", proxy.SearchRequest{Query: `"unterminated`}, 400, "invalid"},
			{http.MethodPost, "/api/sessions/search", proxy.SearchRequest{Query: "x", Role: "robot"}, 400, "invalid"},
			{http.MethodPost, "/api/sessions/search", proxy.SearchRequest{Query: "x", Limit: 1000}, 400, "invalid"},
			{http.MethodPost, "/api/sessions/search", proxy.SearchRequest{Query: "x", Cursor: "bogus"}, 400, "invalid"},
			{http.MethodPost, "/api/sessions/search", proxy.SearchRequest{Query: "x", Session: "nope"}, 404, "not_found: session nope not found"},
			{http.MethodPost, "/api/sessions/search", `{"query": "x", "sesion": "r"}`, 400, "bad_json"},
			{http.MethodPost, "/api/sessions/search", `{`, 400, "bad_json"},
			{http.MethodGet, "/api/sessions/search", nil, 405, "method_not_allowed"},
			{http.MethodPut, "/api/sessions/r", nil, 405, "method_not_allowed"},
		} {
			status, msg := send(t, s, tt.method, tt.path, tt.body, nil)
			if status != tt.status || !strings.HasPrefix(msg, tt.code) {
				t.Errorf("%s %s %v: %d %q, want %d %q…", tt.method, tt.path, tt.body, status, msg, tt.status, tt.code)
			}
		}
	})
}

// TestAPI_SearchPages: pages taken while turns keep arriving hold exactly the hits the first
// page saw, in the same order, each once.
func TestAPI_SearchPages(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	for i := range 9 {
		appendTurns(t, s, "r", kv.Turn{Role: "assistant", Text: strings.Repeat("deploy ", i+1) + fmt.Sprint("step ", i)})
	}
	want := hitKeys(searchFor(t, s, proxy.SearchRequest{Query: "deploy", Limit: 100}).Hits)
	if len(want) != 9 {
		t.Fatalf("all hits: %v", want)
	}
	var got []string
	req := proxy.SearchRequest{Query: "deploy", Limit: 2}
	for page := 0; ; page++ {
		reply := searchFor(t, s, req)
		got = append(got, hitKeys(reply.Hits)...)
		if reply.Cursor == "" {
			break
		}
		// A better match arrives between pages: it must not shift what follows.
		appendTurns(t, s, "r", kv.Turn{Role: "user", Text: strings.Repeat("deploy ", 20)})
		req.Cursor = reply.Cursor
		if page > 10 {
			t.Fatal("pages do not end")
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages: %v\nwant %v", got, want)
	}
	// Another query's cursor is refused.
	status, msg := send(t, s, http.MethodPost, "/api/sessions/search", proxy.SearchRequest{Query: "step", Cursor: req.Cursor}, nil)
	if status != http.StatusBadRequest {
		t.Errorf("a cursor of another query: %d %s, want 400", status, msg)
	}
}

func TestAPI_DeleteSession(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	appendTurns(t, s, "o", kv.Turn{Role: "user", Text: "my password is hunter2 " + fakeToken})
	if _, err := s.Engine.Checkpoint(t.Context(), "default", "o", kv.TriggerAgent, engine.Statements{}); err != nil {
		t.Fatal(err)
	}
	if hits := searchFor(t, s, proxy.SearchRequest{Query: "hunter2"}).Hits; len(hits) != 1 {
		t.Fatalf("before delete: %v", hitKeys(hits))
	}
	var d proxy.DeleteReply
	if status, msg := send(t, s, http.MethodDelete, "/api/sessions/o", nil, &d); status != http.StatusOK {
		t.Fatalf("delete: %d %s", status, msg)
	}
	if d.Session != "o" || d.Turns != 1 || d.Checkpoints != 1 {
		t.Errorf("delete reply %+v", d)
	}
	if hits := searchFor(t, s, proxy.SearchRequest{Query: "hunter2"}).Hits; len(hits) != 0 {
		t.Errorf("after delete, still found: %v", hitKeys(hits))
	}
	if status, _ := get(t, s, "/api/sessions/o", nil, nil); status != http.StatusNotFound {
		t.Errorf("GET the deleted session: %d", status)
	}
	if status, msg := send(t, s, http.MethodDelete, "/api/sessions/o", nil, nil); status != http.StatusNotFound {
		t.Errorf("delete again: %d %s", status, msg)
	}
	if hits := searchFor(t, s, proxy.SearchRequest{Query: "turn"}).Hits; len(hits) != 5 {
		t.Errorf("other sessions' turns after the delete: %v", hitKeys(hits))
	}
}

func TestAPI_Index(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	var st proxy.IndexReply
	if status, msg := get(t, s, "/api/index", nil, &st); status != http.StatusOK || !st.Enabled || st.Building || st.Version == 0 {
		t.Fatalf("GET /api/index: %d %s %+v", status, msg, st)
	}
	if status, msg := send(t, s, http.MethodPost, "/api/index/rebuild", nil, &st); status != http.StatusOK || !st.Started {
		t.Fatalf("rebuild: %d %s %+v", status, msg, st)
	}
	for i := 0; st.Running || st.Building; i++ {
		if i > 2000 {
			t.Fatalf("the rebuild does not end: %+v", st)
		}
		get(t, s, "/api/index", nil, &st)
	}
	if st.Done != 5 {
		t.Errorf("rebuilt %d turns, want the 5 stored", st.Done)
	}
	if hits := searchFor(t, s, proxy.SearchRequest{Query: "turn"}).Hits; len(hits) != 5 {
		t.Errorf("after the rebuild: %v", hitKeys(hits))
	}
}
