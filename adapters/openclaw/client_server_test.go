package openclaw_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
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
	c.Logger = &streamtest.Logger{TB: t}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// openClient opens c and waits until it has subscribed to srv and made its first resync.
func openClient(t *testing.T, c *openclaw.Client, srv *gatewaytest.Server) {
	t.Helper()
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "the subscription", func() bool { return srv.Subscribed() == 1 })
	streamtest.WaitFor(t, streamtest.Patience, "the first resync", func() bool { return c.Stats().Resyncs >= 1 })
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
