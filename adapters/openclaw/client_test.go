package openclaw_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/openclaw/gatewaytest"
)

// The handshake carries what OpenClaw 2026.9 needs from a token-only backend client, and is
// followed by the subscription and the resync's list, in that order.
func TestClientHandshake(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	c := newTestClient(t, srv.URL(), &streamtest.Sink{})
	openClient(t, c, srv)
	streamtest.WaitFor(t, streamtest.Patience, "the resync", func() bool { return c.Stats().Resyncs == 1 })

	var methods []string
	for _, r := range srv.Requests() {
		methods = append(methods, r.Method)
	}
	if want := []string{"connect", "sessions.subscribe", "sessions.list"}; !slices.Equal(methods, want) {
		t.Errorf("requests: got %q, want %q", methods, want)
	}
	var p struct {
		MinProtocol, MaxProtocol int
		Client                   struct{ ID, DisplayName, Version, Platform, Mode string }
		Role                     string
		Scopes                   []string
		Auth                     struct{ Token string }
		Device                   *json.RawMessage
	}
	if err := json.Unmarshal(srv.RequestsFor("connect")[0].Params, &p); err != nil {
		t.Fatal(err)
	}
	if p.MinProtocol != 3 || p.MaxProtocol != 5 {
		t.Errorf("protocol range: got %d–%d, want 3–5", p.MinProtocol, p.MaxProtocol)
	}
	if p.Client.ID != "gateway-client" || p.Client.Mode != "backend" || p.Client.Version != "test" ||
		p.Client.Platform != runtime.GOOS || p.Client.DisplayName != "heirloom" {
		t.Errorf("client: got %+v, want gateway-client/backend, version test, platform %s", p.Client, runtime.GOOS)
	}
	if p.Role != "operator" || !slices.Equal(p.Scopes, []string{"operator.read"}) {
		t.Errorf("role and scopes: got %q %q, want operator [operator.read]", p.Role, p.Scopes)
	}
	if p.Auth.Token != testToken || p.Device != nil {
		t.Errorf("auth: got token %q, device %v; want the token and no device", p.Auth.Token, p.Device)
	}
	if got := string(srv.RequestsFor("sessions.subscribe")[0].Params); got != "{}" {
		t.Errorf("subscribe params: got %s, want {}", got)
	}
	if got := string(srv.RequestsFor("sessions.list")[0].Params); got != `{"limit":200}` {
		t.Errorf("list params: got %s, want {\"limit\":200}", got)
	}
	if st := c.Stats(); !st.Connected || st.Protocol != gatewaytest.Protocol || st.Connects != 1 {
		t.Errorf("stats: got %+v, want connected once with protocol %d", st, gatewaytest.Protocol)
	}
}

// A replay of the frames recorded from the real OpenClaw 2026.9.6 while a parent spawned a
// sub-agent reaches the Sink decoded, in order, exactly as DecodeEvent decodes each frame.
func TestClientReplay(t *testing.T) {
	streamtest.CheckGoroutines(t)
	rec, err := gatewaytest.LoadRecording("testdata/live/spawn.all-frames.json")
	if err != nil {
		t.Fatal(err)
	}
	frames, err := gatewaytest.EventFrames(rec)
	if err != nil {
		t.Fatal(err)
	}
	var want []adapters.Event
	for _, f := range frames {
		evs, err := openclaw.DecodeEvent(f.Event, f.Payload)
		if err != nil {
			t.Fatalf("recorded %s frame: %v", f.Event, err)
		}
		want = append(want, evs...)
	}
	if len(want) == 0 {
		t.Fatal("the recording decodes to no events")
	}

	srv := newGateway(t)
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.URL(), sink)
	openClient(t, c, srv)
	if n := srv.Replay(frames); n != 1 {
		t.Fatalf("replayed to %d connections, want 1", n)
	}
	streamtest.WaitFor(t, streamtest.Patience, fmt.Sprintf("%d events", len(want)), func() bool { return len(sink.All()) >= len(want) })
	got := sink.All()
	if !reflect.DeepEqual(got, want) {
		for i := range min(len(got), len(want)) {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("event %d of %d: got %+v, want %+v", i, len(want), got[i], want[i])
			}
		}
		t.Fatalf("events: got %d, want %d", len(got), len(want))
	}
	st := c.Stats()
	if st.Malformed != 0 || st.Gaps != 0 || st.Connects != 1 || st.Events != int64(len(want)) {
		t.Errorf("stats: got %+v, want %d events, nothing malformed, no gap, one connection", st, len(want))
	}
	t.Logf("%d recorded frames → %d events", len(frames), len(want))
}

