package proc

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Launch says how to start one harness server (Server.Start).
type Launch struct {
	// Name names the server in failures and logs, such as
	// "opencode serve in /tmp/project".
	Name string
	// Port is the loopback port to listen on; 0 picks a free one for each
	// attempt.
	Port int
	// Timeout bounds the start, readiness included. It must be positive.
	Timeout time.Duration
	// Grace is how long Close waits for the process to exit after SIGTERM
	// before it kills the process group.
	Grace time.Duration
	// Command returns the command that runs the server on port, made with
	// exec.CommandContext and without Stdout or Stderr.
	Command func(port int) *exec.Cmd
	// OnLine, when not nil, sees each line of the output, in order, until
	// the process exits; an attempt's lines end before the next attempt's
	// Command is called.
	OnLine func(line string)
	// Ready returns nil once the started server answers. Its ctx ends at the
	// start's deadline, and it may bound a call further; it is called again
	// after an error, less often as time goes on.
	Ready func(ctx context.Context) error
	// PortTaken reports whether the output of an attempt that failed says
	// that its port was in use.
	PortTaken func(logs string) bool
}

// Server is a harness server that a driver starts, stops and restarts: the
// process of its last start and the port that start listened on. The zero
// value is a Server not started: port 0, no logs, and Close and Kill do
// nothing. Safe for concurrent use.
type Server struct {
	mu    sync.Mutex
	port  int
	proc  *process
	grace time.Duration
}

// Start starts the server as l says and returns how long it took, from the
// first exec until Ready answered. Each attempt runs l.Command in a process
// group of its own, its output kept (Logs), and waits for l.Ready; an
// attempt that fails is killed. One that l.PortTaken recognises is tried
// again: on a new free port, three attempts in all; on a fixed port, the
// same port every half second, ten attempts in all (a killed server's may
// take a moment to free), never another. Start fails tb, with the last
// attempt's output, when no attempt succeeds. Once one does, Close is
// registered to run when the test ends, followed by logging the output when
// tb has failed by then. Start on a Server stopped by Close or Kill
// restarts it.
func (s *Server) Start(tb testing.TB, ctx context.Context, l Launch) time.Duration {
	tb.Helper()
	start := time.Now()
	deadline := start.Add(l.Timeout)
	err := startOnPort(tb, ctx, l.Name, l.Port, deadline, func(port int) error {
		p, err := startProcess(l.Command(port), l.OnLine)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.port, s.proc, s.grace = port, p, l.Grace
		s.mu.Unlock()
		if err := p.waitReady(ctx, deadline, l.Ready); err != nil {
			p.kill()
			if l.PortTaken(p.logs()) {
				return &portTakenError{port: port}
			}
			return err
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("%s: %v\noutput:\n%s", l.Name, err, s.Logs())
	}
	tb.Cleanup(func() {
		s.Close()
		if tb.Failed() {
			tb.Logf("%s output (port %d):\n%s", l.Name, s.Port(), s.Logs())
		}
	})
	took := time.Since(start)
	tb.Logf("%s on port %d ready in %v", l.Name, s.Port(), took.Round(time.Millisecond))
	return took
}

// Port returns the port the server listens on, or last listened on; 0
// before Start.
func (s *Server) Port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

// URL returns the server's HTTP root, "http://127.0.0.1:PORT".
func (s *Server) URL() string { return fmt.Sprintf("http://127.0.0.1:%d", s.Port()) }

// Logs returns the last MiB of the output, stdout and stderr merged, of
// the last start; "" before Start.
func (s *Server) Logs() string { return s.last().logs() }

// Close stops the server: SIGTERM to its process group, then, after the
// Launch's Grace or once the server exited, SIGKILL to what is left. Safe
// to call twice, after Kill and before Start.
func (s *Server) Close() {
	s.mu.Lock()
	p, grace := s.proc, s.grace
	s.mu.Unlock()
	p.stop(grace)
}

// Kill kills the server's process group at once, as a crash would, and
// waits for the server to exit. Safe to call twice, after Close and before
// Start.
func (s *Server) Kill() { s.last().kill() }

// last returns the process of the last start; nil before Start.
func (s *Server) last() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}
