package openclaw_test

import (
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
)

// TestClientDropsJunkIDs (issue 16, item 7): an event naming a session key no record may have
// (bytes that are not UTF-8, a control character, over adapters.MaxIDBytes) reaches no sink:
// the stream is no request to answer 400, so the event is logged, counted as malformed and
// dropped, and the stream goes on.
func TestClientDropsJunkIDs(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.URL(), sink)
	logs := &streamtest.Logger{}
	c.Logger = logs
	openClient(t, c, srv)
	srv.EmitRaw([]byte("{\"type\":\"event\",\"event\":\"session.message\",\"payload\":{\"sessionKey\":\"agent:main:\xff\",\"messageId\":\"m1\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}}"))
	srv.Emit("session.message", messagePayload("agent:main:\u0007", "m2", "bell"))
	srv.Emit("session.message", messagePayload("agent:main:"+strings.Repeat("x", adapters.MaxIDBytes), "m3", "long"))
	srv.Emit("sessions.changed", map[string]any{"sessionKey": "agent:main:subagent:c", "reason": "create", "spawnedBy": "agent:main:\u0000"})
	srv.Emit("session.message", messagePayload("agent:main:main", "msg-ok", "fine"))
	streamtest.WaitFor(t, streamtest.Patience, "the event after the junk ones", func() bool { return sink.Index(withTurn("msg-ok")) >= 0 })
	if i := sink.Index(func(ev adapters.Event) bool { return ev.SessionID != "agent:main:main" }); i >= 0 {
		t.Errorf("an event with a junk key reached the sink: %+v", sink.All()[i])
	}
	if st := c.Stats(); st.Malformed != 4 || st.Connects != 1 {
		t.Errorf("stats: got %+v, want the 4 junk events counted malformed on one connection", st)
	}
	if !logs.Contains("not valid UTF-8") {
		t.Errorf("logs: got %q, want the first junk event logged", logs.Lines())
	}
}
