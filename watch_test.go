package main_test

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// watchProc is a running `heirloom watch`.
type watchProc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan error
}

// startWatch starts `heirloom watch args…` with env; it is killed at the end of the test unless
// it exited.
func startWatch(t *testing.T, env []string, args ...string) *watchProc {
	t.Helper()
	w := &watchProc{cmd: exec.Command(heirloomBin, append([]string{"watch"}, args...)...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	w.cmd.Env = env
	w.cmd.Stdout, w.cmd.Stderr = w.stdout, w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.done <- w.cmd.Wait() }()
	t.Cleanup(func() {
		_ = w.cmd.Process.Kill()
		<-w.done
		w.done <- nil
	})
	return w
}

// await waits until out matches pattern, failing t after 20s or when watch exits first.
func (w *watchProc) await(t *testing.T, out *syncBuffer, pattern string) {
	t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(20 * time.Second)
	for !re.MatchString(out.String()) {
		select {
		case err := <-w.done:
			w.done <- err
			t.Fatalf("watch exited (%v) before printing %q\nstdout:\n%s\nstderr:\n%s", err, pattern, w.stdout, w.stderr)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch did not print %q\nstdout:\n%s\nstderr:\n%s", pattern, w.stdout, w.stderr)
		}
	}
}

// interrupt sends Ctrl-C's signal and fails t unless watch exits 0 within 3s.
func (w *watchProc) interrupt(t *testing.T) {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-w.done:
		w.done <- err
		if err != nil {
			t.Errorf("watch after Ctrl-C: %v, want exit 0\nstderr:\n%s", err, w.stderr)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("watch did not exit within 3s of Ctrl-C")
	}
}

// Two sessions a watch tells apart, by their short ids a1a1a1a1 and b2b2b2b2.
const (
	w1 = "a1a1a1a1-0000-4000-8000-000000000001"
	w2 = "b2b2b2b2-0000-4000-8000-000000000002"
)

// TestWatchCommand follows a real sidecar's feed while hooks arrive: readable lines, the JSON
// messages of one type, the events of one session; Ctrl-C ends each cleanly.
func TestWatchCommand(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"), baseEnv(t))
	env := append(baseEnv(t), "HEIRLOOM_URL="+s.url)
	readable := startWatch(t, env)
	asJSON := startWatch(t, env, "--json", "--type", "session.ended")
	one := startWatch(t, env, "--session", w2, "--type=session.started,session.ended")
	for _, w := range []*watchProc{readable, asJSON, one} {
		w.await(t, w.stderr, `heirloom watch: following `+regexp.QuoteMeta(s.url)+` \(Ctrl-C to stop\)`)
	}
	for _, body := range []string{
		sessionStart(w1, "/tmp"),
		sessionStart(w2, "/tmp"),
		`{"session_id":"` + w1 + `","cwd":"/tmp","hook_event_name":"SessionEnd","reason":"exit"}`,
	} {
		if status, reply := postHook(t, s.url, body); status != http.StatusOK {
			t.Fatalf("hook: %d %s", status, reply)
		}
	}

	t.Run("Readable", func(t *testing.T) {
		readable.await(t, readable.stdout, `(?m)^\d\d:\d\d:\d\d  session.ended       a1a1a1a1 +status=ended$`)
		for _, want := range []string{
			`(?m)^\d\d:\d\d:\d\d  session.started     a1a1a1a1 +harness=claude-code project=/tmp$`,
			`(?m)^\d\d:\d\d:\d\d  session.started     b2b2b2b2 +harness=claude-code project=/tmp$`,
		} {
			if !regexp.MustCompile(want).MatchString(readable.stdout.String()) {
				t.Errorf("no line matching %s in\n%s", want, readable.stdout)
			}
		}
	})
	t.Run("JSON", func(t *testing.T) {
		asJSON.await(t, asJSON.stdout, `"session.ended"`)
		lines := strings.Split(strings.TrimSpace(asJSON.stdout.String()), "\n")
		if len(lines) != 1 {
			t.Fatalf("got %d lines, want the one session.ended:\n%s", len(lines), asJSON.stdout)
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil {
			t.Fatalf("not JSON: %q", lines[0])
		}
		if ev["type"] != "session.ended" || ev["session"] != w1 || ev["scope"] != "default" || ev["time"] == nil {
			t.Errorf("got %v", ev)
		}
	})
	t.Run("Session", func(t *testing.T) {
		one.await(t, one.stdout, `session.started +b2b2b2b2`)
		postHook(t, s.url, `{"session_id":"`+w2+`","cwd":"/tmp","hook_event_name":"SessionEnd","reason":"exit"}`)
		one.await(t, one.stdout, `session.ended +b2b2b2b2`)
		if strings.Contains(one.stdout.String(), "a1a1a1a1") {
			t.Errorf("the watcher of w-2 printed w-1's events:\n%s", one.stdout)
		}
	})
	for _, w := range []*watchProc{readable, asJSON, one} {
		w.interrupt(t)
		if got := w.stderr.String(); strings.Contains(got, "heirloom:") {
			t.Errorf("stderr after Ctrl-C: %s", got)
		}
	}
}

// TestWatchErrors: watch says what is wrong and exits when it cannot follow a feed at all.
func TestWatchErrors(t *testing.T) {
	t.Run("ErrNoSidecar", func(t *testing.T) {
		start := time.Now()
		_, stderr, code := runCLI(t, append(baseEnv(t), "HEIRLOOM_URL=http://"+freeAddr(t)), "watch")
		if code != 1 || !strings.Contains(stderr, "no heirloom at http://") || !strings.Contains(stderr, "start it with `heirloom serve`") {
			t.Errorf("exit %d, stderr %q; want 1 and no heirloom at …: start it", code, stderr)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("ErrUnknownType", func(t *testing.T) {
		_, stderr, code := runCLI(t, baseEnv(t), "watch", "--type", "run.started,run.exploded")
		if code != 2 || !strings.Contains(stderr, `unknown event type "run.exploded"`) {
			t.Errorf("exit %d, stderr %q; want 2 naming the type", code, stderr)
		}
	})
	t.Run("ErrToken", func(t *testing.T) {
		s := startServe(t, filepath.Join(t.TempDir(), "data"), append(baseEnv(t), "HEIRLOOM_TOKEN=sekret"))
		_, stderr, code := runCLI(t, append(baseEnv(t), "HEIRLOOM_URL="+s.url), "watch")
		if code != 1 || !strings.Contains(stderr, "set HEIRLOOM_TOKEN") {
			t.Errorf("exit %d, stderr %q; want 1 and the hint to set HEIRLOOM_TOKEN", code, stderr)
		}
	})
}

// TestWatchReconnects: watch outlives a sidecar restart, saying that it lost the sidecar and
// that it is back, and goes on printing.
func TestWatchReconnects(t *testing.T) {
	addr, dataDir, env := freeAddr(t), filepath.Join(t.TempDir(), "data"), baseEnv(t)
	first := serveAt(t, addr, dataDir, env)
	w := startWatch(t, append(baseEnv(t), "HEIRLOOM_URL=http://"+addr))
	w.await(t, w.stderr, `following http://`)
	postHook(t, "http://"+addr, sessionStart("bef0bef0-0000-4000-8000-000000000003", "/tmp"))
	w.await(t, w.stdout, `session.started +bef0bef0`)

	if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-first.done
	first.done <- nil
	w.await(t, w.stderr, `heirloom watch: heirloom at http://`+regexp.QuoteMeta(addr)+` is shutting down; reconnecting…`)
	time.Sleep(300 * time.Millisecond) // a reconnect or two fails meanwhile, quietly
	serveAt(t, addr, dataDir, env)
	w.await(t, w.stderr, `heirloom watch: reconnected to http://`+regexp.QuoteMeta(addr))
	postHook(t, "http://"+addr, sessionStart("af7eaf7e-0000-4000-8000-000000000004", "/tmp"))
	w.await(t, w.stdout, `session.started +af7eaf7e`)
	if n := strings.Count(w.stderr.String(), "reconnecting"); n != 1 {
		t.Errorf("said %d times that it was reconnecting, want once per outage:\n%s", n, w.stderr)
	}
	w.interrupt(t)
}

// serveAt starts `heirloom serve` on addr with dataDir, as startServe does on a free address,
// so that a test can restart it where its clients look.
func serveAt(t *testing.T, addr, dataDir string, env []string) *sidecar {
	t.Helper()
	cmd := exec.Command(heirloomBin, "serve", "--listen", addr, "--data-dir", dataDir)
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
		if resp, err := http.Get(s.url + "/readyz"); err == nil {
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
	t.Fatalf("serve on %s not ready in time\n%s", addr, s.logs)
	return nil
}
