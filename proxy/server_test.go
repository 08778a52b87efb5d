package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
	"github.com/heirloom-dev/heirloom/search"
)

// MustOpenServer opens a Server on 127.0.0.1:0 with an engine over a real store in a temp dir;
// all three close in t.Cleanup. Set fields with configure before Open (the engine is
// s.Engine; its Harnesses follow s.Harnesses unless configure sets them).
func MustOpenServer(tb testing.TB, configure func(*proxy.Server)) *proxy.Server {
	tb.Helper()
	s, _ := openServer(tb, tb.TempDir(), configure)
	return s
}

// claudeOnly is the registry of the tests that speak only Claude Code.
func claudeOnly(tb testing.TB) *adapters.Registry {
	reg, err := adapters.NewRegistry(claudecode.Registration())
	if err != nil {
		tb.Fatal(err)
	}
	return reg
}

// openServer opens a Server and its engine over the store in dir; close closes all three
// (also run at cleanup).
func openServer(tb testing.TB, dir string, configure func(*proxy.Server)) (s *proxy.Server, close func()) {
	tb.Helper()
	store := kv.NewStore(dir)
	store.Index = search.Analyzer{}
	store.Ledger = inject.Ledger{}
	if err := store.Open(); err != nil {
		tb.Fatal(err)
	}
	eng := engine.New(store, "default")
	s = proxy.NewServer()
	s.Addr = "127.0.0.1:0"
	s.Engine = eng
	s.Harnesses = claudeOnly(tb)
	if configure != nil {
		configure(s)
	}
	if eng.Harnesses == nil {
		eng.Harnesses = s.Harnesses
	}
	if err := eng.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	if err := s.Open(); err != nil {
		tb.Fatal(err)
	}
	var once sync.Once
	close = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.Close(ctx); err != nil {
				tb.Error(err)
			}
			if err := eng.Close(ctx); err != nil {
				tb.Error(err)
			}
			if err := store.Close(); err != nil {
				tb.Error(err)
			}
		})
	}
	tb.Cleanup(close)
	return s, close
}

// do sends one request and returns the status and the decoded JSON body.
func do(t *testing.T, method, url, body string, header map[string]string) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var got map[string]any
	if len(raw) > 0 && method != http.MethodHead {
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s %s: reply is not JSON: %q", method, url, raw)
		}
	}
	return resp.StatusCode, got, resp.Header
}

const startPayload = `{"session_id":"5e550000-0000-4000-8000-0000000000c1","cwd":"/tmp","hook_event_name":"SessionStart","source":"startup"}`

func TestHookEndpoint(t *testing.T) {
	s := MustOpenServer(t, func(s *proxy.Server) { s.MaxBodyBytes = 1024 })
	url := s.URL() + "/hooks/claude-code"
	tests := []struct {
		name       string
		method     string
		body       string
		wantStatus int
		wantCode   string // "" means a 200 hook reply
	}{
		{"OK", http.MethodPost, startPayload, 200, ""},
		{"UnknownEvent", http.MethodPost, `{"session_id":"5e550000-0000-4000-8000-0000000000c1","hook_event_name":"SomethingNew"}`, 200, ""},
		{"ErrBadJSON", http.MethodPost, `{"session_id":`, 400, "bad_json"},
		{"ErrNotObject", http.MethodPost, `[1,2]`, 400, "bad_json"},
		{"ErrEmpty", http.MethodPost, ``, 400, "bad_json"},
		{"ErrTooLarge", http.MethodPost, `{"session_id":"5e550000-0000-4000-8000-0000000000c1","hook_event_name":"UserPromptSubmit","prompt":"` + strings.Repeat("a", 2048) + `"}`, 413, "too_large"},
		{"ErrMethod", http.MethodGet, ``, 405, "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, got, hdr := do(t, tt.method, url, tt.body, nil)
			if status != tt.wantStatus {
				t.Fatalf("status: got %d, want %d (body %v)", status, tt.wantStatus, got)
			}
			if tt.wantCode == "" {
				if len(got) != 0 {
					t.Fatalf("reply: got %v, want {}", got)
				}
				return
			}
			if got["code"] != tt.wantCode || got["error"] == "" {
				t.Fatalf("error body: got %v, want code %q and a message", got, tt.wantCode)
			}
			if tt.wantStatus == 405 && hdr.Get("Allow") != "POST" {
				t.Fatalf("Allow: got %q, want POST", hdr.Get("Allow"))
			}
		})
	}
}

func TestHookRecordsSession(t *testing.T) {
	s := MustOpenServer(t, nil)
	status, _, _ := do(t, http.MethodPost, s.URL()+"/hooks/claude-code", startPayload, nil)
	if status != 200 {
		t.Fatalf("got %d", status)
	}
	prompt := `{"session_id":"5e550000-0000-4000-8000-0000000000c1","cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"build the thing"}`
	do(t, http.MethodPost, s.URL()+"/hooks/claude-code", prompt, nil)
	sess, err := s.Engine.Store.GetSession(t.Context(), "default", "5e550000-0000-4000-8000-0000000000c1")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Objective != "build the thing" || sess.Harness != "claude-code" || sess.Project != "/tmp" {
		t.Fatalf("got %+v", sess)
	}
}

