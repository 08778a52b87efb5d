package follow_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/follow"
	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
)

// The lifecycle rules: Close without Open, Open twice, Close twice and concurrently, Open after
// Close, a failed setup.
func TestLoop(t *testing.T) {
	noSetup := func() error { return nil }
	untilDone := func(ctx context.Context) { <-ctx.Done() }
	t.Run("CloseWithoutOpen", func(t *testing.T) {
		var l follow.Loop
		if l.Close() || l.Close() {
			t.Error("Close without Open: got wasOpen true")
		}
		if err := l.Open(t.Context(), noSetup, untilDone); !errors.Is(err, follow.ErrClosed) {
			t.Errorf("Open after Close: got %v, want ErrClosed", err)
		}
	})
	t.Run("OpenCloseTwice", func(t *testing.T) {
		streamtest.CheckGoroutines(t)
		var l follow.Loop
		var runs atomic.Int32
		run := func(ctx context.Context) { runs.Add(1); <-ctx.Done() }
		if err := l.Open(t.Context(), noSetup, run); err != nil {
			t.Fatal(err)
		}
		if err := l.Open(t.Context(), noSetup, run); !errors.Is(err, follow.ErrOpen) {
			t.Errorf("second Open: got %v, want ErrOpen", err)
		}
		var closed atomic.Int32
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				if l.Close() {
					closed.Add(1)
				}
			})
		}
		wg.Wait()
		if closed.Load() != 1 || runs.Load() != 1 {
			t.Errorf("got %d Closes that closed and %d runs, want 1 and 1", closed.Load(), runs.Load())
		}
		if err := l.Open(t.Context(), noSetup, run); !errors.Is(err, follow.ErrClosed) {
			t.Errorf("Open after Close: got %v, want ErrClosed", err)
		}
	})
	t.Run("CloseWaitsForRun", func(t *testing.T) {
		var l follow.Loop
		var done atomic.Bool
		run := func(ctx context.Context) {
			<-ctx.Done()
			time.Sleep(20 * time.Millisecond)
			done.Store(true)
		}
		if err := l.Open(t.Context(), noSetup, run); err != nil {
			t.Fatal(err)
		}
		l.Close()
		if !done.Load() {
			t.Error("Close returned before run did")
		}
	})
	t.Run("ParentCanceled", func(t *testing.T) {
		var l follow.Loop
		ctx, cancel := context.WithCancel(t.Context())
		ended := make(chan struct{})
		if err := l.Open(ctx, noSetup, func(ctx context.Context) { <-ctx.Done(); close(ended) }); err != nil {
			t.Fatal(err)
		}
		cancel()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatal("run did not see the parent's cancellation")
		}
		if !l.Close() {
			t.Error("Close after the parent ended: got wasOpen false, want true")
		}
	})
	t.Run("ErrSetup", func(t *testing.T) {
		var l follow.Loop
		bad := errors.New("bad field")
		if err := l.Open(t.Context(), func() error { return bad }, untilDone); !errors.Is(err, bad) {
			t.Fatalf("got %v, want the setup error", err)
		}
		if err := l.Open(t.Context(), noSetup, untilDone); err != nil {
			t.Fatalf("Open after a failed setup: %v", err)
		}
		if !l.Close() {
			t.Error("got wasOpen false, want true")
		}
	})
}

