//go:build unix

package main_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// binDir holds the binaries the tests build, made by TestMain and removed after.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "heirloom-hook-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildMu sync.Mutex
	built   = map[string]string{}
)

// binary builds the Go package pkg into binDir as name, once per test process, and returns its
// path.
func binary(tb testing.TB, name, pkg string) string {
	tb.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if path, ok := built[name]; ok {
		return path
	}
	path := filepath.Join(binDir, name)
	if out, err := exec.Command("go", "build", "-o", path, pkg).CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	built[name] = path
	return path
}

// hookBin is the heirloom-hook binary under test.
func hookBin(tb testing.TB) string { return binary(tb, "heirloom-hook", ".") }

// freeURL returns a loopback URL nobody listens on right now.
func freeURL(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String()
}

// runHook runs heirloom-hook ARGS… with stdin and env, returning stdout, stderr and the exit code.
func runHook(t *testing.T, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(hookBin(t), args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// TestBinary checks heirloom-hook's wiring: arguments, stdin, environment and exit code reach
// hookshim.Main, whose behaviour package hookshim tests in full.
func TestBinary(t *testing.T) {
	const input = `{"session_id":"s1","cwd":"/tmp","hook_event_name":"SessionStart","source":"startup"}`
	const ours = `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"OURS"}}`
	var got []string // "PATH BODY" of each call
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.Path+" "+string(body))
		mu.Unlock()
		if r.URL.Path != "/hooks/claude-code" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, ours)
	}))
	t.Cleanup(srv.Close)
	env := []string{"HEIRLOOM_URL=" + srv.URL, "PATH=" + os.Getenv("PATH")}

	t.Run("Relay", func(t *testing.T) {
		stdout, stderr, code := runHook(t, input, env, "claude-code")
		if code != 0 || stdout != ours+"\n" || stderr != "" {
			t.Fatalf("got code %d stdout %q stderr %q, want 0, the sidecar's reply and nothing", code, stdout, stderr)
		}
		mu.Lock()
		defer mu.Unlock()
		if last := got[len(got)-1]; last != "/hooks/claude-code "+input {
			t.Fatalf("the sidecar got %q, want the hook input at /hooks/claude-code", last)
		}
	})
	t.Run("Wrap", func(t *testing.T) {
		stdout, _, code := runHook(t, input, env, "claude-code", "--", "sh", "-c", "cat >/dev/null; echo THEIRS")
		want := `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"OURS\n\nTHEIRS"}}`
		if code != 0 || stdout != want {
			t.Fatalf("got code %d stdout %q, want 0 and %s", code, stdout, want)
		}
	})
	t.Run("Block", func(t *testing.T) {
		stdout, stderr, code := runHook(t, input, env, "claude-code", "--", "sh", "-c", "printf no; printf denied >&2; exit 2")
		if code != 2 || stdout != "no" || stderr != "denied" {
			t.Fatalf("got code %d stdout %q stderr %q, want 2 and the command's output", code, stdout, stderr)
		}
	})
	t.Run("UnknownHarness", func(t *testing.T) {
		stdout, stderr, code := runHook(t, input, env, "codex")
		if code != 0 || stdout != "{}\n" || !strings.Contains(stderr, `harness "codex"`) || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("got code %d stdout %q stderr %q, want 0, {} and one warning naming codex", code, stdout, stderr)
		}
	})
	t.Run("NothingListening", func(t *testing.T) {
		stdout, stderr, code := runHook(t, input, []string{"HEIRLOOM_URL=" + freeURL(t)}, "claude-code")
		if code != 0 || stdout != "{}\n" || !strings.Contains(stderr, "unreachable") {
			t.Fatalf("got code %d stdout %q stderr %q, want 0, {} and a warning", code, stdout, stderr)
		}
	})
	t.Run("Usage", func(t *testing.T) {
		stdout, stderr, code := runHook(t, input, env)
		if code != 0 || stdout != "{}\n" || !strings.HasPrefix(stderr, "heirloom: usage: heirloom-hook claude-code") {
			t.Fatalf("got code %d stdout %q stderr %q, want 0, {} and the usage line", code, stdout, stderr)
		}
	})
}
