package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

// heirloomBin is the binary under test, built once by TestMain.
var heirloomBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "heirloom-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	heirloomBin = filepath.Join(dir, "heirloom")
	build := exec.Command("go", "build", "-o", heirloomBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build heirloom:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// freeAddr returns a loopback address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// sidecar is a running `heirloom serve` process.
type sidecar struct {
	cmd  *exec.Cmd
	url  string
	logs *syncBuffer
	done chan error
}

// syncBuffer is a bytes.Buffer safe for the process's writer and the test's reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}
func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

// baseEnv is a clean environment: a private HOME so no user config leaks in.
func baseEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
}

// startServe starts `heirloom serve` on a free port with dataDir and waits until /readyz answers.
func startServe(t *testing.T, dataDir string, env []string, args ...string) *sidecar {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(heirloomBin, append([]string{"serve", "--listen", addr, "--data-dir", dataDir}, args...)...)
	cmd.Env = env
	s := &sidecar{cmd: cmd, url: "http://" + addr, logs: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-s.done
	})
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-s.done:
			t.Fatalf("serve exited early: %v\n%s", err, s.logs)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("serve not ready in time\n%s", s.logs)
	return nil
}

func postHook(t *testing.T, url string, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url+"/hooks/claude-code", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func sessionStart(id, cwd string) string {
	return fmt.Sprintf(`{"session_id":%q,"transcript_path":"/nonexistent/%s.jsonl","cwd":%q,"hook_event_name":"SessionStart","source":"startup"}`, id, id, cwd)
}

// TestServeSurvivesSIGKILL writes sessions through the hook endpoint, kills serve with SIGKILL,
// and finds every acknowledged write after a restart.
func TestServeSurvivesSIGKILL(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	env := baseEnv(t)
	s := startServe(t, dataDir, env)

	const n = 40
	var acked []string
	for i := range n {
		id := fmt.Sprintf("5e550000-0000-4000-8000-%012d", i)
		status, body := postHook(t, s.url, sessionStart(id, t.TempDir()))
		if status != http.StatusOK {
			t.Fatalf("hook %s: got status %d (%s), want 200", id, status, body)
		}
		acked = append(acked, id)
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.done
	s.done <- nil // let the cleanup's receive return

	// The data dir must be 0700: it holds transcripts.
	if fi, err := os.Stat(dataDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("data dir mode: got %v (err %v), want 0700", fi.Mode().Perm(), err)
	}

	// Restarting serve must work on the same data dir after an unclean death.
	s2 := startServe(t, dataDir, env)
	if err := s2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-s2.done; err != nil {
		t.Fatalf("serve after SIGTERM: got %v, want clean exit\n%s", err, s2.logs)
	}
	s2.done <- nil

	store := kv.NewStore(dataDir)
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, id := range acked {
		sess, err := store.GetSession(t.Context(), "default", id)
		if err != nil {
			t.Fatalf("acknowledged session %s lost: %v", id, err)
		}
		if sess.Harness != "claude-code" || sess.Status != kv.StatusActive {
			t.Fatalf("session %s: got harness %q status %q", id, sess.Harness, sess.Status)
		}
	}
}

// TestServeSecondInstanceRefused: a second serve on the same data dir exits non-zero at once and
// names the data dir.
func TestServeSecondInstanceRefused(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	env := baseEnv(t)
	startServe(t, dataDir, env)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, heirloomBin, "serve", "--listen", freeAddr(t), "--data-dir", dataDir)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("second serve: got exit 0, want non-zero\n%s", out)
	}
	if ctx.Err() != nil {
		t.Fatalf("second serve did not exit at once")
	}
	if !strings.Contains(string(out), dataDir) || !strings.Contains(string(out), "another heirloom") {
		t.Fatalf("second serve message: got %q, want it to name %s and say another heirloom holds it", out, dataDir)
	}
}

// TestServeGracefulShutdown: SIGTERM lets an in-flight request finish and exits 0.
func TestServeGracefulShutdown(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	// Request lines are at debug (never an INFO line per hook).
	s := startServe(t, dataDir, baseEnv(t), "--log-format", "json", "--log-level", "debug")
	status, _ := postHook(t, s.url, sessionStart(sessionID, t.TempDir()))
	if status != http.StatusOK {
		t.Fatalf("got %d", status)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, s.logs)
		}
		s.done <- nil
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10s of SIGTERM")
	}
	// JSON logs: every line parses, and the hook request was logged with route and status.
	var sawHook bool
	sc := bufio.NewScanner(strings.NewReader(s.logs.String()))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		if line["route"] == "/hooks/claude-code" && line["status"] == float64(200) && line["method"] == "POST" && line["latency"] != nil {
			sawHook = true
		}
	}
	if !sawHook {
		t.Fatalf("no request log line for the hook in:\n%s", s.logs)
	}
}

