package proc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/internal/proc"
)

func TestEnviron(t *testing.T) {
	env := map[string]string{"B": "2", "A": "1", "GONE": "x"}
	proc.Override(env, map[string]string{"GONE": "", "C": "3", "A": "one"})
	if got, want := proc.Environ(env), []string{"A=one", "B=2", "C=3"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	proc.SetProxy(env, "http://127.0.0.1:1")
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"} {
		if env[k] != "http://127.0.0.1:1" {
			t.Errorf("%s = %q", k, env[k])
		}
	}
	if env["NO_PROXY"] != proc.Loopback || env["no_proxy"] != proc.Loopback {
		t.Errorf("NO_PROXY %q, no_proxy %q", env["NO_PROXY"], env["no_proxy"])
	}
}

func TestProxyFor(t *testing.T) {
	if got, err := proc.ProxyFor("http://127.0.0.1:8080/v1"); err != nil || got != "http://127.0.0.1:8080" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := proc.ProxyFor("/v1"); err == nil {
		t.Error("a URL without a host: got no error")
	}
}

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "dir", "c.json")
	if err := proc.WriteJSON(path, map[string]int{"a": 1}, 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "{\n  \"a\": 1\n}\n" {
		t.Errorf("got %q (%v)", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600", fi.Mode(), err)
	}
}

// httpLaunch is a Launch of a one-line shell "server" that prints
// "listening" and then waits; Ready asks whether it printed that.
func httpLaunch(t *testing.T, s *proc.Server, script string) proc.Launch {
	return proc.Launch{
		Name:    "test server",
		Timeout: 10 * time.Second,
		Grace:   5 * time.Second,
		Command: func(port int) *exec.Cmd {
			return exec.CommandContext(t.Context(), "/bin/sh", "-c", script, "sh", strconv.Itoa(port))
		},
		Ready: func(context.Context) error {
			if !strings.Contains(s.Logs(), "listening") {
				return errors.New("not listening yet")
			}
			return nil
		},
		PortTaken: func(logs string) bool { return strings.Contains(logs, "EADDRINUSE") },
	}
}

func TestServer(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs /bin/sh")
	}
	t.Run("NotStarted", func(t *testing.T) {
		var s proc.Server
		s.Close()
		s.Kill()
		if s.Port() != 0 || s.Logs() != "" {
			t.Errorf("port %d, logs %q", s.Port(), s.Logs())
		}
	})
	t.Run("StartStopRestart", func(t *testing.T) {
		var s proc.Server
		var lines []string
		l := httpLaunch(t, &s, `echo "listening on $1"; exec sleep 60`)
		l.OnLine = func(line string) { lines = append(lines, line) }
		if took := s.Start(t, t.Context(), l); took <= 0 {
			t.Errorf("took %v", took)
		}
		port := s.Port()
		if want := fmt.Sprintf("listening on %d\n", port); port == 0 || s.Logs() != want || s.URL() != fmt.Sprintf("http://127.0.0.1:%d", port) {
			t.Errorf("port %d, logs %q, URL %s", port, s.Logs(), s.URL())
		}
		s.Kill()
		s.Close()
		if len(lines) != 1 { // read once the process has exited
			t.Errorf("OnLine saw %q", lines)
		}
		l.Port = port
		s.Start(t, t.Context(), l)
		if s.Port() != port {
			t.Errorf("restart on port %d, want %d", s.Port(), port)
		}
		s.Close()
		s.Close()
	})
	t.Run("PortTaken", func(t *testing.T) {
		var s proc.Server
		// The first attempt finds its port taken, the second listens.
		mark := filepath.Join(t.TempDir(), "tried")
		script := fmt.Sprintf(`if [ -e %[1]s ]; then echo listening; exec sleep 60; fi; touch %[1]s; echo EADDRINUSE; exit 1`, mark)
		s.Start(t, t.Context(), httpLaunch(t, &s, script))
		if !strings.Contains(s.Logs(), "listening") {
			t.Errorf("logs %q", s.Logs())
		}
	})
	t.Run("Fails", func(t *testing.T) {
		var s proc.Server
		tb := &fatalRecorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.Start(tb, t.Context(), httpLaunch(t, &s, `echo broken; exit 1`))
		}()
		<-done
		if !strings.Contains(tb.fatal, "exited while starting") || !strings.Contains(tb.fatal, "output:\nbroken\n") {
			t.Errorf("Start failed with %q, want the exit and the output", tb.fatal)
		}
	})
}

// fatalRecorder is a testing.TB whose Fatalf records the message and ends
// the goroutine without failing the test.
type fatalRecorder struct {
	testing.TB
	fatal string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
