//go:build unix

package hookshim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/hookshim"
)

// shimOurContext is what the sidecar stand-in adds to every hook call.
const shimOurContext = "## Recovered Session Checkpoint\nOURS-1 keep the parser pure."

// shimOurReply is the stand-in's reply carrying shimOurContext.
var shimOurReply = `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":` + strconv.Quote(shimOurContext) + `}}`

// shimInput is the hook call the tests feed the shim.
const shimInput = `{"session_id":"s1","cwd":"/work/app","hook_event_name":"UserPromptSubmit","prompt":"héllo \"world\"\n"}`

// shimSidecar is a sidecar stand-in that answers every hook call with reply and records the bodies.
type shimSidecar struct {
	URL string

	mu     sync.Mutex
	bodies []string
}

// newShimSidecar serves reply (after before, when not nil) on an httptest server closed in t.Cleanup.
func newShimSidecar(t *testing.T, reply string, before func(r *http.Request)) *shimSidecar {
	t.Helper()
	s := &shimSidecar{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, string(body))
		s.mu.Unlock()
		if before != nil {
			before(r)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Bodies returns the hook calls received so far.
func (s *shimSidecar) Bodies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// shimDownURL is a loopback URL nobody listens on.
func shimDownURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

// shimScript writes a /bin/sh script with body to a temp dir and returns its path.
func shimScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// wrappedShim returns a Shim asking url and wrapping command, with generous timeouts.
func wrappedShim(url string, command ...string) *hookshim.Shim {
	return &hookshim.Shim{
		URL:            url,
		Timeout:        10 * time.Second,
		Command:        command,
		Env:            []string{"PATH=" + os.Getenv("PATH")},
		CommandTimeout: 10 * time.Second,
	}
}

// runWrappedShim runs s on stdin and returns its stdout, stderr and exit code.
func runWrappedShim(t *testing.T, s *hookshim.Shim, stdin string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	s.Stdin, s.Stdout, s.Stderr = strings.NewReader(stdin), &stdout, &stderr
	code := s.Run(t.Context(), "claude-code")
	return stdout.String(), stderr.String(), code
}

// shimReplyContext decodes a hook reply and returns it with its additionalContext.
func shimReplyContext(t *testing.T, reply string) (map[string]any, string) {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal([]byte(reply), &obj); err != nil {
		t.Fatalf("reply is not JSON: %v\n%q", err, reply)
	}
	hso, _ := obj["hookSpecificOutput"].(map[string]any)
	ctx, _ := hso["additionalContext"].(string)
	return obj, ctx
}

// oneShimWarning fails t unless stderr is exactly one "heirloom:" line containing want.
func oneShimWarning(t *testing.T, stderr, want string) {
	t.Helper()
	if !strings.HasPrefix(stderr, "heirloom: ") || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("stderr: got %q, want one heirloom warning line naming %q", stderr, want)
	}
}

func TestShimWrapsCommand(t *testing.T) {
	t.Run("MergeJSON", func(t *testing.T) {
		side := newShimSidecar(t, shimOurReply, nil)
		cmd := shimScript(t, `cat >/dev/null
printf '%s\n' '{"continue":true,"suppressOutput":false,"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"THEIRS-2"},"x-custom":[1,2]}'`)
		stdout, stderr, code := runWrappedShim(t, wrappedShim(side.URL, cmd), shimInput)
		if code != 0 || stderr != "" {
			t.Fatalf("got code %d stderr %q, want 0 and nothing", code, stderr)
		}
		obj, ctx := shimReplyContext(t, stdout)
		if want := shimOurContext + "\n\nTHEIRS-2"; ctx != want {
			t.Fatalf("additionalContext: got %q, want %q (ours first)", ctx, want)
		}
		if obj["continue"] != true || obj["suppressOutput"] != false || fmt.Sprint(obj["x-custom"]) != "[1 2]" {
			t.Fatalf("the command's other fields were not kept: %s", stdout)
		}
	})
	t.Run("PlainText", func(t *testing.T) {
		side := newShimSidecar(t, shimOurReply, nil)
		stdout, stderr, code := runWrappedShim(t, wrappedShim(side.URL, "sh", "-c", `echo "plain words from the hook"`), shimInput)
		if code != 0 || stderr != "" {
			t.Fatalf("got code %d stderr %q", code, stderr)
		}
		obj, ctx := shimReplyContext(t, stdout)
		if want := shimOurContext + "\n\nplain words from the hook"; ctx != want {
			t.Fatalf("additionalContext: got %q, want %q", ctx, want)
		}
		if ev := obj["hookSpecificOutput"].(map[string]any)["hookEventName"]; ev != "UserPromptSubmit" {
			t.Fatalf("hookEventName: got %v, want the input's UserPromptSubmit", ev)
		}
	})
	t.Run("CapApplied", func(t *testing.T) {
		side := newShimSidecar(t, shimOurReply, nil)
		s := wrappedShim(side.URL, "sh", "-c", `i=0; while [ $i -lt 200 ]; do printf 'word%d ' $i; i=$((i+1)); done`)
		s.MaxContextChars = 600
		stdout, _, code := runWrappedShim(t, s, shimInput)
		_, ctx := shimReplyContext(t, stdout)
		if code != 0 || len(ctx) > 600 || !strings.HasPrefix(ctx, shimOurContext) || !strings.Contains(ctx, "[heirloom: cut to fit 600") {
			t.Fatalf("got code %d, context (%d bytes) %q; want ours whole, the upstream's cut to 600 with a marker", code, len(ctx), ctx)
		}
	})
	t.Run("StderrPassedThrough", func(t *testing.T) {
		side := newShimSidecar(t, shimOurReply, nil)
		stdout, stderr, code := runWrappedShim(t, wrappedShim(side.URL, "sh", "-c", `echo "verbose note" >&2; echo '{}'`), shimInput)
		if code != 0 || stderr != "verbose note\n" {
			t.Fatalf("got code %d stderr %q, want 0 and the command's stderr as written", code, stderr)
		}
		if _, ctx := shimReplyContext(t, stdout); ctx != shimOurContext {
			t.Fatalf("context: got %q, want ours", ctx)
		}
	})
	t.Run("SameStdin", func(t *testing.T) {
		side := newShimSidecar(t, shimOurReply, nil)
		got := filepath.Join(t.TempDir(), "stdin")
		big := shimInput[:len(shimInput)-1] + `,"pad":"` + strings.Repeat("ü", 300_000) + `"}`
		for _, in := range []string{shimInput, big} {
			_, stderr, code := runWrappedShim(t, wrappedShim(side.URL, "sh", "-c", `cat > "$0"; echo '{}'`, got), in)
			if code != 0 || stderr != "" {
				t.Fatalf("got code %d stderr %q", code, stderr)
			}
			b, err := os.ReadFile(got)
			if err != nil {
				t.Fatal(err)
			}
			bodies := side.Bodies()
			if string(b) != in || bodies[len(bodies)-1] != in {
				t.Fatalf("stdin of %d bytes: the command got %d bytes, the sidecar %d; want both identical to it", len(in), len(b), len(bodies[len(bodies)-1]))
			}
		}
	})
	t.Run("Environment", func(t *testing.T) {
		side := newShimSidecar(t, "{}", nil)
		s := wrappedShim(side.URL, "sh", "-c", `printf '%s' "$HOOK_MARK"`)
		s.Env = append(s.Env, "HOOK_MARK=mark-77")
		stdout, _, code := runWrappedShim(t, s, shimInput)
		if code != 0 || stdout != "mark-77" {
			t.Fatalf("got code %d stdout %q, want the variable the shim was given", code, stdout)
		}
	})
}

// TestShimPassive: when heirloom adds nothing, or the sidecar is down or slow, the command's
// stdout comes out byte for byte.
func TestShimPassive(t *testing.T) {
	outputs := map[string]string{
		"JSON":      "{ \"b\": 2,\n  \"a\" : 1 }\n\n",
		"ContextIn": `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"theirs"}}`,
		"PlainText": "no newline at the end",
		"Empty":     "",
	}
	slow := newShimSidecar(t, shimOurReply, func(r *http.Request) { <-r.Context().Done() })
	sidecars := map[string]struct {
		url, warn string
		timeout   time.Duration
	}{
		"NothingToAdd": {url: newShimSidecar(t, "{}", nil).URL},
		"Down":         {url: shimDownURL(t), warn: "unreachable"},
		"Slow":         {url: slow.URL, warn: "deadline exceeded", timeout: 200 * time.Millisecond},
	}
	for sname, side := range sidecars {
		for oname, out := range outputs {
			t.Run(sname+"/"+oname, func(t *testing.T) {
				s := wrappedShim(side.url, "sh", "-c", `printf '%s' "$0"`, out)
				if side.timeout > 0 {
					s.Timeout = side.timeout
				}
				stdout, stderr, code := runWrappedShim(t, s, shimInput)
				if code != 0 || stdout != out {
					t.Fatalf("got code %d stdout %q, want 0 and %q", code, stdout, out)
				}
				if side.warn == "" && stderr != "" {
					t.Fatalf("stderr: got %q, want nothing", stderr)
				}
				if side.warn != "" {
					oneShimWarning(t, stderr, side.warn)
				}
			})
		}
	}
}

// TestShimBlock: exit code 2 passes through with the command's stdout and stderr untouched,
// whatever the sidecar does.
func TestShimBlock(t *testing.T) {
	for name, url := range map[string]string{"Sidecar": newShimSidecar(t, shimOurReply, nil).URL, "SidecarDown": shimDownURL(t)} {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runWrappedShim(t, wrappedShim(url, "sh", "-c", `printf 'ignored {'; printf 'rm -rf is not allowed' >&2; exit 2`), shimInput)
			if code != 2 || stdout != "ignored {" || stderr != "rm -rf is not allowed" {
				t.Fatalf("got code %d stdout %q stderr %q, want 2 and the command's output untouched", code, stdout, stderr)
			}
		})
	}
}