// runShim runs `heirloom hook claude-code` with stdin and env, returning stdout, stderr, the exit
// code and how long it took.
func runShim(t *testing.T, stdin string, env []string) (string, string, int, time.Duration) {
	t.Helper()
	cmd := exec.Command(heirloomBin, "hook", "claude-code")
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	code := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code, elapsed
}

func TestShim(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		s := startServe(t, filepath.Join(t.TempDir(), "data"), baseEnv(t))
		env := append(baseEnv(t), "HEIRLOOM_URL="+s.url)
		big := strings.Repeat("x", 2<<20) // stdin is read to EOF whatever its size
		payload := fmt.Sprintf(`{"session_id":%q,"cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":%q}`, sessionID, big)
		stdout, stderr, code, _ := runShim(t, payload, env)
		if code != 0 || strings.TrimSpace(stdout) != "{}" || stderr != "" {
			t.Fatalf("got code %d stdout %q stderr %q, want 0, {}, no warning", code, stdout, stderr)
		}
	})
	t.Run("NothingListening", func(t *testing.T) {
		env := append(baseEnv(t), "HEIRLOOM_URL=http://"+freeAddr(t))
		stdout, stderr, code, elapsed := runShim(t, sessionStart("x", "/tmp"), env)
		if code != 0 || strings.TrimSpace(stdout) != "{}" {
			t.Fatalf("got code %d stdout %q, want 0 and {}", code, stdout)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "heirloom:") {
			t.Fatalf("stderr: got %q, want one warning line", stderr)
		}
		if elapsed > 5*time.Second {
			t.Fatalf("took %s with nothing listening", elapsed)
		}
	})
	t.Run("SlowSidecar", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})}
		go srv.Serve(ln)
		t.Cleanup(func() { close(release); srv.Close() })
		env := append(baseEnv(t), "HEIRLOOM_URL=http://"+ln.Addr().String(), "HEIRLOOM_HOOK_TIMEOUT=300ms")
		stdout, stderr, code, elapsed := runShim(t, sessionStart("x", "/tmp"), env)
		if code != 0 || strings.TrimSpace(stdout) != "{}" || stderr == "" {
			t.Fatalf("got code %d stdout %q stderr %q", code, stdout, stderr)
		}
		// The deadline is 300ms; allow generously for process start on a loaded machine.
		if elapsed > 3*time.Second {
			t.Fatalf("slow sidecar: took %s, want about the 300ms deadline", elapsed)
		}
	})
	t.Run("GarbageReply", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<html>not json</html>")
		})}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		env := append(baseEnv(t), "HEIRLOOM_URL=http://"+ln.Addr().String())
		stdout, stderr, code, _ := runShim(t, sessionStart("x", "/tmp"), env)
		if code != 0 || strings.TrimSpace(stdout) != "{}" || !strings.Contains(stderr, "not a JSON object") {
			t.Fatalf("got code %d stdout %q stderr %q", code, stdout, stderr)
		}
	})
	t.Run("ErrorStatus", func(t *testing.T) {
		s := startServe(t, filepath.Join(t.TempDir(), "data"), baseEnv(t))
		env := append(baseEnv(t), "HEIRLOOM_URL="+s.url)
		stdout, stderr, code, _ := runShim(t, "not json", env)
		if code != 0 || strings.TrimSpace(stdout) != "{}" || !strings.Contains(stderr, "400") {
			t.Fatalf("got code %d stdout %q stderr %q, want 0, {} and a warning naming 400", code, stdout, stderr)
		}
	})
}

// runHook runs `heirloom hook claude-code ARGS…` with stdin and env, returning stdout, stderr
// and the exit code.
func runHook(t *testing.T, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runCLIStdin(t, env, stdin, append([]string{"hook", "claude-code"}, args...)...)
}

