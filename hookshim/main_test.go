//go:build unix

package hookshim_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/heirloom-dev/heirloom/hookshim"
)

// mainSidecar is a sidecar stand-in: /hooks/claude-code and /hooks/codex answer {} and every
// other path 404, as `heirloom serve` does for a harness it does not serve. It records the path
// and Authorization header of each call.
type mainSidecar struct {
	URL string

	mu    sync.Mutex
	calls []string // "PATH AUTHORIZATION"
}

func newMainSidecar(t *testing.T) *mainSidecar {
	t.Helper()
	s := &mainSidecar{}
	mux := http.NewServeMux()
	hook := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.calls = append(s.calls, r.URL.Path+" "+r.Header.Get("Authorization"))
		s.mu.Unlock()
		io.WriteString(w, "{}")
	}
	mux.HandleFunc("POST /hooks/claude-code", hook)
	mux.HandleFunc("POST /hooks/codex", hook)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"no adapter for `+r.URL.Path+`","code":"not_found"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *mainSidecar) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// runMain runs hookshim.Main as `heirloom-hook ARGS…` with env and the shim's stdin.
func runMain(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = hookshim.Main(t.Context(), "heirloom-hook", args, env, strings.NewReader(shimInput), &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestMainRelays: Main relays any well-formed harness name, warns by name on one the sidecar does
// not serve, and answers misuse and bad settings with {} and one warning line.
func TestMainRelays(t *testing.T) {
	side := newMainSidecar(t)
	env := []string{"HEIRLOOM_URL=" + side.URL}

	t.Run("OK", func(t *testing.T) {
		stdout, stderr, code := runMain(t, env, "claude-code")
		if code != 0 || stdout != "{}\n" || stderr != "" {
			t.Fatalf("got code %d stdout %q stderr %q, want 0, {} and nothing", code, stdout, stderr)
		}
	})
	t.Run("AnyHarnessRelayed", func(t *testing.T) {
		stdout, stderr, code := runMain(t, env, "codex")
		if code != 0 || stdout != "{}\n" || stderr != "" {
			t.Fatalf("got code %d stdout %q stderr %q, want 0, {} and nothing", code, stdout, stderr)
		}
		if calls := side.Calls(); calls[len(calls)-1] != "/hooks/codex " {
			t.Fatalf("last call %q, want /hooks/codex", calls[len(calls)-1])
		}
	})
	t.Run("UnknownHarness", func(t *testing.T) {
		stdout, stderr, code := runMain(t, env, "no-such-harness")
		if code != 0 || stdout != "{}\n" {
			t.Fatalf("got code %d stdout %q, want 0 and {}", code, stdout)
		}
		oneShimWarning(t, stderr, `takes no hooks of harness "no-such-harness" (404 Not Found from /hooks/no-such-harness); replying {}`)
	})
	t.Run("Token", func(t *testing.T) {
		runMain(t, append(env, "HEIRLOOM_TOKEN=s3cret"), "claude-code")
		if calls := side.Calls(); calls[len(calls)-1] != "/hooks/claude-code Bearer s3cret" {
			t.Fatalf("last call %q, want the token as a bearer", calls[len(calls)-1])
		}
	})
	for name, args := range map[string][]string{
		"NoHarness":    nil,
		"Uppercase":    {"Claude-Code"},
		"PathInName":   {"../api/sessions"},
		"SpaceInName":  {"claude code"},
		"EmptyName":    {""},
		"NoCommand":    {"claude-code", "--"},
		"NoCommandAny": {"codex", "--"},
	} {
		t.Run("Usage/"+name, func(t *testing.T) {
			before := len(side.Calls())
			stdout, stderr, code := runMain(t, env, args...)
			if code != 0 || stdout != "{}\n" {
				t.Fatalf("got code %d stdout %q, want 0 and {}", code, stdout)
			}
			oneShimWarning(t, stderr, "usage: heirloom-hook ")
			if len(side.Calls()) != before {
				t.Fatal("misuse reached the sidecar")
			}
		})
	}
	t.Run("BadSettingsWarn", func(t *testing.T) {
		for _, tt := range []struct{ env, warn string }{
			{"HEIRLOOM_HOOK_TIMEOUT=soon", `HEIRLOOM_HOOK_TIMEOUT="soon" is not a duration; using 1.5s`},
			{"HEIRLOOM_UPSTREAM_TIMEOUT=-3s", `HEIRLOOM_UPSTREAM_TIMEOUT="-3s" is not a duration; using 30s`},
			{"HEIRLOOM_MAX_CONTEXT_CHARS=20000", `HEIRLOOM_MAX_CONTEXT_CHARS="20000" is not a number in 500..10000; using 9500`},
		} {
			stdout, stderr, code := runMain(t, append(env, tt.env), "claude-code", "--", "sh", "-c", "cat >/dev/null; echo '{}'")
			if code != 0 || stdout != "{}\n" {
				t.Fatalf("%s: got code %d stdout %q, want 0 and {}", tt.env, code, stdout)
			}
			oneShimWarning(t, stderr, tt.warn)
		}
	})
}

// TestMain_WrapIsClaudeCodeOnly: `heirloom hook codex -- CMD` does not run CMD nor merge by
// Claude Code's rules: it says why and replies {}.
func TestMain_WrapIsClaudeCodeOnly(t *testing.T) {
	var stdout, stderr bytes.Buffer
	marker := filepath.Join(t.TempDir(), "ran")
	code := hookshim.Main(t.Context(), "heirloom hook", []string{"codex", "--", "touch", marker}, []string{"HEIRLOOM_URL=http://127.0.0.1:1"}, strings.NewReader("{}"), &stdout, &stderr)
	if code != 0 || strings.TrimSpace(stdout.String()) != "{}" || !strings.Contains(stderr.String(), "claude-code only") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0, {} and why", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the wrapped command ran")
	}
}