// TestShimCommandFails: whatever goes wrong with the command, the harness gets heirloom's reply
// alone, one warning line and exit 0.
func TestShimCommandFails(t *testing.T) {
	tests := []struct {
		name    string
		command []string
		timeout time.Duration
		warn    string
	}{
		{"Exit1", []string{"sh", "-c", `echo '{"decision":"x"}'; exit 1`}, 0, "exited with code 1"},
		{"Exit3", []string{"sh", "-c", `exit 3`}, 0, "exited with code 3"},
		{"Crash", []string{"sh", "-c", `echo '{}'; kill -SEGV $$`}, 0, "was killed (signal: segmentation fault)"},
		{"Timeout", []string{"sh", "-c", `echo '{}'; sleep 30`}, 300 * time.Millisecond, "timed out after 300ms"},
		{"GarbageJSON", []string{"sh", "-c", `echo '{"hookSpecificOutput": {'`}, 0, "not valid JSON"},
		{"NotAnObject", []string{"sh", "-c", `echo '[1,2]'`}, 0, "not a JSON object"},
		{"InvalidUTF8", []string{"sh", "-c", `printf 'bad \377 byte'`}, 0, "invalid UTF-8"},
		{"Oversized", []string{"sh", "-c", `while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done`}, 0, "printed over 1048576 bytes"},
		{"NotFound", []string{"no-such-hook-command-here"}, 0, "did not start"},
		{"NotExecutable", []string{"/dev/null"}, 0, "did not start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			side := newShimSidecar(t, shimOurReply, nil)
			s := wrappedShim(side.URL, tt.command...)
			if tt.timeout > 0 {
				s.CommandTimeout = tt.timeout
			}
			start := time.Now()
			stdout, stderr, code := runWrappedShim(t, s, shimInput)
			if code != 0 || stdout != shimOurReply+"\n" {
				t.Fatalf("got code %d stdout %q, want 0 and heirloom's reply alone", code, stdout)
			}
			oneShimWarning(t, stderr, tt.warn)
			if !strings.Contains(stderr, "replying with heirloom's reply alone") {
				t.Fatalf("warning %q does not say what was replied", stderr)
			}
			if d := time.Since(start); d > 8*time.Second {
				t.Fatalf("took %s; the command's limits are far shorter", d)
			}
		})
	}
	t.Run("SidecarDownToo", func(t *testing.T) {
		stdout, stderr, code := runWrappedShim(t, wrappedShim(shimDownURL(t), "sh", "-c", "exit 1"), shimInput)
		if code != 0 || stdout != "{}\n" || strings.Count(stderr, "\n") != 2 || !strings.Contains(stderr, "replying {}") {
			t.Fatalf("got code %d stdout %q stderr %q, want 0, {} and two warnings", code, stdout, stderr)
		}
	})
}