// writeScript writes a /bin/sh script with body to a temp dir and returns its path.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestShimWrapsCommand: `heirloom hook claude-code -- CMD` against a real `heirloom serve` whose
// SubagentStart reply carries an inherited block, and against a sidecar that is down.
func TestShimWrapsCommand(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"), baseEnv(t))
	parent := func(event, extra string) string {
		return fmt.Sprintf(`{"session_id":%q,"transcript_path":"/nonexistent/P.jsonl","cwd":"/tmp","hook_event_name":%q%s}`, sessionID, event, extra)
	}
	for _, body := range []string{
		parent("SessionStart", `,"source":"startup"`),
		parent("UserPromptSubmit", `,"prompt":"Port the parser. MARK-4242. Never touch vendor/."`),
		parent("PreToolUse", `,"tool_name":"Agent","tool_use_id":"toolu_1","tool_input":{"description":"d","prompt":"Find callers","subagent_type":"Explore"}`),
	} {
		if status, reply := postHook(t, s.url, body); status != http.StatusOK {
			t.Fatalf("setup hook: got %d %s", status, reply)
		}
	}
	// A repeated SubagentStart gets the same reply, so every subtest may send it.
	subagentStart := parent("SubagentStart", `,"agent_id":"a1","agent_type":"Explore"`)
	_, ours := postHook(t, s.url, subagentStart)
	if !strings.Contains(ours, "MARK-4242") {
		t.Fatalf("serve's SubagentStart reply lacks the parent's objective: %s", ours)
	}
	env := append(baseEnv(t), "HEIRLOOM_URL="+s.url, "HEIRLOOM_HOOK_TIMEOUT=10s")

	t.Run("Merge", func(t *testing.T) {
		stdinCopy := filepath.Join(t.TempDir(), "stdin")
		cmd := writeScript(t, `cat > "$STDIN_COPY"
echo 'from the wrapped hook' >&2
echo '{"continue":true,"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"THEIRS-9"}}'`)
		stdout, stderr, code := runHook(t, subagentStart, append(env, "STDIN_COPY="+stdinCopy), "--", cmd)
		if code != 0 || stderr != "from the wrapped hook\n" {
			t.Fatalf("got code %d stderr %q, want 0 and the command's stderr alone", code, stderr)
		}
		var reply struct {
			Continue           bool `json:"continue"`
			HookSpecificOutput struct {
				HookEventName     string `json:"hookEventName"`
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(stdout), &reply); err != nil {
			t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
		}
		ctx := reply.HookSpecificOutput.AdditionalContext
		if !reply.Continue || reply.HookSpecificOutput.HookEventName != "SubagentStart" ||
			!strings.HasPrefix(ctx, "## Inherited from Parent Session\n") || !strings.Contains(ctx, "MARK-4242") ||
			!strings.HasSuffix(ctx, "\n\nTHEIRS-9") {
			t.Fatalf("merged reply: got %s; want heirloom's block first, then THEIRS-9, and continue kept", stdout)
		}
		if got, _ := os.ReadFile(stdinCopy); string(got) != subagentStart {
			t.Fatalf("the command's stdin: got %q, want the hook input %q", got, subagentStart)
		}
	})
	t.Run("Passive", func(t *testing.T) {
		// serve adds nothing at Stop: the command's output passes byte for byte.
		const out = "{ \"decision\" : \"approve\" }\n\n"
		stdout, stderr, code := runHook(t, parent("Stop", ""), append(env, "OUT="+out), "--", "sh", "-c", `printf '%s' "$OUT"`)
		if code != 0 || stdout != out || stderr != "" {
			t.Fatalf("got code %d stdout %q stderr %q, want 0, %q and nothing", code, stdout, stderr, out)
		}
	})
	t.Run("Block", func(t *testing.T) {
		stdout, stderr, code := runHook(t, subagentStart, env, "--", "sh", "-c", `printf '{"x":1}'; printf 'blocked: no network' >&2; exit 2`)
		if code != 2 || stdout != `{"x":1}` || stderr != "blocked: no network" {
			t.Fatalf("got code %d stdout %q stderr %q, want 2 and the command's output untouched", code, stdout, stderr)
		}
	})
	t.Run("Fails", func(t *testing.T) {
		for name, tt := range map[string]struct {
			env  []string
			cmd  string
			warn string
		}{
			"Exit1":   {nil, `echo '{"hookSpecificOutput":{}}'; exit 1`, "exited with code 1"},
			"Timeout": {[]string{"HEIRLOOM_UPSTREAM_TIMEOUT=300ms"}, `sleep 30`, "timed out after 300ms"},
			"Garbage": {nil, `echo '{"continue":tru'`, "not valid JSON"},
		} {
			t.Run(name, func(t *testing.T) {
				stdout, stderr, code := runHook(t, subagentStart, append(append([]string{}, env...), tt.env...), "--", "sh", "-c", tt.cmd)
				if code != 0 || stdout != ours+"\n" {
					t.Fatalf("got code %d stdout %q, want 0 and serve's reply alone", code, stdout)
				}
				if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.warn) {
					t.Fatalf("stderr: got %q, want one warning naming %q", stderr, tt.warn)
				}
			})
		}
	})
	t.Run("SidecarDown", func(t *testing.T) {
		down := append(baseEnv(t), "HEIRLOOM_URL=http://"+freeAddr(t), "HOOK_MARK=plain context 5")
		stdout, stderr, code := runHook(t, subagentStart, down, "--", "sh", "-c", `printf '%s\n' "$HOOK_MARK"`)
		if code != 0 || stdout != "plain context 5\n" {
			t.Fatalf("got code %d stdout %q, want 0 and the command's output byte for byte", code, stdout)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "unreachable") {
			t.Fatalf("stderr: got %q, want one warning", stderr)
		}
	})
	t.Run("NoCommand", func(t *testing.T) {
		stdout, stderr, code := runHook(t, subagentStart, env, "--")
		if code != 0 || stdout != "{}\n" || !strings.Contains(stderr, "usage") {
			t.Fatalf("got code %d stdout %q stderr %q, want 0, {} and a usage warning", code, stdout, stderr)
		}
	})
}

