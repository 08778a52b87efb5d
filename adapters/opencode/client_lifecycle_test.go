package opencode_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

// Close and a canceled parent context return within a second, whatever the loop is doing.
func TestClientStopsPromptly(t *testing.T) {
	const limit = time.Second
	// Each case returns a URL and sets the client up so that, 100 ms after Open, it is in the
	// state to stop from.
	cases := []struct {
		name  string
		setup func(t *testing.T, c *opencode.Client) string
	}{
		{"BackingOff", func(t *testing.T, c *opencode.Client) string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			url := "http://" + ln.Addr().String()
			ln.Close() // nothing listens: every attempt is refused at once
			c.BackoffMin, c.BackoffMax = 10*time.Second, 20*time.Second
			return url
		}},
		{"StreamSilent", func(t *testing.T, c *opencode.Client) string {
			srv := newFakeServer(t)
			srv.stream = func(w *sseWriter, r *http.Request, n int) { <-r.Context().Done() }
			c.IdleTimeout = time.Minute
			return srv.start().URL
		}},
		{"NoHeaders", func(t *testing.T, c *opencode.Client) string {
			srv := newFakeServer(t)
			srv.beforeHeaders = func(r *http.Request, n int) { <-r.Context().Done() }
			c.IdleTimeout = time.Minute
			return srv.start().URL
		}},
		{"ResyncHangs", func(t *testing.T, c *opencode.Client) string {
			srv := newFakeServer(t)
			srv.setSessions(sessionInfo("ses_a", 1))
			var once sync.Once
			hang := make(chan struct{})
			t.Cleanup(func() { once.Do(func() { close(hang) }) })
			srv.wrap = func(h http.Handler) http.Handler { return hangingMessages(h, hang) }
			return srv.start().URL
		}},
	}
	for _, tc := range cases {
		for _, how := range []string{"Close", "CancelParent"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				streamtest.CheckGoroutines(t)
				c := newTestClient(t, "", &streamtest.Sink{})
				c.URL = tc.setup(t, c)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if err := c.Open(ctx); err != nil {
					t.Fatal(err)
				}
				time.Sleep(100 * time.Millisecond)
				if how == "Close" {
					streamtest.StopWithin(t, c, nil, limit)
				} else {
					streamtest.StopWithin(t, c, cancel, limit)
				}
			})
		}
	}
}

// hangingMessages wraps h so that message fetches hang until the request or hang ends.
func hangingMessages(h http.Handler, hang <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/message") {
			select {
			case <-r.Context().Done():
			case <-hang:
			}
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Fifty reconnects leave no goroutine behind: the count in the middle of the run does not
// grow, and after Close it is back where it started.
func TestClientGoroutinesFlatAcrossReconnects(t *testing.T) {
	streamtest.CheckGoroutines(t)
	const reconnects = 50
	srv := newFakeServer(t)
	srv.setSessions(sessionInfo("ses_a", 1))
	srv.stream = func(w *sseWriter, r *http.Request, n int) {
		w.send(frameConnected)
		w.send(frameSessionCreated(fmt.Sprintf("ses_%d", n)))
		// Every third connection goes silent and is dropped by the watchdog; the rest close.
		if n%3 == 0 {
			<-r.Context().Done()
		}
	}
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.start().URL, sink)
	c.IdleTimeout = 50 * time.Millisecond
	c.Logger = nil // fifty reconnects are expected here
	start := time.Now()
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "5 reconnects", func() bool { return c.Stats().Reconnects >= 5 })
	mid := runtime.NumGoroutine()
	streamtest.WaitFor(t, streamtest.Patience, fmt.Sprintf("%d reconnects", reconnects), func() bool {
		return c.Stats().Reconnects >= 5+reconnects
	})
	end := runtime.NumGoroutine()
	t.Logf("%d reconnects in %v; goroutines %d after 5, %d after %d", reconnects, time.Since(start), mid, end, 5+reconnects)
	// A connection may be mid-handshake at either count; a leak of one per reconnect is 50.
	if end > mid+4 {
		t.Errorf("goroutines grew from %d to %d across %d reconnects", mid, end, reconnects)
	}
	_ = c.Close()
	st := c.Stats()
	if st.IdleTimeouts == 0 {
		t.Errorf("stats: got %+v, want some idle timeouts", st)
	}
	// Close may cut the last connection's resync short.
	if st.Resyncs < st.Connects-1 {
		t.Errorf("resyncs: got %d, want one per connection (%d)", st.Resyncs, st.Connects)
	}
}

// The lifecycle rules: Close without Open, Close twice, Open twice, Open after Close, and
// validation.
func TestClientLifecycle(t *testing.T) {
	streamtest.RunLifecycle(t, func(t *testing.T) adapters.Stream {
		return newTestClient(t, newFakeServer(t).start().URL, &streamtest.Sink{})
	})
	t.Run("ZeroValueDefaults", func(t *testing.T) {
		streamtest.CheckGoroutines(t)
		srv := newFakeServer(t)
		sink := &streamtest.Sink{}
		c := &opencode.Client{URL: srv.start().URL + "/", Sink: sink}
		t.Cleanup(func() { _ = c.Close() })
		if err := c.Open(t.Context()); err != nil {
			t.Fatal(err)
		}
		streamtest.WaitFor(t, streamtest.Patience, "a connection", func() bool { return c.Stats().Connected })
	})
	bad := []struct {
		name string
		c    *opencode.Client
	}{
		{"NoURL", &opencode.Client{Sink: &streamtest.Sink{}}},
		{"NotHTTP", &opencode.Client{URL: "ftp://127.0.0.1:4096", Sink: &streamtest.Sink{}}},
		{"Query", &opencode.Client{URL: "http://127.0.0.1:4096/?directory=x", Sink: &streamtest.Sink{}}},
		{"NoSink", &opencode.Client{URL: "http://127.0.0.1:4096"}},
		{"NegativeIdle", &opencode.Client{URL: "http://127.0.0.1:4096", Sink: &streamtest.Sink{}, IdleTimeout: -1}},
		{"BackoffInverted", &opencode.Client{URL: "http://127.0.0.1:4096", Sink: &streamtest.Sink{},
			BackoffMin: time.Second, BackoffMax: time.Millisecond}},
	}
	for _, tc := range bad {
		t.Run("Err"+tc.name, func(t *testing.T) {
			if err := tc.c.Open(t.Context()); err == nil {
				t.Error("Open: got nil, want an error")
			}
			if err := tc.c.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}