// TestShimRunsInParallel: the sidecar's call and the command each wait for the other to have
// started, so the hook completes only if they run at the same time.
func TestShimRunsInParallel(t *testing.T) {
	dir := t.TempDir()
	cmdStarted, sidecarCalled := filepath.Join(dir, "cmd-started"), filepath.Join(dir, "sidecar-called")
	side := newShimSidecar(t, shimOurReply, func(r *http.Request) {
		os.WriteFile(sidecarCalled, nil, 0o600)
		for r.Context().Err() == nil {
			if _, err := os.Stat(cmdStarted); err == nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	cmd := shimScript(t, `: > "$1"
while [ ! -e "$2" ]; do sleep 0.01; done
echo "saw the sidecar called"`)
	stdout, stderr, code := runWrappedShim(t, wrappedShim(side.URL, cmd, cmdStarted, sidecarCalled), shimInput)
	if code != 0 || stderr != "" {
		t.Fatalf("got code %d stderr %q, want 0 and no warning (neither side timed out)", code, stderr)
	}
	if _, ctx := shimReplyContext(t, stdout); ctx != shimOurContext+"\n\nsaw the sidecar called" {
		t.Fatalf("context: got %q, want both parts", ctx)
	}
}

// TestShimLeftoverChildren: a command that exits while a child it started holds stdout open does
// not hold the hook; a command that times out dies with its whole process group.
func TestShimLeftoverChildren(t *testing.T) {
	t.Run("HoldsStdout", func(t *testing.T) {
		side := newShimSidecar(t, "{}", nil)
		pidFile := filepath.Join(t.TempDir(), "pid")
		start := time.Now()
		stdout, stderr, code := runWrappedShim(t, wrappedShim(side.URL, "sh", "-c", `sleep 30 & echo $! > "$0"; echo '{"a":1}'`, pidFile), shimInput)
		elapsed := time.Since(start)
		pid := shimReadPID(t, pidFile)
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		if code != 0 || stdout != "{\"a\":1}\n" || stderr != "" {
			t.Fatalf("got code %d stdout %q stderr %q", code, stdout, stderr)
		}
		if elapsed > 10*time.Second {
			t.Fatalf("took %s: the hook waited on the leftover child", elapsed)
		}
	})
	t.Run("TimeoutKillsGroup", func(t *testing.T) {
		side := newShimSidecar(t, "{}", nil)
		pidFile := filepath.Join(t.TempDir(), "pid")
		s := wrappedShim(side.URL, "sh", "-c", `sleep 30 & echo $! > "$0"; wait`, pidFile)
		s.CommandTimeout = 300 * time.Millisecond
		_, stderr, code := runWrappedShim(t, s, shimInput)
		if code != 0 || !strings.Contains(stderr, "timed out") {
			t.Fatalf("got code %d stderr %q", code, stderr)
		}
		pid := shimReadPID(t, pidFile)
		deadline := time.Now().Add(5 * time.Second)
		for shimAlive(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("the command's child %d outlived the timeout", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// shimReadPID reads a pid a command wrote.
func shimReadPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// alive reports whether pid is a live process: not gone, and not a zombie nobody reaped yet.
func shimAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: signal 0 is all we know
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}