// Start checks the fields every client shares before the client's own setup, hands it the
// logger and backoff it derived, and logs the start; Stop releases and logs "closed" once.
func TestStart(t *testing.T) {
	sink := sinkFunc(func(context.Context, adapters.Event) error { return nil })
	good := follow.Settings{Client: "test client", URL: "http://127.0.0.1:1", Scheme: "http", Sink: sink, Following: "following /x"}
	untilDone := func(ctx context.Context) { <-ctx.Done() }
	t.Run("OK", func(t *testing.T) {
		streamtest.CheckGoroutines(t)
		var l follow.Loop
		var log streamtest.Logger
		s := good
		s.Logger, s.BackoffMax = &log, time.Minute
		var got follow.Opened
		if err := l.Start(t.Context(), s, func(o follow.Opened) error { got = o; return nil }, untilDone); err != nil {
			t.Fatal(err)
		}
		if got.Log != &log || got.Backoff.Min != follow.DefaultBackoffMin || got.Backoff.Max != time.Minute {
			t.Errorf("setup got %+v, want the Logger and backoff %v..%v", got, follow.DefaultBackoffMin, time.Minute)
		}
		released := 0
		for range 2 {
			l.Stop(func() { released++ })
		}
		if released != 1 || log.Count("INFO following /x") != 1 || log.Count("INFO closed") != 1 {
			t.Errorf("released %d times; log %q; want once each", released, log.Lines())
		}
		if err := l.Start(t.Context(), s, func(follow.Opened) error { return nil }, untilDone); !errors.Is(err, follow.ErrClosed) {
			t.Errorf("Start after Stop: got %v, want ErrClosed", err)
		}
	})
	t.Run("NilLogger", func(t *testing.T) {
		var l follow.Loop
		var got follow.Opened
		if err := l.Start(t.Context(), good, func(o follow.Opened) error { got = o; return nil }, untilDone); err != nil {
			t.Fatal(err)
		}
		got.Log.Info("dropped") // must not panic
		l.Stop(nil)
	})
	t.Run("StopWithoutStart", func(t *testing.T) {
		var l follow.Loop
		l.Stop(func() { t.Error("released without a Start") })
	})
	setupErr := errors.New("bad own field")
	for _, tc := range []struct {
		name   string
		change func(*follow.Settings)
		setup  error
	}{
		{"ErrURL", func(s *follow.Settings) { s.URL = "ws://127.0.0.1:1" }, nil},
		{"ErrNoSink", func(s *follow.Settings) { s.Sink = nil }, nil},
		{"ErrNegativeBackoff", func(s *follow.Settings) { s.BackoffMin = -1 }, nil},
		{"ErrBackoffInverted", func(s *follow.Settings) { s.BackoffMin, s.BackoffMax = time.Second, time.Millisecond }, nil},
		{"ErrSetup", func(*follow.Settings) {}, setupErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l follow.Loop
			var log streamtest.Logger
			s := good
			s.Logger = &log
			tc.change(&s)
			ran := false
			err := l.Start(t.Context(), s, func(follow.Opened) error { ran = true; return tc.setup }, untilDone)
			if err == nil {
				t.Fatal("got nil, want an error")
			}
			if tc.setup != nil && !errors.Is(err, tc.setup) || tc.setup == nil && ran {
				t.Errorf("got %v, setup ran %v: the shared fields are checked before setup, whose error is kept", err, ran)
			}
			l.Stop(nil)
			if len(log.Lines()) != 0 {
				t.Errorf("a failed Start logged %q", log.Lines())
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	b := follow.Backoff{Min: 100 * time.Millisecond, Max: 800 * time.Millisecond}
	within := func(what string, got, d time.Duration) {
		t.Helper()
		if got < d/2 || got > d {
			t.Errorf("%s: got %v, want within [%v, %v]", what, got, d/2, d)
		}
	}
	for i, d := range []time.Duration{100, 200, 400, 800, 800} {
		within(fmt.Sprintf("attempt %d", i+1), b.Next(), d*time.Millisecond)
	}
	b.Reset()
	within("after Reset", b.Next(), 100*time.Millisecond)
	within("Hold", b.Hold(), 800*time.Millisecond)
	within("after Hold", b.Next(), 800*time.Millisecond)
	if got := follow.Jitter(1); got != 1 {
		t.Errorf("Jitter(1ns): got %v", got)
	}
}

func TestSleep(t *testing.T) {
	if !follow.Sleep(t.Context(), time.Millisecond) {
		t.Error("a short sleep: got false, want true")
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(10*time.Millisecond, cancel)
	start := time.Now()
	if follow.Sleep(ctx, time.Minute) {
		t.Error("a canceled sleep: got true, want false")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a canceled sleep took %v", took)
	}
}

func TestIsPow2(t *testing.T) {
	var got []int64
	for n := int64(-1); n <= 20; n++ {
		if follow.IsPow2(n) {
			got = append(got, n)
		}
	}
	if want := []int64{1, 2, 4, 8, 16}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestOrDefault(t *testing.T) {
	if got := follow.OrDefault(0, 5); got != 5 {
		t.Errorf("zero: got %d", got)
	}
	if got := follow.OrDefault(-1, 5); got != -1 {
		t.Errorf("negative: got %d, want it kept", got)
	}
	if got := follow.OrDefault(time.Duration(0), time.Second); got != time.Second {
		t.Errorf("duration: got %v", got)
	}
}

func TestOrDiscard(t *testing.T) {
	follow.OrDiscard(nil).Error("dropped", "k", 1) // must not panic
	var l streamtest.Logger
	follow.OrDiscard(&l).Info("kept")
	if l.Count("INFO kept") != 1 {
		t.Errorf("got %q", l.Lines())
	}
}

// sinkFunc is an adapters.Sink made of a function.
type sinkFunc func(context.Context, adapters.Event) error

func (f sinkFunc) Consume(ctx context.Context, ev adapters.Event) error { return f(ctx, ev) }

func TestCounters(t *testing.T) {
	var c follow.Counters
	c.Connect()
	c.Connected.Store(false)
	c.Connect()
	c.Oversized.Add(1)
	var log streamtest.Logger
	refuse := sinkFunc(func(_ context.Context, ev adapters.Event) error {
		if ev.Name == "bad" {
			return errors.New("disk full")
		}
		return nil
	})
	evs := []adapters.Event{{Name: "a"}, {Name: "bad"}, {Name: "b"}, {Name: "bad"}, {Name: "bad"}}
	if c.Deliver(t.Context(), refuse, &log, evs) {
		t.Error("Deliver with refusals: got true, want false")
	}
	if !c.Deliver(t.Context(), refuse, &log, evs[:1]) {
		t.Error("Deliver without refusals: got false, want true")
	}
	for range 3 {
		c.Skip(&log, "frame of 3 bytes", adapters.Malformed("not JSON"))
	}
	got := c.StreamStats()
	want := adapters.StreamStats{Connected: true, Connects: 2, Reconnects: 1, Events: 3, SinkErrors: 3, Malformed: 3, Dropped: 1}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// Refusals and malformed input are logged at the 1st and 2nd, not the 3rd.
	if n := log.Count("WARN the sink refused an event event=bad"); n != 2 {
		t.Errorf("refusal lines: got %d, want 2: %q", n, log.Lines())
	}
	if n := log.Count("DEBUG skipped a malformed input input=frame of 3 bytes"); n != 2 {
		t.Errorf("malformed lines: got %d, want 2: %q", n, log.Lines())
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	stop := sinkFunc(func(ctx context.Context, _ adapters.Event) error { return ctx.Err() })
	if c.Deliver(ctx, stop, &log, evs) || c.StreamStats().SinkErrors != 3 {
		t.Errorf("Deliver after ctx ended: want false and no refusal counted, got %+v", c.StreamStats())
	}
}

func TestNewBackoff(t *testing.T) {
	b, err := follow.NewBackoff(0, 0, time.Second, time.Minute)
	if err != nil || b.Min != time.Second || b.Max != time.Minute {
		t.Errorf("defaults: got %+v, %v", b, err)
	}
	if b, err = follow.NewBackoff(2*time.Second, 0, time.Second, time.Minute); err != nil || b.Min != 2*time.Second {
		t.Errorf("set: got %+v, %v", b, err)
	}
	if _, err := follow.NewBackoff(time.Second, time.Millisecond, 0, 0); err == nil {
		t.Error("inverted: got nil, want an error")
	}
}

func TestCheckURL(t *testing.T) {
	for _, tt := range []struct {
		raw, scheme string
		ok          bool
	}{
		{"http://127.0.0.1:4096", "http", true},
		{"https://host/", "http", true},
		{"wss://host:18789", "ws", true},
		{"ws://host", "http", false},
		{"http://", "http", false},
		{"http://host/?directory=x", "http", false},
		{"http://host/#x", "http", false},
		{"://x", "http", false},
		{"", "ws", false},
	} {
		if err := follow.CheckURL(tt.raw, tt.scheme); (err == nil) != tt.ok {
			t.Errorf("CheckURL(%q, %q): got %v, want ok %v", tt.raw, tt.scheme, err, tt.ok)
		}
	}
}
