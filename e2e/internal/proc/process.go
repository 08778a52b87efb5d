package proc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// tailSize is how much of its output a process keeps: the last MiB.
const tailSize = 1 << 20

// process is a started long-running command, a harness server, with its
// output read line by line. startProcess starts it; stop or kill end it. A
// nil *process (nothing started) has no logs, and stop and kill do nothing
// on it.
type process struct {
	cmd    *exec.Cmd
	out    *tail
	exited chan struct{} // closed once cmd has been waited for and its output read
}

// startProcess starts cmd, made by exec.CommandContext and without Stdout
// or Stderr, as the leader of a process group of its own (StartGroup), and
// reads its stdout and stderr, merged, line by line: each line is kept in
// the process's logs and, when onLine is not nil, passed to onLine (from
// one goroutine, in order). A line over tailSize ends the reading; the rest
// is drained.
func startProcess(cmd *exec.Cmd, onLine func(line string)) (*process, error) {
	StartGroup(cmd)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	p := &process{cmd: cmd, out: newTail(tailSize), exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		pw.Close() // ends the reader below, which then closes exited
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, tailSize)
		for sc.Scan() {
			p.out.writeLine(sc.Text())
			if onLine != nil {
				onLine(sc.Text())
			}
		}
		_, _ = io.Copy(io.Discard, pr) // an over-long line: keep draining
		close(p.exited)
	}()
	return p, nil
}

// logs returns the last tailSize bytes of the process's output.
func (p *process) logs() string {
	if p == nil {
		return ""
	}
	return p.out.String()
}

// stop asks the process group to exit (TerminateGroup) and waits for the
// process at most grace, then kills what is left (kill). On a process that
// has exited it only kills what that left behind. Safe to call twice.
func (p *process) stop(grace time.Duration) {
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
	p.kill()
}

// kill kills the process group at once, as a crash would, and waits for the
// process. Safe to call twice and after stop.
func (p *process) kill() {
	if p == nil {
		return
	}
	KillGroup(p.cmd)
	<-p.exited
}

// waitReady calls ready until it returns nil, waiting after each failed
// call, first 100 ms and twice as long each time up to a second; the ctx
// each call gets ends at deadline. waitReady returns an error saying so
// when the process exits first, ctx's cause when ctx ends, and ready's last
// error once deadline has passed.
func (p *process) waitReady(ctx context.Context, deadline time.Time, ready func(context.Context) error) error {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		rctx, cancel := context.WithDeadline(ctx, deadline)
		err := ready(rctx)
		cancel()
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
