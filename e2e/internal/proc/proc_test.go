package proc_test

import (
	"context"
	"errors"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/internal/proc"
)

func TestTail(t *testing.T) {
	tl := proc.NewTail(10)
	for _, l := range []string{"aaaa", "bbbb", "cccc"} {
		tl.WriteLine(l)
	}
	if got := tl.String(); got != "bbbb\ncccc\n" {
		t.Errorf("got %q", got)
	}
	if (*proc.Tail)(nil).String() != "" {
		t.Error("nil tail")
	}
	tl = proc.NewTail(2)
	tl.WriteLine("longer than the limit")
	if got := tl.String(); got != "longer than the limit\n" {
		t.Errorf("newest line dropped: got %q", got)
	}
}

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

func TestStartOnPort(t *testing.T) {
	deadline := time.Now().Add(time.Minute)
	t.Run("FreePort", func(t *testing.T) {
		var ports []int
		err := proc.StartOnPort(t, t.Context(), "test", 0, deadline, func(port int) error {
			ports = append(ports, port)
			return &proc.PortTakenError{Port: port}
		})
		var taken *proc.PortTakenError
		if !errors.As(err, &taken) || len(ports) != 3 || slices.Contains(ports, 0) {
			t.Errorf("got %v after ports %v, want a PortTakenError after 3 free ports", err, ports)
		}
	})
	t.Run("FixedPort", func(t *testing.T) {
		var ports []int
		err := proc.StartOnPort(t, t.Context(), "test", 4242, deadline, func(port int) error {
			ports = append(ports, port)
			if len(ports) < 2 {
				return &proc.PortTakenError{Port: port}
			}
			return nil
		})
		if err != nil || !slices.Equal(ports, []int{4242, 4242}) {
			t.Errorf("got %v after ports %v, want success on the same port", err, ports)
		}
	})
	t.Run("OtherError", func(t *testing.T) {
		calls := 0
		boom := errors.New("boom")
		err := proc.StartOnPort(t, t.Context(), "test", 0, deadline, func(int) error { calls++; return boom })
		if !errors.Is(err, boom) || calls != 1 {
			t.Errorf("got %v after %d calls, want boom after 1", err, calls)
		}
	})
}

func TestProcess(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs /bin/sh")
	}
	t.Run("LinesAndExit", func(t *testing.T) {
		var lines []string
		p, err := proc.Start(exec.CommandContext(t.Context(), "/bin/sh", "-c", "echo one; echo two >&2; exit 3"), func(l string) { lines = append(lines, l) })
		if err != nil {
			t.Fatal(err)
		}
		<-p.Exited()
		if got := p.Logs(); !strings.Contains(got, "one\n") || !strings.Contains(got, "two\n") || len(lines) != 2 {
			t.Errorf("logs %q, lines %q", got, lines)
		}
		if st := p.State(); st == nil || st.ExitCode() != 3 {
			t.Errorf("state %v, want exit status 3", st)
		}
		err = p.WaitReady(t.Context(), time.Now().Add(time.Minute), func(context.Context) error { return errors.New("not yet") })
		if err == nil || !strings.Contains(err.Error(), "exited while starting") {
			t.Errorf("WaitReady on an exited process: %v", err)
		}
		p.Stop(time.Second)
		p.Kill()
	})
	t.Run("StopGroup", func(t *testing.T) {
		// The child sleeps on after its parent: Stop must end both.
		p, err := proc.Start(exec.CommandContext(t.Context(), "/bin/sh", "-c", "sleep 60 & echo started; wait"), nil)
		if err != nil {
			t.Fatal(err)
		}
		ready := func(context.Context) error {
			if !strings.Contains(p.Logs(), "started") {
				return errors.New("no output yet")
			}
			return nil
		}
		if err := p.WaitReady(t.Context(), time.Now().Add(10*time.Second), ready); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { p.Stop(5 * time.Second); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Stop did not end the process group")
		}
		p.Stop(time.Second)
	})
	t.Run("Nil", func(t *testing.T) {
		var p *proc.Process
		p.Stop(time.Second)
		p.Kill()
		if p.Logs() != "" {
			t.Error("nil process has logs")
		}
	})
	t.Run("StartError", func(t *testing.T) {
		if _, err := proc.Start(exec.CommandContext(t.Context(), "/nonexistent/binary"), nil); err == nil {
			t.Error("got no error")
		}
	})
}