// Describe asks the live connection and returns the decoded session, without the Sink.
func TestClientDescribe(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	const child = "agent:main:subagent:11111111-2222-3333-4444-555555555555"
	srv.SetSessions(sessionRow("agent:main:main", "", "parent"), sessionRow(child, "agent:main:main", "child"))
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.URL(), sink)
	openClient(t, c, srv)
	streamtest.WaitFor(t, streamtest.Patience, "the resync", func() bool { return c.Stats().Resyncs == 1 })
	before := len(sink.All())

	evs, err := c.Describe(t.Context(), child)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].SessionID != child || evs[0].ParentSessionID != "agent:main:main" ||
		evs[0].Name != openclaw.NameSessionsDescribe || evs[0].Scope != "main" {
		t.Errorf("describe: got %+v, want the child with its parent", evs)
	}
	if evs, err := c.Describe(t.Context(), "agent:main:unknown"); err != nil || len(evs) != 0 {
		t.Errorf("describe unknown: got %v, %v; want nothing", evs, err)
	}
	if got := len(sink.All()); got != before {
		t.Errorf("sink: got %d events after Describe, want %d: Describe must not feed the Sink", got, before)
	}

	t.Run("ErrRefused", func(t *testing.T) {
		srv.Handle("sessions.describe", func(json.RawMessage) (any, error) {
			return nil, &gatewaytest.Error{Code: "FORBIDDEN", Message: "missing scope: operator.read",
				Details: map[string]any{"code": "MISSING_SCOPE"}}
		})
		defer srv.Handle("sessions.describe", nil)
		_, err := c.Describe(t.Context(), child)
		var re *openclaw.RequestError
		if !errors.As(err, &re) || re.Code != "FORBIDDEN" || re.Detail != "MISSING_SCOPE" {
			t.Errorf("got %v, want a FORBIDDEN (MISSING_SCOPE) RequestError", err)
		}
	})
	t.Run("ErrDeadline", func(t *testing.T) {
		release := make(chan struct{})
		srv.Handle("sessions.describe", func(json.RawMessage) (any, error) {
			<-release
			return map[string]any{"session": nil}, nil
		})
		defer srv.Handle("sessions.describe", nil)
		defer close(release)
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.Describe(ctx, child)
		if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > time.Second {
			t.Errorf("got %v after %v, want context.DeadlineExceeded after 100 ms", err, took)
		}
	})
}

// Describe without a connection fails at once with ErrNotConnected: before Open, while the
// Gateway is unreachable, after Close.
func TestClientDescribeNotConnected(t *testing.T) {
	streamtest.CheckGoroutines(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "ws://" + ln.Addr().String()
	ln.Close() // nothing listens
	c := newTestClient(t, url, &streamtest.Sink{})
	describe := func(when string) {
		start := time.Now()
		_, err := c.Describe(t.Context(), "agent:main:main")
		if took := time.Since(start); !errors.Is(err, openclaw.ErrNotConnected) || took > 50*time.Millisecond {
			t.Errorf("%s: got %v after %v, want ErrNotConnected at once", when, err, took)
		}
	}
	describe("before Open")
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	describe("while unreachable")
	_ = c.Close()
	describe("after Close")
}

// ScopeOf is the agentId of a key, lowercase; "" for a key that does not parse.
func TestClientScopeOf(t *testing.T) {
	c := openclaw.NewClient(openclaw.DefaultGatewayURL, &streamtest.Sink{})
	for key, want := range map[string]string{
		"agent:ops:main": "ops",
		"agent:Ops:subagent:11111111-2222-3333-4444-555555555555": "ops",
		"main":      "main", // legacy keys are filed under the default agent
		"":          "",
		"agent::x":  "",
		"agent:ops": "",
	} {
		if got := c.ScopeOf(key); got != want {
			t.Errorf("ScopeOf(%q): got %q, want %q", key, got, want)
		}
	}
}

// A 2 MiB frame (a large tool output) arrives whole, along with the frames after it.
func TestClientLargeFrame(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.URL(), sink)
	openClient(t, c, srv)
	big := strings.Repeat("0123456789abcdef", 2<<20/16)
	srv.Emit("session.message", messagePayload("agent:main:main", "msg-big", big))
	srv.Emit("session.message", messagePayload("agent:main:main", "msg-after", "after"))
	streamtest.WaitFor(t, streamtest.Patience, "the event after the big one", func() bool { return sink.Index(withTurn("msg-after")) >= 0 })
	i := sink.Index(withTurn("msg-big"))
	if i < 0 || sink.All()[i].Turns[0].Text != big {
		t.Errorf("the 2 MiB message did not arrive intact")
	}
	if st := c.Stats(); st.Connects != 1 || st.Oversized != 0 {
		t.Errorf("stats: got %+v, want 1 connect, nothing oversized", st)
	}
}

