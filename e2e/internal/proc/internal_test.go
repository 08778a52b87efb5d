package proc

import (
	"context"
	"errors"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTail(t *testing.T) {
	tl := newTail(10)
	for _, l := range []string{"aaaa", "bbbb", "cccc"} {
		tl.writeLine(l)
	}
	if got := tl.String(); got != "bbbb\ncccc\n" {
		t.Errorf("got %q", got)
	}
	if (*tail)(nil).String() != "" {
		t.Error("nil tail")
	}
	tl = newTail(2)
	tl.writeLine("longer than the limit")
	if got := tl.String(); got != "longer than the limit\n" {
		t.Errorf("newest line dropped: got %q", got)
	}
}

func TestStartOnPort(t *testing.T) {
	deadline := time.Now().Add(time.Minute)
	t.Run("FreePort", func(t *testing.T) {
		var ports []int
		err := startOnPort(t, t.Context(), "test", 0, deadline, func(port int) error {
			ports = append(ports, port)
			return &portTakenError{port: port}
		})
		var taken *portTakenError
		if !errors.As(err, &taken) || len(ports) != freePortAttempts || slices.Contains(ports, 0) {
			t.Errorf("got %v after ports %v, want a portTakenError after %d free ports", err, ports, freePortAttempts)
		}
	})
	t.Run("FixedPort", func(t *testing.T) {
		var ports []int
		err := startOnPort(t, t.Context(), "test", 4242, deadline, func(port int) error {
			ports = append(ports, port)
			if len(ports) < 2 {
				return &portTakenError{port: port}
			}
			return nil
		})
		if err != nil || !slices.Equal(ports, []int{4242, 4242}) {
			t.Errorf("got %v after ports %v, want success on the same port", err, ports)
		}
	})
	t.Run("FixedPortDeadline", func(t *testing.T) {
		calls := 0
		err := startOnPort(t, t.Context(), "test", 4242, time.Now(), func(port int) error {
			calls++
			return &portTakenError{port: port}
		})
		if err == nil || calls != 1 {
			t.Errorf("got %v after %d calls, want an error after 1 past the deadline", err, calls)
		}
	})
	t.Run("OtherError", func(t *testing.T) {
		calls := 0
		boom := errors.New("boom")
		err := startOnPort(t, t.Context(), "test", 0, deadline, func(int) error { calls++; return boom })
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
		p, err := startProcess(exec.CommandContext(t.Context(), "/bin/sh", "-c", "echo one; echo two >&2; exit 3"), func(l string) { lines = append(lines, l) })
		if err != nil {
			t.Fatal(err)
		}
		<-p.exited
		if got := p.logs(); !strings.Contains(got, "one\n") || !strings.Contains(got, "two\n") || len(lines) != 2 {
			t.Errorf("logs %q, lines %q", got, lines)
		}
		err = p.waitReady(t.Context(), time.Now().Add(time.Minute), func(context.Context) error { return errors.New("not yet") })
		if err == nil || !strings.Contains(err.Error(), "exited while starting (exit status 3)") {
			t.Errorf("waitReady on an exited process: %v", err)
		}
		p.stop(time.Second)
		p.kill()
	})
	t.Run("NotReady", func(t *testing.T) {
		p, err := startProcess(exec.CommandContext(t.Context(), "/bin/sh", "-c", "sleep 60"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer p.kill()
		err = p.waitReady(t.Context(), time.Now().Add(300*time.Millisecond), func(context.Context) error { return errors.New("not yet") })
		if err == nil || !strings.Contains(err.Error(), "not ready before the start timeout: not yet") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("StopGroup", func(t *testing.T) {
		// The child sleeps on after its parent: stop must end both.
		p, err := startProcess(exec.CommandContext(t.Context(), "/bin/sh", "-c", "sleep 60 & echo started; wait"), nil)
		if err != nil {
			t.Fatal(err)
		}
		ready := func(context.Context) error {
			if !strings.Contains(p.logs(), "started") {
				return errors.New("no output yet")
			}
			return nil
		}
		if err := p.waitReady(t.Context(), time.Now().Add(10*time.Second), ready); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { p.stop(5 * time.Second); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("stop did not end the process group")
		}
		p.stop(time.Second)
	})
	t.Run("Nil", func(t *testing.T) {
		var p *process
		p.stop(time.Second)
		p.kill()
		if p.logs() != "" {
			t.Error("nil process has logs")
		}
	})
	t.Run("StartError", func(t *testing.T) {
		if _, err := startProcess(exec.CommandContext(t.Context(), "/nonexistent/binary"), nil); err == nil {
			t.Error("got no error")
		}
	})
}