func TestProbesAndRoutes(t *testing.T) {
	s := MustOpenServer(t, nil)
	for _, tt := range []struct {
		method, path string
		want         int
		code         string
	}{
		{"GET", "/healthz", 200, ""},
		{"GET", "/readyz", 200, ""},
		{"POST", "/healthz", 405, "method_not_allowed"},
		{"GET", "/nope", 404, "not_found"},
	} {
		status, got, _ := do(t, tt.method, s.URL()+tt.path, "", nil)
		if status != tt.want || (tt.code != "" && got["code"] != tt.code) {
			t.Errorf("%s %s: got %d %v, want %d %q", tt.method, tt.path, status, got, tt.want, tt.code)
		}
	}
}

func TestReadyzStoreClosed(t *testing.T) {
	s := MustOpenServer(t, nil)
	if err := s.Engine.Store.Close(); err != nil {
		t.Fatal(err)
	}
	status, got, _ := do(t, "GET", s.URL()+"/readyz", "", nil)
	if status != 503 || got["code"] != "unavailable" {
		t.Fatalf("got %d %v, want 503 unavailable", status, got)
	}
	status, _, _ = do(t, "GET", s.URL()+"/healthz", "", nil)
	if status != 200 {
		t.Fatalf("healthz with a closed store: got %d, want 200 (process is up)", status)
	}
}

func TestCallerChecks(t *testing.T) {
	t.Run("ErrForeignHost", func(t *testing.T) {
		s := MustOpenServer(t, nil)
		status, got, _ := do(t, "POST", s.URL()+"/hooks/claude-code", startPayload, map[string]string{"Host": "evil.example:7433"})
		if status != 403 || got["code"] != "forbidden" {
			t.Fatalf("got %d %v, want 403 forbidden", status, got)
		}
	})
	t.Run("ErrCrossOrigin", func(t *testing.T) {
		s := MustOpenServer(t, nil)
		status, _, _ := do(t, "POST", s.URL()+"/hooks/claude-code", startPayload, map[string]string{"Origin": "https://evil.example"})
		if status != 403 {
			t.Fatalf("got %d, want 403", status)
		}
		status, _, _ = do(t, "POST", s.URL()+"/hooks/claude-code", startPayload, map[string]string{"Sec-Fetch-Mode": "no-cors"})
		if status != 403 {
			t.Fatalf("no-cors: got %d, want 403", status)
		}
	})
	t.Run("Token", func(t *testing.T) {
		s := MustOpenServer(t, func(s *proxy.Server) { s.Token = "sekret" })
		status, got, hdr := do(t, "POST", s.URL()+"/hooks/claude-code", startPayload, nil)
		if status != 401 || got["code"] != "unauthorized" || hdr.Get("WWW-Authenticate") == "" {
			t.Fatalf("no token: got %d %v", status, got)
		}
		status, _, _ = do(t, "POST", s.URL()+"/hooks/claude-code", startPayload, map[string]string{"Authorization": "Bearer wrong"})
		if status != 401 {
			t.Fatalf("wrong token: got %d, want 401", status)
		}
		status, _, _ = do(t, "POST", s.URL()+"/hooks/claude-code", startPayload, map[string]string{"Authorization": "Bearer sekret"})
		if status != 200 {
			t.Fatalf("right token: got %d, want 200", status)
		}
		status, _, _ = do(t, "GET", s.URL()+"/healthz", "", nil)
		if status != 200 {
			t.Fatalf("healthz needs no token: got %d", status)
		}
	})
}

func TestServerLifecycle(t *testing.T) {
	ctx := t.Context()
	t.Run("CloseWithoutOpen", func(t *testing.T) {
		if err := proxy.NewServer().Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("CloseTwice", func(t *testing.T) {
		s := MustOpenServer(t, nil)
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrAddressInUse", func(t *testing.T) {
		a := MustOpenServer(t, nil)
		b := proxy.NewServer()
		b.Addr = strings.TrimPrefix(a.URL(), "http://")
		b.Engine = a.Engine
		if err := b.Open(); err == nil {
			b.Close(ctx)
			t.Fatal("second Open on a used address: got nil error")
		}
	})
}

// FuzzHookEndpoint: whatever the body, the endpoint answers JSON with 200, 400 or 413 and never
// panics.
func FuzzHookEndpoint(f *testing.F) {
	f.Add([]byte(startPayload))
	f.Add([]byte(`{"session_id":"5e550000-0000-4000-8000-0000000000c1","hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"prompt":"x"}}`))
	f.Add([]byte("\xff\xfe{"))
	s := MustOpenServer(f, nil)
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := http.Post(s.URL()+"/hooks/claude-code", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 && resp.StatusCode != 400 && resp.StatusCode != 413 {
			t.Fatalf("status %d for %q", resp.StatusCode, body)
		}
		if !json.Valid(raw) {
			t.Fatalf("reply not JSON: %q", raw)
		}
	})
}