// A frame over MaxFrameBytes cannot be read: the client closes with 1009, counts it, connects
// again and resyncs.
func TestClientOversizedFrame(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.URL(), sink)
	c.MaxFrameBytes = 64 << 10
	openClient(t, c, srv)
	srv.Emit("session.message", messagePayload("agent:main:main", "msg-big", strings.Repeat("x", 128<<10)))
	streamtest.WaitFor(t, streamtest.Patience, "the second connection", func() bool { return srv.Connects() >= 2 && srv.Subscribed() == 1 })
	srv.Emit("session.message", messagePayload("agent:main:main", "msg-2", "after"))
	streamtest.WaitFor(t, streamtest.Patience, "an event on the second connection", func() bool { return sink.Index(withTurn("msg-2")) >= 0 })
	if sink.Index(withTurn("msg-big")) >= 0 {
		t.Error("the oversized message reached the Sink")
	}
	if st := c.Stats(); st.Oversized != 1 || st.Reconnects < 1 || st.Resyncs < 2 {
		t.Errorf("stats: got %+v, want 1 oversized, a reconnect, a resync after it", st)
	}
	if !hasClose(srv.Closes(), 1, 1009) {
		t.Errorf("close frames: got %+v, want 1009 on the first connection", srv.Closes())
	}
	// StreamStats is Stats without the Gateway's detail; the oversized frame is a drop.
	_ = c.Close()
	st := c.Stats()
	want := adapters.StreamStats{Connected: st.Connected, Connects: st.Connects, Reconnects: st.Reconnects,
		Frames: st.Frames, Events: st.Events, SinkErrors: st.SinkErrors, Malformed: st.Malformed,
		Dropped: st.Oversized + st.Overflows, IdleTimeouts: st.IdleTimeouts, Resyncs: st.Resyncs, ResyncErrors: st.ResyncErrors}
	if got := c.StreamStats(); got != want || got.Dropped != 1 {
		t.Errorf("StreamStats: got %+v, want %+v", got, want)
	}
}

// Malformed frames and payloads are counted and skipped; the stream goes on without a
// reconnect.
func TestClientSkipsMalformedFrames(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.URL(), sink)
	logs := &streamtest.Logger{}
	c.Logger = logs
	openClient(t, c, srv)
	srv.EmitRaw([]byte(`not json`))
	srv.EmitRaw([]byte(`{"type":"event","event":"session.message","payload":"a string"}`))
	srv.EmitRaw([]byte(`{"type":"surprise"}`))
	srv.Emit("session.message", messagePayload("agent:main:main", "msg-ok", "fine"))
	streamtest.WaitFor(t, streamtest.Patience, "the event after the malformed ones", func() bool { return sink.Index(withTurn("msg-ok")) >= 0 })
	if st := c.Stats(); st.Malformed != 3 || st.Connects != 1 {
		t.Errorf("stats: got %+v, want 3 malformed on one connection", st)
	}
	// Logged at the 1st and 2nd, not the 3rd.
	if got := logs.Count("skipped a malformed"); got != 2 {
		t.Errorf("malformed log lines: got %d, want 2; logs: %q", got, logs.Lines())
	}
}

