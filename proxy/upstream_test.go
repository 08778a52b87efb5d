package proxy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/hashicorp/go-hclog"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/proxy"
)

// ctxReply is Claude Code's reply carrying context for event, as its adapter encodes it.
func ctxReply(event, context string) string {
	return string(claudecode.Adapter{}.Reply(adapters.Event{Name: event}, adapters.Answer{Context: context}))
}

// jsonStr encodes s as a JSON string (the tests' texts hold nothing json.Marshal escapes).
func jsonStr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// additionalContext returns the reply's additionalContext; a reply that is not JSON fails.
func additionalContext(t *testing.T, reply []byte) string {
	t.Helper()
	if !json.Valid(reply) {
		t.Fatalf("reply is not JSON: %q", reply)
	}
	return claudecode.ReplyAnswer(reply).Context
}

// upstreamRequest is what an upstream hook target received.
type upstreamRequest struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// upstreamServer is a real hook target on loopback that records every request.
type upstreamServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []upstreamRequest
}

// startUpstream starts an upstream answering with handle; it closes in t.Cleanup.
func startUpstream(t *testing.T, handle http.HandlerFunc) *upstreamServer {
	t.Helper()
	u := &upstreamServer{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, upstreamRequest{r.Method, r.URL.RequestURI(), r.Header.Clone(), body})
		u.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		handle(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

// requests returns what the upstream received so far.
func (u *upstreamServer) requests() []upstreamRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]upstreamRequest(nil), u.reqs...)
}

