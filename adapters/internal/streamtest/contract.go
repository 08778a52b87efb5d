package streamtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
)

// Patience bounds every wait for something that should happen within milliseconds, so that a
// loaded machine slows the tests down without failing them.
const Patience = 20 * time.Second

// WaitFor polls cond until it holds, failing t when timeout passes first.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// StopWithin calls cancel, when not nil, then s.Close, and fails t unless Close returns within
// limit.
func StopWithin(t testing.TB, s adapters.Stream, cancel context.CancelFunc, limit time.Duration) {
	t.Helper()
	start := time.Now()
	if cancel != nil {
		cancel()
	}
	done := make(chan struct{})
	go func() { _ = s.Close(); close(done) }()
	select {
	case <-done:
		t.Logf("stopped in %v", time.Since(start))
	case <-time.After(limit):
		t.Fatalf("Close did not return within %v", limit)
	}
}

// RunLifecycle runs the lifecycle rules every adapters.Stream keeps (STYLE rules 5 and 16) over
// the streams newStream returns: unopened, aimed at a harness that accepts them, and closed in
// t.Cleanup. Close without Open, twice, then Open after it; Open twice; Close twice
// concurrently, then once more, after which the stream is no longer connected.
func RunLifecycle(t *testing.T, newStream func(t *testing.T) adapters.Stream) {
	t.Run("CloseWithoutOpen", func(t *testing.T) {
		s := newStream(t)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Open(t.Context()); err == nil {
			t.Error("Open after Close: got nil, want an error")
		}
	})
	t.Run("OpenCloseTwice", func(t *testing.T) {
		CheckGoroutines(t)
		s := newStream(t)
		if err := s.Open(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := s.Open(t.Context()); err == nil {
			t.Error("second Open: got nil, want an error")
		}
		WaitFor(t, Patience, "a connection", func() bool { return s.StreamStats().Connected })
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if err := s.Close(); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if s.StreamStats().Connected {
			t.Error("still connected after Close")
		}
	})
}