// A jump in the event seq means the Gateway dropped events for us: the client resyncs before
// the event that came after the gap, on the same connection.
func TestClientSeqGapResyncs(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.URL(), sink)
	openClient(t, c, srv)
	streamtest.WaitFor(t, streamtest.Patience, "the first resync", func() bool { return c.Stats().Resyncs == 1 })
	srv.SetSessions(sessionRow("agent:main:late", "", "created during the gap"))
	srv.Emit("session.message", messagePayload("agent:main:main", "msg-1", "before the gap"))
	payload, _ := json.Marshal(messagePayload("agent:main:main", "msg-2", "after the gap"))
	srv.EmitRaw(fmt.Appendf(nil, `{"type":"event","event":"session.message","payload":%s,"seq":100000}`, payload))
	streamtest.WaitFor(t, streamtest.Patience, "the event after the gap", func() bool { return sink.Index(withTurn("msg-2")) >= 0 })
	list := sink.Index(named(openclaw.NameSessionsList, "agent:main:late"))
	if list < 0 || list > sink.Index(withTurn("msg-2")) || list < sink.Index(withTurn("msg-1")) {
		t.Errorf("events: got %+v, want the resync's list between the events around the gap", sink.All())
	}
	if st := c.Stats(); st.Gaps != 1 || st.Resyncs != 2 || st.Connects != 1 {
		t.Errorf("stats: got %+v, want 1 gap, 2 resyncs, one connection", st)
	}
}

// A Sink that falls QueueBytes behind costs the connection, never the reader's liveness: the
// connection is dropped, counted, and made again once the Sink catches up.
func TestClientSlowSinkOverflows(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	sink := &blockingSink{release: make(chan struct{})}
	c := newTestClient(t, srv.URL(), sink)
	c.MaxFrameBytes = 16 << 10
	c.QueueBytes = 16 << 10
	openClient(t, c, srv)
	for i := range 64 {
		srv.Emit("session.message", messagePayload("agent:main:main", fmt.Sprintf("msg-%d", i), strings.Repeat("y", 1<<10)))
	}
	streamtest.WaitFor(t, streamtest.Patience, "the overflow", func() bool { return c.Stats().Overflows >= 1 })
	close(sink.release)
	streamtest.WaitFor(t, streamtest.Patience, "a reconnect", func() bool { return c.Stats().Reconnects >= 1 && srv.Subscribed() == 1 })
	if st := c.Stats(); st.IdleTimeouts != 0 {
		t.Errorf("stats: got %+v, want no idle timeout: a slow Sink is not a silent Gateway", st)
	}
}

// blockingSink blocks every event until release is closed or its context ends.
type blockingSink struct{ release chan struct{} }

func (s *blockingSink) Consume(ctx context.Context, _ adapters.Event) error {
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A Sink error is counted and logged, and the stream goes on.
func TestClientSinkErrors(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	sink := &failingSink{}
	c := newTestClient(t, srv.URL(), sink)
	openClient(t, c, srv)
	for i := range 3 {
		srv.Emit("session.message", messagePayload("agent:main:main", fmt.Sprintf("msg-%d", i), "x"))
	}
	streamtest.WaitFor(t, streamtest.Patience, "three refusals", func() bool { return c.Stats().SinkErrors == 3 })
	if st := c.Stats(); st.Connects != 1 || st.Events != 0 {
		t.Errorf("stats: got %+v, want one connection and no accepted event", st)
	}
}

type failingSink struct{}

func (failingSink) Consume(context.Context, adapters.Event) error { return errors.New("disk full") }

// hasClose reports whether closes has a close frame with code on connection n.
func hasClose(closes []gatewaytest.Close, n, code int) bool {
	for _, c := range closes {
		if c.Conn == n && c.Code == code {
			return true
		}
	}
	return false
}

// Once the Sink takes events again after refusing some, the client resyncs on the same
// connection, so what was refused comes back from the Gateway without waiting for a reconnect.
func TestClientResyncsWhatTheSinkRefused(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	sink := &streamtest.RefusingSink{}
	c := newTestClient(t, srv.URL(), sink)
	openClient(t, c, srv)
	streamtest.WaitFor(t, streamtest.Patience, "the first resync", func() bool { return c.Stats().Resyncs == 1 })
	sink.Refuse.Store(true)
	srv.SetSessions(sessionRow("agent:main:lost", "", "refused while the disk was full"))
	srv.Emit("session.message", messagePayload("agent:main:main", "msg-1", "refused"))
	streamtest.WaitFor(t, streamtest.Patience, "the refusal", func() bool { return sink.Refused.Load() > 0 })
	sink.Refuse.Store(false)
	srv.Emit("session.message", messagePayload("agent:main:main", "msg-2", "taken"))
	streamtest.WaitFor(t, streamtest.Patience, "the refused session, read back", func() bool {
		return sink.Index(named(openclaw.NameSessionsList, "agent:main:lost")) >= 0
	})
	if st := c.Stats(); st.Resyncs != 2 || st.Connects != 1 {
		t.Errorf("stats: got %+v, want a second resync on the same connection", st)
	}
}
