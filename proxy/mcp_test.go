package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

// mcpSession connects an MCP client to s's /mcp, with header set on every request.
func mcpSession(t *testing.T, s *proxy.Server, header map[string]string) *mcp.ClientSession {
	t.Helper()
	httpc := &http.Client{Transport: headerTransport{header}}
	tr := &mcp.StreamableClientTransport{Endpoint: s.URL() + "/mcp", HTTPClient: httpc, DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type headerTransport struct{ h map[string]string }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// call calls tool with args and returns its text and whether it is a tool error; a protocol
// error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", tool, args, err)
	}
	var texts []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("%s: content %T, want text", tool, c)
		}
		texts = append(texts, tc.Text)
	}
	return strings.Join(texts, "\n"), res.IsError
}

// mustCall is call for a call that must succeed.
func mustCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	text, isErr := call(t, cs, tool, args)
	if isErr {
		t.Fatalf("%s %v: tool error %q", tool, args, text)
	}
	return text
}

func TestMCP_Tools(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	appendTurns(t, s, "r:a",
		kv.Turn{Role: "assistant", Text: "The leak comes from context.WithCancel in ledger/header.go, never cancelled."},
		kv.Turn{Role: "tool", Tool: "Bash", Text: "export GITHUB_TOKEN=" + fakeToken + " && go test ./ledger " + strings.Repeat("ok ", 1500)},
	)
	appendTurns(t, s, "o", kv.Turn{Role: "user", Text: "parse_ledger_header is slow"})
	cs := mcpSession(t, s, nil)

	t.Run("List", func(t *testing.T) {
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		required := map[string][]string{}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			if tool.Description == "" {
				t.Errorf("%s has no description", tool.Name)
			}
			raw, _ := json.Marshal(tool.InputSchema)
			var schema struct{ Required []string }
			json.Unmarshal(raw, &schema)
			required[tool.Name] = schema.Required
		}
		slices.Sort(names)
		want := []string{"session_digest", "session_lineage", "session_search", "session_transcript", "subagent_runs"}
		if !slices.Equal(names, want) {
			t.Fatalf("tools %v, want %v", names, want)
		}
		for tool, req := range map[string][]string{
			"session_search": {"query"}, "session_transcript": {"session"}, "session_lineage": {"session"},
			"session_digest": {"session"}, "subagent_runs": nil,
		} {
			if !slices.Equal(required[tool], req) {
				t.Errorf("%s requires %v, want %v", tool, required[tool], req)
			}
		}
	})
	t.Run("OwnRepliesUnindexed", func(t *testing.T) {
		// A reply of heirloom's tools, as a harness's transcript keeps it, is stored and readable
		// but never a hit: an agent's searches do not find their own results.
		appendTurns(t, s, "o", kv.Turn{Role: "tool", Text: "[heirloom session_search] 1 turn matches \"OWNMARK\"", Unindexed: true})
		if text := mustCall(t, cs, "session_search", map[string]any{"query": "OWNMARK"}); !strings.HasPrefix(text, "[heirloom session_search] No turns match") {
			t.Errorf("search for a word only heirloom's own reply holds: %q", text)
		}
		if text := mustCall(t, cs, "session_transcript", map[string]any{"session": "o"}); !strings.Contains(text, "OWNMARK") {
			t.Errorf("the reply is not in the transcript: %q", text)
		}
	})
	t.Run("Search", func(t *testing.T) {
		text := mustCall(t, cs, "session_search", map[string]any{"query": "WithCancel"})
		if !strings.HasPrefix(text, "[heirloom session_search] ") {
			t.Errorf("the reply does not start with heirloom's mark: %q", text)
		}
		for _, want := range []string{"1 turn matches", "session r:a", "turn 0", "assistant", "WithCancel**", "session_transcript"} {
			if !strings.Contains(text, want) {
				t.Errorf("reply lacks %q:\n%s", want, text)
			}
		}
		// The family filter: r's family holds r:a, not o.
		text = mustCall(t, cs, "session_search", map[string]any{"query": "ledger", "session": "r"})
		if !strings.Contains(text, "session r:a") || strings.Contains(text, "session o ") {
			t.Errorf("family search:\n%s", text)
		}
		// Secrets never leave.
		text = mustCall(t, cs, "session_search", map[string]any{"query": "GITHUB_TOKEN"})
		if strings.Contains(text, fakeToken) || !strings.Contains(text, inject.Redacted) {
			t.Errorf("search leaks the token:\n%s", text)
		}
		text = mustCall(t, cs, "session_search", map[string]any{"query": "nothinglikeit"})
		if !strings.Contains(text, "No turns match") {
			t.Errorf("no hits: %q", text)
		}
		// Pages: a cursor comes back and takes the next page.
		text = mustCall(t, cs, "session_search", map[string]any{"query": "ledger", "limit": 1})
		_, cursor, ok := strings.Cut(text, `"cursor": "`)
		if !ok {
			t.Fatalf("no cursor in a first page of one:\n%s", text)
		}
		cursor, _, _ = strings.Cut(cursor, `"`)
		next := mustCall(t, cs, "session_search", map[string]any{"query": "ledger", "limit": 1, "cursor": cursor})
		if next == text || !strings.Contains(next, "[1] session") {
			t.Errorf("second page %q", next)
		}
		raw := mustCall(t, cs, "session_search", map[string]any{"query": "WithCancel", "format": "json"})
		var reply proxy.SearchReply
		if err := json.Unmarshal([]byte(raw), &reply); err != nil || len(reply.Hits) != 1 || reply.Hits[0].Session != "r:a" {
			t.Errorf("json format: %v %q", err, raw)
		}
	})
	t.Run("Transcript", func(t *testing.T) {
		text := mustCall(t, cs, "session_transcript", map[string]any{"session": "r", "from": 1, "limit": 2})
		for _, want := range []string{"turns 1 to 2", "[1] user: turn 1", "[2] user: turn 2", `"from": 3`} {
			if !strings.Contains(text, want) {
				t.Errorf("reply lacks %q:\n%s", want, text)
			}
		}
		text = mustCall(t, cs, "session_transcript", map[string]any{"session": "r:a", "turn_chars": 200})
		if strings.Contains(text, fakeToken) || !strings.Contains(text, inject.Redacted) || !strings.Contains(text, "[cut: ") || !strings.Contains(text, "last turn recorded") {
			t.Errorf("cut, redacted last page:\n%s", text)
		}
	})
	t.Run("Bounds", func(t *testing.T) {
		// A hit at turn 0 says to read from 0, never from a negative turn.
		text := mustCall(t, cs, "session_search", map[string]any{"query": "WithCancel"})
		if !strings.Contains(text, `session_transcript {"session": "r:a", "from": 0}`) {
			t.Errorf("the hit does not say where to read around it:\n%s", text)
		}
		// A page of long turns ends early, within the reply's bound, and says where to go on.
		var long []kv.Turn
		for i := range 60 {
			long = append(long, kv.Turn{Role: "assistant", Text: fmt.Sprintf("turn %d ", i) + strings.Repeat("word ", 1000)})
		}
		appendTurns(t, s, "o", long...)
		text = mustCall(t, cs, "session_transcript", map[string]any{"session": "o", "limit": 100, "turn_chars": 5000})
		if n := len(text); n > 41000 || !strings.Contains(text, `More turns: session_transcript with "from": `) {
			t.Errorf("a page of 60 long turns: %d bytes, tail %q", n, text[max(0, len(text)-120):])
		}
		if text, isErr := call(t, cs, "session_transcript", map[string]any{"session": "o", "limit": 100, "format": "json"}); !isErr || !strings.Contains(text, "ask for fewer") {
			t.Errorf("an oversized JSON page: error %v %q", isErr, text[:min(len(text), 200)])
		}
		// Pages of a search with a relative time range: the cursor keeps the first page's range.
		first := mustCall(t, cs, "session_search", map[string]any{"query": "ledger", "since": "8760h", "limit": 1})
		_, cursor, ok := strings.Cut(first, `"cursor": "`)
		if !ok {
			t.Fatalf("no cursor on a first page of one, since a year ago:\n%s", first)
		}
		cursor, _, _ = strings.Cut(cursor, `"`)
		if text := mustCall(t, cs, "session_search", map[string]any{"query": "ledger", "since": "8760h", "limit": 1, "cursor": cursor}); !strings.Contains(text, "[1] session") {
			t.Errorf("the second page, since a year ago: %q", text)
		}
		// Keys a URL path would resolve are refused, not sent elsewhere.
		for _, key := range []string{".", ".."} {
			if text, isErr := call(t, cs, "session_lineage", map[string]any{"session": key}); !isErr || !strings.Contains(text, "not a session key") {
				t.Errorf("session %q: error %v %q", key, isErr, text)
			}
		}
	})
	t.Run("Lineage", func(t *testing.T) {
		text := mustCall(t, cs, "session_lineage", map[string]any{"session": "r:a"})
		for _, want := range []string{"Session r:a", "Ancestors", "- r ", "r:a:b", "agent general-purpose"} {
			if !strings.Contains(text, want) {
				t.Errorf("reply lacks %q:\n%s", want, text)
			}
		}
	})
	t.Run("Runs", func(t *testing.T) {
		text := mustCall(t, cs, "subagent_runs", map[string]any{"session": "r"})
		for _, want := range []string{"2 sub-agent runs spawned by session r", "run toolu_a", "description: write tests",
			"[Subagent Result: Explore]\nStatus: completed\nCondensation: Level 1 (passthrough)\nfound it\n---\n", "Full result: shown whole above (also: heirloom runs show toolu_a)"} {
			if !strings.Contains(text, want) {
				t.Errorf("reply lacks %q:\n%s", want, text)
			}
		}
		text = mustCall(t, cs, "subagent_runs", map[string]any{"root": "r", "status": "running"})
		if !strings.Contains(text, "run toolu_b") || strings.Contains(text, "toolu_a") {
			t.Errorf("root and status filter:\n%s", text)
		}
	})
	t.Run("Digest", func(t *testing.T) {
		text := mustCall(t, cs, "session_digest", map[string]any{
			"session": "r", "summary": "Parser ported; tests green.", "decisions": []string{"Use ledger v2."},
			"constraints": []string{"Leave vendor/ alone."}, "next_steps": []string{"Port the writer.", "Delete v1."},
		})
		for _, want := range []string{"Checkpoint ", "Summary: Parser ported; tests green.", "- Use ledger v2.", "- Leave vendor/ alone.", "Next steps:\n- Port the writer.\n- Delete v1."} {
			if !strings.Contains(text, want) {
				t.Errorf("reply lacks %q:\n%s", want, text)
			}
		}
		c, err := s.Engine.Store.LatestCheckpoint(t.Context(), "default", "r")
		if err != nil {
			t.Fatal(err)
		}
		if c.Trigger != kv.TriggerAgent || c.Digest.Summary != "Parser ported; tests green." || !slices.Equal(c.Digest.NextSteps, []string{"Port the writer.", "Delete v1."}) {
			t.Errorf("stored checkpoint %+v", c)
		}
		sess := mustSession(t, s, "r")
		if !slices.Contains(sess.Constraints, "Leave vendor/ alone.") || !slices.Contains(sess.Decisions, "Use ledger v2.") {
			t.Errorf("session keeps constraints %v, decisions %v", sess.Constraints, sess.Decisions)
		}
	})
	t.Run("ToolErrors", func(t *testing.T) {
		for _, tt := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"session_search", map[string]any{"query": "  "}, "query is required"},
			{"session_search", map[string]any{"query": `"open`}, "not closed"},
			{"session_search", map[string]any{"query": "x", "session": "nope"}, "session nope not found"},
			{"session_search", map[string]any{"query": "x", "limit": 500}, "limit 500"},
			{"session_search", map[string]any{"query": "x", "since": "last tuesday"}, "since:"},
			{"session_search", map[string]any{"query": "x", "format": "xml"}, `format "xml"`},
			{"session_search", map[string]any{}, "query"},
			{"session_transcript", map[string]any{"session": "nope"}, "session nope not found"},
			{"session_transcript", map[string]any{"session": "r", "turn_chars": 5}, "turn_chars 5"},
			{"session_lineage", map[string]any{"session": "nope"}, "not found"},
			{"session_digest", map[string]any{"session": "nope", "summary": "x"}, "not found"},
			{"subagent_runs", map[string]any{}, "session or root is required"},
			{"session_digest", map[string]any{"session": "r", "summary": strings.Repeat("x", 5000)}, "summary: 5000 characters, at most 4000"},
			{"session_digest", map[string]any{"session": "r", "decisions": []string{"ok", strings.Repeat("y", 1001)}}, "decisions[1]: 1001 characters"},
		} {
			text, isErr := call(t, cs, tt.tool, tt.args)
			if !isErr || !strings.Contains(text, tt.want) {
				t.Errorf("%s %v: error %v %q, want a tool error with %q", tt.tool, tt.args, isErr, text, tt.want)
			}
		}
	})
}