// TestShimWrapsCommandInParallel: the wrapped command waits for the sidecar to be called, and the
// sidecar stand-in waits for the command to start before it answers, so the hook completes
// without a timeout only if the shim runs the two at once.
func TestShimWrapsCommandInParallel(t *testing.T) {
	dir := t.TempDir()
	cmdStarted, sidecarCalled := filepath.Join(dir, "cmd-started"), filepath.Join(dir, "sidecar-called")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		os.WriteFile(sidecarCalled, nil, 0o600)
		for r.Context().Err() == nil {
			if _, err := os.Stat(cmdStarted); err == nil {
				io.WriteString(w, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"OURS"}}`)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	cmd := writeScript(t, `: > "$1"
while [ ! -e "$2" ]; do sleep 0.01; done
echo THEIRS`)
	env := append(baseEnv(t), "HEIRLOOM_URL=http://"+ln.Addr().String(), "HEIRLOOM_HOOK_TIMEOUT=10s", "HEIRLOOM_UPSTREAM_TIMEOUT=10s")
	stdout, stderr, code := runHook(t, sessionStart("par", "/tmp"), env, "--", cmd, cmdStarted, sidecarCalled)
	want := `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"OURS\n\nTHEIRS"}}`
	if code != 0 || stdout != want || stderr != "" {
		t.Fatalf("got code %d stdout %q stderr %q, want 0, %s and no warning", code, stdout, stderr, want)
	}
}

// TestConfigCommands: config show names origins; config example is accepted back as a config file;
// a bad config makes serve exit non-zero naming the key.
func TestConfigCommands(t *testing.T) {
	env := baseEnv(t)
	out, err := exec.Command(heirloomBin, "config", "example").Output()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, out, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(heirloomBin, "config", "show", "--config", file, "--log-level", "debug")
	cmd.Env = append(env, "HEIRLOOM_LISTEN=127.0.0.1:9999")
	show, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("config show: %v\n%s", err, show)
	}
	for _, want := range []string{"127.0.0.1:9999", "HEIRLOOM_LISTEN", "--log-level"} {
		if !strings.Contains(string(show), want) {
			t.Errorf("config show output lacks %q:\n%s", want, show)
		}
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("inherti:\n  enabled: true\n"), 0o600)
	cmd = exec.Command(heirloomBin, "serve", "--config", bad, "--listen", freeAddr(t), "--data-dir", t.TempDir())
	cmd.Env = env
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "inherti") || !strings.Contains(string(msg), bad) {
		t.Fatalf("serve with unknown key: got err %v, output %q; want non-zero naming the key and file", err, msg)
	}
}

// TestReleaseBuild: scripts/release builds both binaries for this platform, stamped with the
// version it is given.
func TestReleaseBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	dir := t.TempDir()
	cmd := exec.Command("./scripts/release", "v1.2.3-test")
	cmd.Env = append(os.Environ(), "RELEASE_DIR="+dir, "RELEASE_TARGETS="+runtime.GOOS+"/"+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, runtime.GOOS+"-"+runtime.GOARCH)
	out, err := exec.Command(filepath.Join(bin, "heirloom"), "version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "heirloom v1.2.3-test" {
		t.Errorf("the release build says %q (%v), want heirloom v1.2.3-test", out, err)
	}
	if _, err := os.Stat(filepath.Join(bin, "heirloom-hook")); err != nil {
		t.Errorf("no heirloom-hook in the release: %v", err)
	}
}
