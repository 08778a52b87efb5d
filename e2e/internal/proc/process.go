package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TailSize is how much of its output a Process keeps: the last MiB.
const TailSize = 1 << 20

// Process is a started long-running command, a harness server, with its
// output read line by line. Start starts it; Stop or Kill end it. A nil
// *Process (nothing started) has no logs, and Stop and Kill do nothing on
// it.
type Process struct {
	cmd    *exec.Cmd
	out    *Tail
	exited chan struct{} // closed once cmd has been waited for and its output read
}

// Start starts cmd, made by exec.CommandContext and without Stdout or
// Stderr, as the leader of a process group of its own (StartGroup), and
// reads its stdout and stderr, merged, line by line: each line is kept in
// the process's Logs and, when onLine is not nil, passed to onLine (from
// one goroutine, in order). A line over TailSize ends the reading; the rest
// is drained.
func Start(cmd *exec.Cmd, onLine func(line string)) (*Process, error) {
	StartGroup(cmd)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	p := &Process{cmd: cmd, out: NewTail(TailSize), exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		pw.Close() // ends the reader below, which then closes exited
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, TailSize)
		for sc.Scan() {
			p.out.WriteLine(sc.Text())
			if onLine != nil {
				onLine(sc.Text())
			}
		}
		_, _ = io.Copy(io.Discard, pr) // an over-long line: keep draining
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed once the process has exited and its output is read.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// State returns the process's exit state: nil until Exited is closed.
func (p *Process) State() *os.ProcessState {
	select {
	case <-p.exited:
		return p.cmd.ProcessState
	default:
		return nil
	}
}

// Logs returns the last TailSize bytes of the process's output.
func (p *Process) Logs() string {
	if p == nil {
		return ""
	}
	return p.out.String()
}

// Stop asks the process group to exit (TerminateGroup) and waits for the
// process at most grace, then kills what is left (Kill). On a process that
// has exited it only kills what that left behind. Safe to call twice.
func (p *Process) Stop(grace time.Duration) {
	if p == nil {
		return
	}
	select {
	case <-p.exited:
	default:
		TerminateGroup(p.cmd)
		select {
		case <-p.exited:
		case <-time.After(grace):
		}
	}
	p.Kill()
}

// Kill kills the process group at once, as a crash would, and waits for the
// process. Safe to call twice and after Stop.
func (p *Process) Kill() {
	if p == nil {
		return
	}
	KillGroup(p.cmd)
	<-p.exited
}

// WaitReady calls ready until it returns nil, waiting after each failed
// call, first 100 ms and twice as long each time up to a second. ready
// bounds its own call (ctx ends only with WaitReady's). WaitReady returns an
// error saying so when the process exits first, ctx's cause when ctx ends,
// and ready's last error once deadline has passed.
func (p *Process) WaitReady(ctx context.Context, deadline time.Time, ready func(context.Context) error) error {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("exited while starting (%v); last error: %w", p.cmd.ProcessState, err)
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(wait):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready before the start timeout: %w", err)
		}
	}
}

// Attempts of StartOnPort: on a new free port, and on a fixed port that is
// taken (a killed server's may take a moment to free), how often and how far
// apart.
const (
	freePortAttempts  = 3
	fixedPortAttempts = 10
	fixedPortRetry    = 500 * time.Millisecond
)

// StartOnPort calls start with port, or with a free one (FreePort) when port
// is 0, until start succeeds. A start that fails with a *PortTakenError is
// tried again: on a new free port, three attempts in all; on a fixed port,
// the same port every half second while deadline has not passed, ten
// attempts in all, never another. Each retry is logged to tb as "name:
// error; retrying ...". StartOnPort returns start's last error, or ctx's
// cause when ctx ends while it waits.
func StartOnPort(tb testing.TB, ctx context.Context, name string, port int, deadline time.Time, start func(port int) error) error {
	for attempt := 1; ; attempt++ {
		p := port
		if p == 0 {
			var err error
			if p, err = FreePort(); err != nil {
				return err
			}
		}
		err := start(p)
		var taken *PortTakenError
		switch {
		case err == nil || !errors.As(err, &taken):
			return err
		case port == 0 && attempt < freePortAttempts:
			tb.Logf("%s: %v; retrying on another port", name, err)
		case port != 0 && attempt < fixedPortAttempts && time.Now().Before(deadline):
			tb.Logf("%s: %v; retrying on the same port", name, err)
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(fixedPortRetry):
			}
		default:
			return err
		}
	}
}