// TestMCP_Stateless: /mcp keeps no session: a tools/call posted on its own, with no initialize,
// is answered, so a client keeps working across a sidecar restart.
func TestMCP_Stateless(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"subagent_runs","arguments":{"session":"r"}}}`
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), "run toolu_a") || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("%d %v %s", resp.StatusCode, resp.Header, raw)
	}
}

// TestMCP_Token: with a token, /mcp needs it like the API; OAuth discovery paths answer 404
// without it, so a client goes on with its configured header.
func TestMCP_Token(t *testing.T) {
	s := mustOpenSeeded(t, func(s *proxy.Server) { s.Token = "sekrit" })
	status, _, _ := do(t, http.MethodPost, s.URL()+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	if status != http.StatusUnauthorized {
		t.Errorf("/mcp without the token: %d, want 401", status)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		if status, _, _ := do(t, http.MethodGet, s.URL()+path, "", nil); status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, status)
		}
	}
	cs := mcpSession(t, s, map[string]string{"Authorization": "Bearer sekrit"})
	if text := mustCall(t, cs, "subagent_runs", map[string]any{"session": "r"}); !strings.Contains(text, "toolu_a") {
		t.Errorf("with the token: %q", text)
	}
}

// TestMCP_Stdio: `heirloom mcp`'s server answers through the sidecar's HTTP API, and lists its
// tools and answers each call with a tool error naming the fix when the sidecar is down.
func TestMCP_Stdio(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	appendTurns(t, s, "o", kv.Turn{Role: "user", Text: "parse_ledger_header is slow"})
	cs := stdioSession(t, &proxy.Client{URL: s.URL()})
	if text := mustCall(t, cs, "session_search", map[string]any{"query": "ParseLedgerHeader"}); !strings.Contains(text, "session o") {
		t.Errorf("stdio search: %q", text)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	cs = stdioSession(t, &proxy.Client{URL: down, Timeout: 2 * time.Second})
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(res.Tools) != 5 {
		t.Fatalf("tools with the sidecar down: %v %v", res, err)
	}
	text, isErr := call(t, cs, "session_search", map[string]any{"query": "x"})
	if !isErr || !strings.Contains(text, "heirloom serve") {
		t.Errorf("sidecar down: error %v %q, want a tool error saying to start it", isErr, text)
	}
}

// stdioSession runs ServeMCPStdio over pipes and connects a client to it.
func stdioSession(t *testing.T, c *proxy.Client) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- proxy.ServeMCPStdio(ctx, c, "test", inR, outW) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ServeMCPStdio: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("ServeMCPStdio did not return after its input closed")
		}
		outR.Close()
	})
	return cs
}