// reply answers every call with body as JSON.
func reply(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proxyFixture is a heirloom in front of an upstream, and a reference heirloom without one that
// gets the same calls: its replies are heirloom's part alone.
type proxyFixture struct {
	tr        cct.Tree
	heirloom  *proxy.Server
	reference *proxy.Server
	up        *upstreamServer
	log       *syncBuffer
}

// newProxyFixture opens both heirlooms over tree tr; configure adjusts both before Open (set
// the upstream's fields on s.ClaudeCodeUpstream; the reference's is cleared afterwards).
func newProxyFixture(t *testing.T, handle http.HandlerFunc, configure func(*proxy.Server)) *proxyFixture {
	t.Helper()
	f := &proxyFixture{tr: cct.NewTree(t, "P"), log: &syncBuffer{}}
	if handle != nil {
		f.up = startUpstream(t, handle)
	}
	open := func(withUpstream bool) *proxy.Server {
		return MustOpenServer(t, func(s *proxy.Server) {
			s.Engine.Config.TranscriptRoots = []string{f.tr.Root}
			s.Engine.Config.SpawnRecordWait = 5 * time.Millisecond
			s.HookTimeout = 10 * time.Second
			s.Upstreams = map[string]*proxy.Upstream{"claude-code": {}}
			if f.up != nil {
				s.Upstreams["claude-code"].URL = f.up.URL + "/hook"
			}
			if configure != nil {
				configure(s)
			}
			if withUpstream {
				s.Logger = hclog.New(&hclog.LoggerOptions{Output: f.log, Level: hclog.Warn, JSONFormat: true})
			} else {
				delete(s.Upstreams, "claude-code")
			}
		})
	}
	f.heirloom, f.reference = open(true), open(false)
	return f
}

// call posts one hook payload to both heirlooms and returns the proxied reply and heirloom's
// own (the reference's).
func (f *proxyFixture) call(t *testing.T, fields map[string]any) (got, ours []byte) {
	t.Helper()
	body, _ := json.Marshal(fields)
	return postHook(t, f.heirloom, body), postHook(t, f.reference, body)
}

// prime gives session P an objective and a transcript, so a SubagentStart of P gets an
// inherited block; it returns that SubagentStart's payload.
func (f *proxyFixture) prime(t *testing.T) map[string]any {
	t.Helper()
	f.call(t, cct.Event(f.tr, P, "SessionStart", map[string]any{"source": "startup"}))
	cct.AppendLines(t, f.tr.Transcript, cct.UserLine("u1", "Port the parser to Go. MARK-4411. Never touch vendor/."), cct.AssistantLine("a1", "Reading parse.c now."))
	f.call(t, cct.Event(f.tr, P, "UserPromptSubmit", map[string]any{"prompt": "Port the parser to Go. MARK-4411. Never touch vendor/."}))
	return cct.Start(f.tr, P, "agent1", "Explore")
}

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// postHook posts a hook body and returns the reply, which must be 200 and JSON.
func postHook(t *testing.T, s *proxy.Server, body []byte) []byte {
	t.Helper()
	resp, err := http.Post(s.URL()+"/hooks/claude-code", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("hook reply: %s, Content-Type %q: %s", resp.Status, resp.Header.Get("Content-Type"), got)
	}
	return got
}

// upstreamCount reads heirloom_upstream_requests_total{harness="claude-code",outcome} from
// GET /metrics.
func upstreamCount(t *testing.T, s *proxy.Server, outcome string) float64 {
	t.Helper()
	resp, err := http.Get(s.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	prefix := `heirloom_upstream_requests_total{harness="claude-code",outcome="` + outcome + `"} `
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("GET /metrics has no series for outcome %q", outcome)
	return 0
}

// TestUpstreamMerge checks, one field kind per case, that the upstream's reply comes back intact
// with heirloom's context placed first in additionalContext.
func TestUpstreamMerge(t *testing.T) {
	const theirs = `"upstream memory: the team uses tabs"`
	cases := []struct {
		name  string
		reply string // with theirs as its additionalContext, when it has one
	}{
		{"Decision", `{"decision":"block","reason":"policy says no","hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":` + theirs + `}}`},
		{"ContinueStopReason", `{"continue":false,"stopReason":"upstream stop","hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":` + theirs + `}}`},
		{"SystemMessage", `{"systemMessage":"note from upstream <b>&</b>","suppressOutput":true,"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":` + theirs + `}}`},
		{"PermissionDecision", `{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no","hookEventName":"SubagentStart","additionalContext":` + theirs + `}}`},
		{"UnknownFieldsAndOrder", "{ \"zeta\" : [1, 2.50, {\"k\": null}],\n  \"hookSpecificOutput\": {\"additionalContext\": " + theirs + ", \"x-extra\": {\"deep\": true}, \"hookEventName\": \"SubagentStart\"},\n  \"alpha\": \"é\\u00e9\" }\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newProxyFixture(t, reply(tc.reply), nil)
			got, ours := f.call(t, f.prime(t))
			block := additionalContext(t, ours)
			if !strings.HasPrefix(block, inject.InheritedHeading) {
				t.Fatalf("heirloom alone gave no inherited block: %s", ours)
			}
			want := strings.Replace(tc.reply, theirs, jsonStr(block+"\n\nupstream memory: the team uses tabs"), 1)
			if string(got) != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
			if n := upstreamCount(t, f.heirloom, proxy.OutcomeOK); n != 3 {
				t.Errorf("ok count %v, want 3 (SessionStart, UserPromptSubmit, SubagentStart)", n)
			}
		})
	}
	t.Run("NoAdditionalContext", func(t *testing.T) {
		f := newProxyFixture(t, reply(`{"hookSpecificOutput":{"hookEventName":"SubagentStart"},"continue":true}`), nil)
		got, ours := f.call(t, f.prime(t))
		want := `{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":` + jsonStr(additionalContext(t, ours)) + `},"continue":true}`
		if string(got) != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("PlainText", func(t *testing.T) {
		f := newProxyFixture(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "\n  Memory: prefer small commits.  \n")
		}, nil)
		got, ours := f.call(t, f.prime(t))
		if want := ctxReply("SubagentStart", additionalContext(t, ours)+"\n\nMemory: prefer small commits."); string(got) != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("NoContent", func(t *testing.T) {
		f := newProxyFixture(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, nil)
		got, ours := f.call(t, f.prime(t))
		if want := ctxReply("SubagentStart", additionalContext(t, ours)); string(got) != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
		// An event heirloom adds nothing to, answered with nothing: still JSON.
		if got, _ := f.call(t, cct.Event(f.tr, P, "Stop", nil)); string(got) != "{}" {
			t.Errorf("empty upstream reply to Stop: got %q, want {}", got)
		}
	})
	t.Run("TrimmedUnderTheCap", func(t *testing.T) {
		long := strings.Repeat("upstream memory line. ", 1000) // 22,000 characters
		f := newProxyFixture(t, reply(`{"systemMessage":"kept","hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":`+jsonStr(long)+`}}`),
			func(s *proxy.Server) { s.Engine.Config.MaxContextChars = 2000 })
		got, ours := f.call(t, f.prime(t))
		block := additionalContext(t, ours)
		ctx := additionalContext(t, got)
		marker := "[heirloom: cut to fit 2000 characters: upstream hook context shortened]"
		if !strings.HasPrefix(ctx, block+"\n\nupstream memory line.") || !strings.HasSuffix(ctx, " […]\n\n"+marker) {
			t.Errorf("got %q", ctx)
		}
		if n := inject.Len(ctx); n > 2000 {
			t.Errorf("merged context is %d characters, over the 2000 cap", n)
		}
		if !bytes.HasPrefix(got, []byte(`{"systemMessage":"kept",`)) {
			t.Errorf("the upstream's other fields changed: %.80s", got)
		}
	})
}

// TestUpstreamRequest checks what reaches the upstream: the harness's body unchanged, POSTed
// with the configured headers and token, and nothing of the harness's own headers.
func TestUpstreamRequest(t *testing.T) {
	f := newProxyFixture(t, reply(`{}`), func(s *proxy.Server) {
		s.Token = "heirloom-secret"
		s.Upstreams["claude-code"].URL += "?team=a"
		s.Upstreams["claude-code"].Header = http.Header{"X-Api-Key": {"k-123"}, "Authorization": {"Basic overridden"}}
		s.Upstreams["claude-code"].Token = "up-token"
	})
	body := []byte(`{"session_id":"5e550000-0000-4000-8000-000000000002","cwd":"/work/app","hook_event_name":"SessionStart","source":"startup", "x-new-field" : [1,2]}`)
	req, _ := http.NewRequest(http.MethodPost, f.heirloom.URL()+"/hooks/claude-code", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer heirloom-secret")
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "claude-code/2.1.190")
	req.Header.Set("Cookie", "session=should-not-leak")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s", resp.Status)
	}
	reqs := f.up.requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream got %d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.Method != http.MethodPost || got.Path != "/hook?team=a" || !bytes.Equal(got.Body, body) {
		t.Errorf("upstream got %s %s %q, want POST /hook?team=a with the body unchanged", got.Method, got.Path, got.Body)
	}
	for name, want := range map[string]string{
		"Content-Type":  "application/json",
		"X-Api-Key":     "k-123",
		"Authorization": "Bearer up-token",
		"User-Agent":    "claude-code/2.1.190",
		"Cookie":        "",
	} {
		if v := got.Header.Get(name); v != want {
			t.Errorf("upstream header %s = %q, want %q", name, v, want)
		}
	}
}

// TestUpstreamFailures checks every way an upstream can fail: the harness gets heirloom's reply
// alone, byte for byte, one warning is logged and the outcome is counted.
func TestUpstreamFailures(t *testing.T) {
	hang := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
	cases := []struct {
		name    string
		handle  http.HandlerFunc // nil: nothing listens
		outcome string
	}{
		{"Unreachable", nil, proxy.OutcomeUnreachable},
		{"ResetMidReply", func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"continue\":")
			buf.Flush()
			conn.Close()
		}, proxy.OutcomeUnreachable},
		{"SlowHeaders", hang, proxy.OutcomeTimeout},
		{"SlowBody", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"continue":`)
			http.NewResponseController(w).Flush()
			hang(w, r)
		}, proxy.OutcomeTimeout},
		{"Status500", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
		}, proxy.OutcomeStatus},
		{"Status404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, proxy.OutcomeStatus},
		{"Redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		}, proxy.OutcomeStatus},
		{"InvalidJSON", reply(`{"hookSpecificOutput":{"additionalContext":"x"`), proxy.OutcomeInvalid},
		{"NotAnObject", reply(`[{"continue":true}]`), proxy.OutcomeInvalid},
		{"InvalidUTF8", reply("{\"systemMessage\":\"\xff\"}"), proxy.OutcomeInvalid},
		{"OversizedDeclared", func(w http.ResponseWriter, r *http.Request) {
			body := `"` + strings.Repeat("a", claudecode.MaxUpstreamBytes) + `"`
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			io.WriteString(w, body)
		}, proxy.OutcomeOversized},
		{"OversizedChunked", func(w http.ResponseWriter, r *http.Request) {
			chunk := strings.Repeat("b", 64<<10)
			for range claudecode.MaxUpstreamBytes/len(chunk) + 1 {
				io.WriteString(w, chunk)
				http.NewResponseController(w).Flush()
			}
		}, proxy.OutcomeOversized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var url string
			handle := tc.handle
			if handle == nil {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				url = "http://" + ln.Addr().String() + "/hook"
				ln.Close()
			}
			f := newProxyFixture(t, handle, func(s *proxy.Server) {
				s.Upstreams["claude-code"].Timeout = 300 * time.Millisecond
				if url != "" {
					s.Upstreams["claude-code"].URL = url
				}
			})
			payload := f.prime(t)
			before := upstreamCount(t, f.heirloom, tc.outcome)
			start := time.Now()
			got, ours := f.call(t, payload)
			if !bytes.Equal(got, ours) {
				t.Errorf("got\n%s\nwant heirloom's reply alone\n%s", got, ours)
			}
			if !strings.Contains(string(ours), "## Inherited from Parent Session") {
				t.Errorf("heirloom's own reply lost its block: %s", ours)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("the failed call took %v", el)
			}
			if n := upstreamCount(t, f.heirloom, tc.outcome) - before; n != 1 {
				t.Errorf("%s count grew by %v, want 1", tc.outcome, n)
			}
			var warnings int
			for _, line := range strings.Split(f.log.String(), "\n") {
				if strings.Contains(line, "upstream hook target failed") && strings.Contains(line, `"event":"SubagentStart"`) {
					warnings++
					if !strings.Contains(line, `"reason":"`+tc.outcome+`"`) || !strings.Contains(line, `"harness":"claude-code"`) || !strings.Contains(line, `"@level":"warn"`) {
						t.Errorf("warning lacks harness, event or reason: %s", line)
					}
				}
			}
			if warnings != 1 {
				t.Errorf("got %d warnings for the SubagentStart, want 1:\n%s", warnings, f.log.String())
			}
		})
	}
}

// TestUpstreamPassive checks passive mode: with inheritance off heirloom adds nothing, so every
// upstream reply reaches the harness byte for byte, whitespace and key order included, while
// heirloom still records the session.
func TestUpstreamPassive(t *testing.T) {
	replies := map[string]string{
		"SessionStart":     "{\"hookSpecificOutput\" :{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"mem\"}, \"b\":1 ,\"a\":2}\n",
		"UserPromptSubmit": "  plain text memory \n\n",
		"PreToolUse":       `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","updatedInput":{"z":1,"a":[true]}}}`,
		"SubagentStart":    "{\n  \"hookSpecificOutput\": {\n    \"hookEventName\": \"SubagentStart\",\n    \"additionalContext\": \"upstream only \\u00e9\"\n  }\n}",
		"Stop":             `{"decision":"block","reason":"keep going"}`,
	}
	f := newProxyFixture(t, func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Event string `json:"hook_event_name"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		io.WriteString(w, replies[in.Event])
	}, func(s *proxy.Server) { s.Engine.Config.Passive = true })
	f.prime(t)
	calls := []map[string]any{
		cct.Event(f.tr, P, "SessionStart", map[string]any{"source": "resume"}),
		cct.Event(f.tr, P, "UserPromptSubmit", map[string]any{"prompt": "next"}),
		cct.Spawn(f.tr, P, "toolu_9", "Explore", "look around", ""),
		cct.Start(f.tr, P, "agent9", "Explore"),
		cct.Event(f.tr, P, "Stop", nil),
	}
	for _, c := range calls {
		got, _ := f.call(t, c)
		if want := replies[c["hook_event_name"].(string)]; string(got) != want {
			t.Errorf("%s: got %q, want the upstream's reply byte for byte %q", c["hook_event_name"], got, want)
		}
	}
	if n := upstreamCount(t, f.heirloom, proxy.OutcomeOK); n != 7 {
		t.Errorf("ok count %v, want 7", n)
	}
	// Heirloom still recorded everything: the sub-agent and its parent link.
	if child := mustSession(t, f.heirloom, P+":agent9"); child.ParentID != P {
		t.Errorf("passive mode did not record the sub-agent: %+v", child)
	}
	if r := mustRun(t, f.heirloom, "toolu_9"); r.ChildID != P+":agent9" {
		t.Errorf("passive mode did not record the run: %+v", r)
	}
}

// TestUpstreamUndecodable checks that, in proxy mode, a body heirloom cannot decode still reaches
// the upstream, whose reply passes through: heirloom never turns a call into an error.
func TestUpstreamUndecodable(t *testing.T) {
	f := newProxyFixture(t, reply(`{"continue":true, "systemMessage":"upstream"}`), nil)
	got := postHook(t, f.heirloom, []byte(`{"no_event_name":1}`))
	if want := `{"continue":true, "systemMessage":"upstream"}`; string(got) != want {
		t.Errorf("got %s, want the upstream's reply %s", got, want)
	}
	if reqs := f.up.requests(); len(reqs) != 1 || string(reqs[0].Body) != `{"no_event_name":1}` {
		t.Errorf("upstream got %+v", reqs)
	}
}

// TestUpstreamOpen checks that Open refuses an upstream URL it could never call.
func TestUpstreamOpen(t *testing.T) {
	for _, url := range []string{"127.0.0.1:8080", "ftp://x/hook", "http:///nohost", "://bad"} {
		s := proxy.NewServer()
		s.Addr, s.Engine, s.Harnesses = "127.0.0.1:0", MustOpenServer(t, nil).Engine, claudeOnly(t)
		s.Upstreams = map[string]*proxy.Upstream{"claude-code": {URL: url}}
		if err := s.Open(); err == nil {
			s.Close(t.Context())
			t.Errorf("Open with upstream %q: got nil, want an error", url)
		}
	}
}

// TestMetricsEndpoint checks GET /metrics: behind the token like the API, probes still open.
func TestMetricsEndpoint(t *testing.T) {
	s := MustOpenServer(t, func(s *proxy.Server) {
		s.Token = "tok"
		s.Upstreams = map[string]*proxy.Upstream{"claude-code": {URL: "http://127.0.0.1:9/hook"}}
	})
	status := func(method, path, token string) (int, string) {
		req, _ := http.NewRequest(method, s.URL()+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := status("GET", "/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without the token: %d, want 401", code)
	}
	code, body := status("GET", "/metrics", "tok")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, o := range []string{"ok", "unreachable", "timeout", "status", "invalid", "oversized"} {
		if want := fmt.Sprintf(`heirloom_upstream_requests_total{harness="claude-code",outcome=%q} 0`, o); !strings.Contains(body, want) {
			t.Errorf("GET /metrics lacks %s:\n%s", want, body)
		}
	}
	if code, _ := status("POST", "/metrics", "tok"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d, want 405", code)
	}
	if code, _ := status("GET", "/healthz", ""); code != http.StatusOK {
		t.Errorf("GET /healthz without the token: %d, want 200", code)
	}
}
