package hookshim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/inject/heading"
)

// pipeGrace is how long the shim keeps reading a wrapped command's stdout and stderr after the
// command exited or was killed: a child it left behind may hold them open, and the hook must not
// wait on it.
const pipeGrace = 200 * time.Millisecond

// upstreamRun is the outcome of one run of the wrapped command.
type upstreamRun struct {
	// stdout is what the command printed, at most claudecode.MaxUpstreamBytes.
	stdout []byte
	// code is the command's exit code; meaningful when err is nil.
	code int
	// err says why the command's reply is unusable: it could not start, was killed, timed out,
	// printed too much. Nil when it exited by itself.
	err error
}

// runWrapped is Run with a wrapped command: see Run for the contract.
func (s *Shim) runWrapped(ctx context.Context, harness string) int {
	cmdCtx, cancelCmd := context.WithTimeout(ctx, s.commandTimeout())
	defer cancelCmd()
	relayCtx, cancelRelay := context.WithTimeout(ctx, s.timeout())
	defer cancelRelay()

	// The command would have waited on stdin itself, so reading it is bounded by the command's
	// timeout; the sidecar call keeps its own bound, counted from the start.
	body, err := readAllCtx(cmdCtx, s.Stdin)
	if err != nil {
		s.warnf("read hook input: %v; not running %s; replying %s", err, s.commandName(), emptyReply)
		s.writeReply([]byte(emptyReply))
		return 0
	}

	type relayed struct {
		reply []byte
		err   error
	}
	sidecar := make(chan relayed, 1)
	go func() {
		reply, err := s.post(relayCtx, harness, body)
		sidecar <- relayed{reply, err}
	}()
	up := s.runCommand(cmdCtx, body)
	ours := <-sidecar

	if up.err == nil && up.code == 2 {
		// A block: stdout and stderr are the command's alone (Claude Code feeds stderr to the
		// model), and the exit code carries the decision.
		_, _ = s.Stdout.Write(up.stdout)
		return 2
	}
	reply, alone := ours.reply, "with heirloom's reply alone"
	if ours.err != nil {
		s.warnf("%v; adding no context", ours.err)
		reply, alone = []byte(emptyReply), emptyReply
	}
	if up.err == nil && up.code != 0 {
		up.err = fmt.Errorf("exited with code %d", up.code)
	}
	if up.err != nil {
		s.warnf("wrapped command %s %v; replying %s", s.commandName(), up.err, alone)
		s.writeReply(reply)
		return 0
	}
	event, answer := claudecode.HookEventName(body), claudecode.ReplyAnswer(reply)
	merged, err := claudecode.Merge(event, answer, up.stdout, s.maxContextChars(), heading.Priority())
	if err != nil {
		s.warnf("wrapped command %s: %v; replying %s", s.commandName(), err, alone)
		s.writeReply(reply)
		return 0
	}
	_, _ = s.Stdout.Write(merged)
	return 0
}

// runCommand runs the wrapped command with stdin as its input, under ctx, and collects its
// stdout; its stderr is copied to the shim's as it is written. The command runs in a process
// group of its own, killed whole when ctx ends or stdout grows past claudecode.MaxUpstreamBytes,
// and the shim stops reading its pipes pipeGrace after it exits, whoever still holds them.
func (s *Shim) runCommand(ctx context.Context, stdin []byte) upstreamRun {
	ctx, kill := context.WithCancel(ctx)
	defer kill()
	out := &cappedBuffer{max: claudecode.MaxUpstreamBytes, full: kill}
	cmd := exec.CommandContext(ctx, s.Command[0], s.Command[1:]...)
	cmd.Env = s.Env
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = out
	// Not the *os.File itself: exec would hand the file to the command, and a child the command
	// leaves behind could then hold the harness's stderr open after the shim exits.
	cmd.Stderr = pipedWriter{s.Stderr}
	cmd.WaitDelay = pipeGrace
	killProcessGroup(cmd)

	// The outcome is read from ProcessState: ErrWaitDelay alone (pipes held open past the
	// command's exit) is no failure.
	err := cmd.Run()
	state := cmd.ProcessState
	stdout := out.Bytes()
	switch {
	case state == nil:
		return upstreamRun{err: fmt.Errorf("did not start: %w", err)}
	case state.Exited() && state.ExitCode() == 2:
		return upstreamRun{stdout: stdout, code: 2}
	case out.Overflowed():
		return upstreamRun{err: fmt.Errorf("printed over %d bytes on stdout", claudecode.MaxUpstreamBytes)}
	case state.Exited():
		return upstreamRun{stdout: stdout, code: state.ExitCode()}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return upstreamRun{err: fmt.Errorf("timed out after %s", s.commandTimeout())}
	case ctx.Err() != nil:
		return upstreamRun{err: fmt.Errorf("was stopped: %w", context.Cause(ctx))}
	default:
		return upstreamRun{err: fmt.Errorf("was killed (%s)", state)}
	}
}

// commandName names the wrapped command in warnings.
func (s *Shim) commandName() string {
	return fmt.Sprintf("%q", s.Command[0])
}

// commandTimeout returns the bound of the wrapped command.
func (s *Shim) commandTimeout() time.Duration {
	if s.CommandTimeout <= 0 {
		return DefaultCommandTimeout
	}
	return s.CommandTimeout
}

// maxContextChars returns the cap of a merged additionalContext.
func (s *Shim) maxContextChars() int {
	if s.MaxContextChars <= 0 {
		return claudecode.DefaultMaxContextChars
	}
	return s.MaxContextChars
}

// cappedBuffer keeps the first max bytes written to it and discards the rest, calling full once
// when the first byte past max arrives. It is safe for one writer and later readers.
type cappedBuffer struct {
	max  int
	full func()

	mu   sync.Mutex
	buf  bytes.Buffer
	over bool
}

// Write keeps what fits and reports all of p written, so the writer is never failed.
func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); len(p) > room {
		b.buf.Write(p[:max(room, 0)])
		if !b.over {
			b.over = true
			b.full()
		}
		return len(p), nil
	}
	b.buf.Write(p)
	return len(p), nil
}

// Bytes returns what was kept.
func (b *cappedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes()
}

// Overflowed reports whether more than max bytes were written.
func (b *cappedBuffer) Overflowed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.over
}

// pipedWriter hides the concrete type of a writer, so exec copies a command's output through a
// pipe instead of passing an *os.File down.
type pipedWriter struct{ w io.Writer }

func (p pipedWriter) Write(b []byte) (int, error) { return p.w.Write(b) }
