package proxy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/internal/leaktest"
	"github.com/heirloom-dev/heirloom/proxy"
)

// watch runs c.Watch in the background, handing each event on; the returned channel gets its
// error.
func watch(ctx context.Context, c *proxy.Client, opts proxy.WatchOptions) (<-chan engine.Event, <-chan error) {
	events, done := make(chan engine.Event, 100), make(chan error, 1)
	go func() {
		done <- c.Watch(ctx, opts, func(ev engine.Event, raw []byte) error {
			if !strings.Contains(string(raw), `"type":"`+ev.Type+`"`) {
				return fmt.Errorf("raw message %s is not the event %+v", raw, ev)
			}
			events <- ev
			return nil
		})
	}()
	return events, done
}

// Two sessions a watch tells apart.
const (
	w1 = "5e550000-0000-4000-8000-0000000000d1"
	w2 = "5e550000-0000-4000-8000-0000000000d2"
)

func startHook(id string) string {
	return fmt.Sprintf(`{"session_id":%q,"cwd":"/tmp","hook_event_name":"SessionStart","source":"startup"}`, id)
}

// TestClientWatch follows the feed through proxy.Client: filters reach the server, events
// arrive with their raw message, and cancelling ctx closes the connection cleanly.
func TestClientWatch(t *testing.T) {
	leaktest.Check(t)
	s := MustOpenServer(t, func(s *proxy.Server) { s.Token = "sekret" })
	c := &proxy.Client{URL: s.URL(), Token: "sekret"}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	connected := make(chan struct{})
	events, done := watch(ctx, c, proxy.WatchOptions{Session: w2, Types: []string{engine.EventSessionStarted}, Connected: func() { close(connected) }})
	<-connected
	auth := map[string]string{"Authorization": "Bearer sekret"}
	for _, id := range []string{w1, w2} {
		if status, _, _ := do(t, "POST", s.URL()+"/hooks/claude-code", startHook(id), auth); status != 200 {
			t.Fatalf("hook: %d", status)
		}
	}
	select {
	case ev := <-events:
		if ev.Type != engine.EventSessionStarted || ev.Session != w2 {
			t.Errorf("got %+v, want w2's session.started only", ev)
		}
	case err := <-done:
		t.Fatalf("Watch returned %v", err)
	case <-time.After(patience):
		t.Fatal("no event")
	}
	start := time.Now()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: got %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Watch took %v to return after cancel", d)
	}
	waitFor(t, "the server to count a client that left", func() bool {
		req, _ := http.NewRequest("GET", s.URL()+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer sekret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(body), `heirloom_feed_disconnects_total{reason="client"} 1`)
	})
}

// TestClientWatchErrors: what Watch returns when it cannot follow the feed.
func TestClientWatchErrors(t *testing.T) {
	leaktest.Check(t)
	t.Run("ErrUnauthorized", func(t *testing.T) {
		s := MustOpenServer(t, func(s *proxy.Server) { s.Token = "sekret" })
		err := (&proxy.Client{URL: s.URL()}).Watch(t.Context(), proxy.WatchOptions{}, nil)
		var apiErr *proxy.Error
		if !errors.As(err, &apiErr) || apiErr.Code != proxy.ECodeUnauthorized {
			t.Errorf("got %v, want the API's unauthorized error", err)
		}
	})
	t.Run("ErrUnknownType", func(t *testing.T) {
		s := MustOpenServer(t, nil)
		err := (&proxy.Client{URL: s.URL()}).Watch(t.Context(), proxy.WatchOptions{Types: []string{"run.exploded"}}, nil)
		var apiErr *proxy.Error
		if !errors.As(err, &apiErr) || apiErr.Code != proxy.ECodeInvalid || !strings.Contains(apiErr.Message, "run.exploded") {
			t.Errorf("got %v, want the API's invalid error naming the type", err)
		}
	})
	t.Run("ErrShuttingDown", func(t *testing.T) {
		s, closeAll := openServer(t, t.TempDir(), nil)
		connected := make(chan struct{})
		_, done := watch(t.Context(), &proxy.Client{URL: s.URL()}, proxy.WatchOptions{Connected: func() { close(connected) }})
		<-connected
		closeAll()
		err := <-done
		var fc *proxy.FeedClosedError
		if !errors.As(err, &fc) || !fc.ShuttingDown() || !strings.Contains(err.Error(), "shutting down") {
			t.Errorf("got %v, want a FeedClosedError saying heirloom is shutting down", err)
		}
	})
	t.Run("ErrHandlerFailed", func(t *testing.T) {
		s := MustOpenServer(t, nil)
		stop := errors.New("stop here")
		done := make(chan error, 1)
		connected := make(chan struct{})
		go func() {
			done <- (&proxy.Client{URL: s.URL()}).Watch(t.Context(), proxy.WatchOptions{Connected: func() { close(connected) }},
				func(engine.Event, []byte) error { return stop })
		}()
		<-connected
		do(t, "POST", s.URL()+"/hooks/claude-code", startHook(S), nil)
		if err := <-done; err != stop {
			t.Errorf("got %v, want the handler's error as is", err)
		}
	})
}
