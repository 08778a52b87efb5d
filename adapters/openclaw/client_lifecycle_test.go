package openclaw_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/openclaw/gatewaytest"
)

// Close and a canceled parent context return within a second, whatever the loop is doing, and
// an established connection is closed with 1000.
func TestClientStopsPromptly(t *testing.T) {
	const limit = time.Second
	// Each case returns a URL and sets the client up so that, 100 ms after Open, it is in the
	// state to stop from.
	cases := []struct {
		name  string
		setup func(t *testing.T, c *openclaw.Client) (url string, srv *gatewaytest.Server)
	}{
		{"BackingOff", func(t *testing.T, c *openclaw.Client) (string, *gatewaytest.Server) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			url := "ws://" + ln.Addr().String()
			ln.Close() // nothing listens: every attempt is refused at once
			c.BackoffMin, c.BackoffMax = 10*time.Second, 20*time.Second
			return url, nil
		}},
		{"Following", func(t *testing.T, c *openclaw.Client) (string, *gatewaytest.Server) {
			srv := newGateway(t)
			return srv.URL(), srv
		}},
		{"GatewayHung", func(t *testing.T, c *openclaw.Client) (string, *gatewaytest.Server) {
			srv := newGateway(t)
			// Once subscribed, the Gateway stops doing anything, even answering a close frame.
			srv.Handle("sessions.list", func(json.RawMessage) (any, error) {
				srv.Hang()
				return map[string]any{"sessions": []any{}}, nil
			})
			c.RequestTimeout = time.Minute
			return srv.URL(), nil
		}},
		{"NoChallenge", func(t *testing.T, c *openclaw.Client) (string, *gatewaytest.Server) {
			srv := newGateway(t)
			srv.Hang() // accepts the WebSocket, then nothing
			c.HandshakeTimeout = time.Minute
			return srv.URL(), nil
		}},
		{"ResyncHangs", func(t *testing.T, c *openclaw.Client) (string, *gatewaytest.Server) {
			srv := newGateway(t)
			hang := make(chan struct{})
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { close(hang) }) }) // before the server closes
			srv.Handle("sessions.list", func(json.RawMessage) (any, error) {
				<-hang
				return nil, fmt.Errorf("released")
			})
			c.RequestTimeout = time.Minute
			return srv.URL(), nil
		}},
	}
	for _, tc := range cases {
		for _, how := range []string{"Close", "CancelParent"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				streamtest.CheckGoroutines(t)
				c := newTestClient(t, "", &streamtest.Sink{})
				url, srv := tc.setup(t, c)
				c.URL = url
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
				if srv != nil {
					streamtest.WaitFor(t, streamtest.Patience, "the close frame", func() bool { return len(srv.Closes()) > 0 })
					if got := srv.Closes()[0]; got.Code != 1000 || got.Reason != "client closing" {
						t.Errorf("close frame: got %+v, want 1000 client closing", got)
					}
				}
			})
		}
	}
}

// Fifty reconnects leave no goroutine behind: the count in the middle of the run does not
// grow, and after Close it is back where it started.
func TestClientGoroutinesFlatAcrossReconnects(t *testing.T) {
	streamtest.CheckGoroutines(t)
	const reconnects = 50
	srv := newGateway(t)
	srv.SetSessions(sessionRow("agent:main:main", "", "parent"))
	c := newTestClient(t, srv.URL(), &streamtest.Sink{})
	c.Logger = nil // fifty reconnects are expected here
	openClient(t, c, srv)
	streamtest.WaitFor(t, streamtest.Patience, "the first resync", func() bool { return c.Stats().Resyncs == 1 })
	start := time.Now()
	drop := func(i int) {
		// Alternate the ways a connection ends: a close frame from the Gateway, a Gateway gone
		// quiet, a restart.
		switch i % 3 {
		case 0:
			srv.DropConnections(gatewaytest.CloseServiceRestart, "service restart")
		case 1:
			srv.StopTicking()
			srv.StopPongs()
			streamtest.WaitFor(t, streamtest.Patience, "the idle timeout", func() bool { return !c.Stats().Connected })
			srv.StartTicking()
			srv.StartPongs()
		case 2:
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mid int
	for i := range reconnects + 5 {
		if i == 5 {
			mid = runtime.NumGoroutine()
		}
		resyncs := c.Stats().Resyncs
		drop(i)
		streamtest.WaitFor(t, streamtest.Patience, fmt.Sprintf("reconnect %d and its resync", i+1), func() bool {
			st := c.Stats()
			return st.Connects >= int64(i+2) && st.Resyncs > resyncs && st.Connected
		})
	}
	end := runtime.NumGoroutine()
	t.Logf("%d reconnects in %v; goroutines %d after 5, %d after %d", reconnects+5, time.Since(start), mid, end, reconnects+5)
	// A leak of one per reconnect is 50.
	if end > mid+4 {
		t.Errorf("goroutines grew from %d to %d across %d reconnects", mid, end, reconnects)
	}
	_ = c.Close()
	if st := c.Stats(); st.IdleTimeouts == 0 || st.Reconnects < reconnects+5 {
		t.Errorf("stats: got %+v, want %d reconnects, some by idle timeout", st, reconnects+5)
	}
}

// The lifecycle rules: Close without Open, Close twice, Open twice, Open after Close, and
// validation.
func TestClientLifecycle(t *testing.T) {
	streamtest.RunLifecycle(t, func(t *testing.T) adapters.Stream {
		return newTestClient(t, newGateway(t).URL(), &streamtest.Sink{})
	})
	t.Run("ZeroValueDefaults", func(t *testing.T) {
		streamtest.CheckGoroutines(t)
		srv := gatewaytest.NewServer(t, gatewaytest.Options{})
		sink := &streamtest.Sink{}
		c := &openclaw.Client{URL: srv.URL(), Sink: sink}
		t.Cleanup(func() { _ = c.Close() })
		openClient(t, c, srv)
		var p struct{ Auth *json.RawMessage }
		if err := json.Unmarshal(srv.RequestsFor("connect")[0].Params, &p); err != nil || p.Auth != nil {
			t.Errorf("connect params: got auth %v (%v), want none without a Token", p.Auth, err)
		}
	})
	bad := []struct {
		name string
		c    *openclaw.Client
	}{
		{"NoURL", &openclaw.Client{Sink: &streamtest.Sink{}}},
		{"NotWS", &openclaw.Client{URL: "http://127.0.0.1:18789", Sink: &streamtest.Sink{}}},
		{"Query", &openclaw.Client{URL: "ws://127.0.0.1:18789/?token=x", Sink: &streamtest.Sink{}}},
		{"NoSink", &openclaw.Client{URL: openclaw.DefaultGatewayURL}},
		{"NegativeTimeout", &openclaw.Client{URL: openclaw.DefaultGatewayURL, Sink: &streamtest.Sink{}, RequestTimeout: -1}},
		{"BackoffInverted", &openclaw.Client{URL: openclaw.DefaultGatewayURL, Sink: &streamtest.Sink{},
			BackoffMin: time.Second, BackoffMax: time.Millisecond}},
		{"QueueBelowFrame", &openclaw.Client{URL: openclaw.DefaultGatewayURL, Sink: &streamtest.Sink{},
			MaxFrameBytes: 1 << 20, QueueBytes: 1 << 10}},
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
