package proxy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// fuzzPost posts body to path on s and fails t unless the reply is JSON with one of the
// statuses allowed (a bad body is a 4xx, never a 5xx or a panic).
func fuzzPost(t *testing.T, target, contentType string, body []byte, allowed ...int) {
	t.Helper()
	resp, err := http.Post(target, contentType, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	ok := false
	for _, s := range allowed {
		ok = ok || resp.StatusCode == s
	}
	if !ok {
		t.Fatalf("status %d for %q: %s", resp.StatusCode, body, raw)
	}
	if len(raw) > 0 && !json.Valid(raw) && !strings.HasPrefix(string(raw), "event:") && !strings.HasPrefix(string(raw), "data:") {
		t.Fatalf("reply not JSON: %q", raw)
	}
}

// FuzzPluginInject: whatever a plugin posts to /api/inject, the answer is 200 or a 4xx, JSON,
// and the server does not fail.
func FuzzPluginInject(f *testing.F) {
	f.Add([]byte(`{"harness":"opencode","session":"ses_1"}`))
	f.Add([]byte(`{"harness":"openclaw","session":"agent:main:subagent:x","parent":"agent:main:main","purpose":"compacting"}`))
	f.Add([]byte(`{"harness":"opencode","session":"\u0000"}`))
	f.Add([]byte("\xff{"))
	s := MustOpenServer(f, nil)
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzPost(t, s.URL()+"/api/inject", "application/json", body, 200, 400, 404, 413)
	})
}

// FuzzPluginSpawnCheck: the same for a plugin's spawn check.
func FuzzPluginSpawnCheck(f *testing.F) {
	f.Add("opencode", "ses_1", []byte(`{"tool":"task","call_id":"c1","args":{"description":"d","prompt":"p","subagent_type":"general"}}`))
	f.Add("openclaw", "agent:main:main", []byte(`{"tool":"sessions_spawn","call_id":"c2","args":{}}`))
	f.Add("claude-code", "", []byte(`[]`))
	s := MustOpenServer(f, nil)
	f.Fuzz(func(t *testing.T, harness, session string, body []byte) {
		u := s.URL() + "/api/spawn-check?harness=" + url.QueryEscape(harness) + "&session=" + url.QueryEscape(session)
		fuzzPost(t, u, "application/json", body, 200, 400, 404, 413)
	})
}

// FuzzMCP: whatever JSON-RPC a client posts to /mcp, the answer is a 2xx or a 4xx and the
// server does not fail.
func FuzzMCP(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session_search","arguments":{"query":"x"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"session_transcript","arguments":{"session":"\u0000","from":-1}}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0"}]`))
	s := MustOpenServer(f, nil)
	f.Fuzz(func(t *testing.T, body []byte) {
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/mcp", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("status %d for %q", resp.StatusCode, body)
		}
	})
}
