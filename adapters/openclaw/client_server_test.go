package openclaw_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/openclaw/gatewaytest"
)

// testToken is the gateway token of the test Gateways.
const testToken = "test-token"

// testTick is the tick interval of the test Gateways: the client's liveness window is twice it.
const testTick = 200 * time.Millisecond

// newGateway starts a stand-in Gateway with testToken and testTick; it is closed in t.Cleanup.
func newGateway(t *testing.T) *gatewaytest.Server {
	t.Helper()
	return gatewaytest.NewServer(t, gatewaytest.Options{Token: testToken, TickInterval: testTick})
}

// newTestClient returns a Client for url with test-sized timeouts, closed in t.Cleanup.
func newTestClient(t *testing.T, url string, sink adapters.Sink) *openclaw.Client {
	t.Helper()
	c := openclaw.NewClient(url, sink)
	c.Token = testToken
	c.Version = "test"
	c.HandshakeTimeout = 2 * time.Second
	c.RequestTimeout = 2 * time.Second
	c.BackoffMin = 10 * time.Millisecond
	c.BackoffMax = 50 * time.Millisecond
	c.Logf = t.Logf
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// openClient opens c and waits until it has subscribed to srv and made its first resync.
func openClient(t *testing.T, c *openclaw.Client, srv *gatewaytest.Server) {
	t.Helper()
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, patience, "the subscription", func() bool { return srv.Subscribed() == 1 })
	waitFor(t, patience, "the first resync", func() bool { return c.Stats().Resyncs >= 1 })
}

// sessionRow is a session as sessions.list presents it; parent "" is a top-level session.
func sessionRow(key, parent, label string) json.RawMessage {
	row := map[string]any{"key": key, "sessionId": "sid-" + key, "label": label,
		"createdAt": 1795314779000, "updatedAt": 1795314779500}
	if parent != "" {
		row["spawnedBy"] = parent
		row["spawnDepth"] = 1
	}
	b, _ := json.Marshal(row)
	return b
}

// messagePayload is a session.message payload with one user message.
func messagePayload(key, id, text string) map[string]any {
	return map[string]any{"sessionKey": key, "messageId": id,
		"message": map[string]any{"role": "user", "content": text, "timestamp": 1795314779000}}
}

// recordingSink keeps every event it is given.
type recordingSink struct {
	mu     sync.Mutex
	events []adapters.Event
}

func (s *recordingSink) Consume(_ context.Context, ev adapters.Event) error {
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
	return nil
}

func (s *recordingSink) all() []adapters.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]adapters.Event(nil), s.events...)
}

// index returns the position of the first event that matches, or -1.
func (s *recordingSink) index(match func(adapters.Event) bool) int {
	for i, ev := range s.all() {
		if match(ev) {
			return i
		}
	}
	return -1
}

// count returns how many events match.
func (s *recordingSink) count(match func(adapters.Event) bool) int {
	n := 0
	for _, ev := range s.all() {
		if match(ev) {
			n++
		}
	}
	return n
}

func named(name, session string) func(adapters.Event) bool {
	return func(ev adapters.Event) bool { return ev.Name == name && ev.SessionID == session }
}

func withTurn(id string) func(adapters.Event) bool {
	return func(ev adapters.Event) bool {
		for _, turn := range ev.Turns {
			if turn.ID == id {
				return true
			}
		}
		return false
	}
}

// patience bounds every wait for something that should happen within milliseconds, so that a
// loaded machine slows the tests down without failing them.
const patience = 20 * time.Second

// waitFor polls cond until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// checkGoroutines fails the test if, once every other cleanup has run, more goroutines are
// left than when it was called. Call it first in a test, so its cleanup runs last.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		after := settleGoroutines(before, 2*time.Second)
		if after > before {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("goroutines: got %d after the test, want at most %d as before it\n%s", after, before, buf)
		}
	})
}

// settleGoroutines waits up to timeout for the goroutine count to drop to want and returns the
// last count: goroutines that are ending need a moment to be gone.
func settleGoroutines(want int, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logLines collects what a Client logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// count returns how many lines contain part.
func (l *logLines) count(part string) int {
	n := 0
	for _, line := range l.all() {
		if strings.Contains(line, part) {
			n++
		}
	}
	return n
}
