package openclaw_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/openclaw/gatewaytest"
)

// orphanRow is a sub-agent row the list presents without its parent, which sessions.describe
// then supplies.
func orphanRow(srv *gatewaytest.Server, key string) json.RawMessage {
	srv.SetDescribe(key, sessionRow(key, "agent:main:main", "described"))
	return sessionRow(key, "", "listed")
}

func subagentKey(n int) string {
	return fmt.Sprintf("agent:main:subagent:00000000-0000-0000-0000-%012d", n)
}

// After the Gateway drops the connection, and after it restarts on the same port, the client
// connects again and resyncs: the list, then describe for the new sub-agents the list names
// without a parent (once each: those described before are not asked again).
func TestClientReconnectsAndResyncs(t *testing.T) {
	cases := []struct {
		name  string
		cycle func(t *testing.T, srv *gatewaytest.Server)
		code  int // the close code the client sees
	}{
		{"DropConnections", func(t *testing.T, srv *gatewaytest.Server) {
			if n := srv.DropConnections(gatewaytest.CloseServiceRestart, "service restart"); n != 1 {
				t.Fatalf("dropped %d connections, want 1", n)
			}
		}, 1012},
		{"Restart", func(t *testing.T, srv *gatewaytest.Server) {
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
		}, 1012},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			streamtest.CheckGoroutines(t)
			srv := newGateway(t)
			rows := []json.RawMessage{sessionRow("agent:main:main", "", "parent"), orphanRow(srv, subagentKey(0))}
			srv.SetSessions(rows...)
			sink := &streamtest.Sink{}
			c := newTestClient(t, srv.URL(), sink)
			logs := &streamtest.Logger{}
			c.Logger = logs
			openClient(t, c, srv)
			const cycles = 3
			for i := 1; i <= cycles; i++ {
				streamtest.WaitFor(t, streamtest.Patience, fmt.Sprintf("describe on connection %d", i), func() bool {
					return sink.Index(named(openclaw.NameSessionsDescribe, subagentKey(i-1))) >= 0
				})
				// The history calls follow the describes: let this connection's resync finish
				// before dropping it, or the dropped resync never counts.
				streamtest.WaitFor(t, streamtest.Patience, fmt.Sprintf("the resync of connection %d", i), func() bool { return c.Stats().Resyncs >= int64(i) })
				// While the client is away a new sub-agent appears.
				rows = append(rows, orphanRow(srv, subagentKey(i)))
				srv.SetSessions(rows...)
				tc.cycle(t, srv)
				streamtest.WaitFor(t, streamtest.Patience, fmt.Sprintf("connection %d", i+1), func() bool { return c.Stats().Connects == int64(i+1) })
			}
			streamtest.WaitFor(t, streamtest.Patience, "the last describe", func() bool {
				return sink.Index(named(openclaw.NameSessionsDescribe, subagentKey(cycles))) >= 0
			})
			// The history calls follow the describes; the resync counts once they are made.
			streamtest.WaitFor(t, streamtest.Patience, "the last resync", func() bool { return c.Stats().Resyncs >= cycles+1 })

			lists, describes := srv.RequestsFor("sessions.list"), srv.RequestsFor("sessions.describe")
			if len(lists) != cycles+1 || len(describes) != cycles+1 {
				t.Errorf("requests: got %d lists and %d describes, want %d of each", len(lists), len(describes), cycles+1)
			}
			for i, r := range describes {
				if want := fmt.Sprintf(`{"key":%q}`, subagentKey(i)); string(r.Params) != want || r.Conn != lists[i].Conn {
					t.Errorf("describe %d: got %s on connection %d, want %s after the list of that connection", i, r.Params, r.Conn, want)
				}
			}
			if n := sink.Count(named(openclaw.NameSessionsList, "agent:main:main")); n != cycles+1 {
				t.Errorf("list events of the parent: got %d, want one per connection (%d)", n, cycles+1)
			}
			ev := sink.All()[sink.Index(named(openclaw.NameSessionsDescribe, subagentKey(1)))]
			if ev.ParentSessionID != "agent:main:main" {
				t.Errorf("described child: got parent %q, want agent:main:main", ev.ParentSessionID)
			}
			st := c.Stats()
			if st.Reconnects != cycles || st.Disconnects != cycles || st.Resyncs != cycles+1 {
				t.Errorf("stats: got %+v, want %d reconnects, each resynced", st, cycles)
			}
			if got := logs.Count(fmt.Sprintf("closed by the Gateway: %d", tc.code)); got < 1 {
				t.Errorf("logs: got %q, want the close code %d named", logs.Lines(), tc.code)
			}
			// The live e2e tests wait for this line in heirloom serve's log.
			if got := logs.Count("INFO connected to OpenClaw"); got != cycles+1 {
				t.Errorf("connected lines: got %d, want one per connection (%d); logs: %q", got, cycles+1, logs.Lines())
			}
		})
	}
}

// A Gateway that goes quiet (no ticks, no pongs) is dropped once twice the tick interval has
// passed since the last frame, with close code 4000, and connected to again.
func TestClientLiveness(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	c := newTestClient(t, srv.URL(), &streamtest.Sink{})
	openClient(t, c, srv)
	time.Sleep(3 * testTick) // ticks keep it up meanwhile
	if st := c.Stats(); st.Connects != 1 || st.IdleTimeouts != 0 {
		t.Fatalf("stats: got %+v, want one healthy connection", st)
	}
	srv.StopTicking()
	srv.StopPongs()
	quiet := time.Now()
	streamtest.WaitFor(t, streamtest.Patience, "the reconnect", func() bool { return srv.Connects() >= 2 })
	took := time.Since(quiet)
	t.Logf("reconnected %v after the Gateway went quiet (tick %v)", took, testTick)
	// The window runs from the last frame, which came up to one tick before the Gateway went
	// quiet.
	if took < testTick/2 || took > 2*testTick+time.Second {
		t.Errorf("reconnected after %v, want between one and two tick intervals (%v)", took, testTick)
	}
	if st := c.Stats(); st.IdleTimeouts < 1 {
		t.Errorf("stats: got %+v, want an idle timeout", st)
	}
	if !hasClose(srv.Closes(), 1, 4000) {
		t.Errorf("close frames: got %+v, want 4000 (tick timeout) on the first connection", srv.Closes())
	}
}

// Pongs are life too: a Gateway that stops ticking but answers pings keeps the connection.
func TestClientPongsKeepAlive(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	c := newTestClient(t, srv.URL(), &streamtest.Sink{})
	openClient(t, c, srv)
	srv.StopTicking()
	time.Sleep(8 * testTick)
	if st := c.Stats(); st.Connects != 1 || st.IdleTimeouts != 0 {
		t.Errorf("stats: got %+v, want the connection kept by pongs alone", st)
	}
}

// A Gateway that refuses the token is retried only every BackoffMax, is never counted as a
// connection, and is named once in the log, with a hint.
func TestClientAuthFailureBacksOff(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	c := newTestClient(t, srv.URL(), &streamtest.Sink{})
	c.Token = "wrong"
	c.BackoffMax = 200 * time.Millisecond
	logs := &streamtest.Logger{}
	c.Logger = logs
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	const watch = 1200 * time.Millisecond
	time.Sleep(watch)
	attempts := srv.Accepted()
	// The first attempt at once, then one every [BackoffMax/2, BackoffMax]: at most 1+12.
	if attempts < 2 || attempts > 1+int(watch/(c.BackoffMax/2)) {
		t.Errorf("attempts in %v: got %d, want 2 to %d", watch, attempts, 1+int(watch/(c.BackoffMax/2)))
	}
	st := c.Stats()
	if st.Connects != 0 || st.Refusals < 2 {
		t.Errorf("stats: got %+v, want refusals and no connection", st)
	}
	if got := logs.Count("ERROR the Gateway refused the connection; retrying until it accepts error=connect: INVALID_REQUEST (AUTH_TOKEN_MISMATCH)"); got != 1 {
		t.Errorf("refusal log lines: got %d, want 1; logs: %q", got, logs.Lines())
	}
	if got := logs.Count("give heirloom the Gateway's token"); got != 1 {
		t.Errorf("logs: got %q, want a hint about the token", logs.Lines())
	}
	if !hasClose(srv.Closes(), 1, 1008) {
		t.Errorf("close frames: got %+v, want the Gateway's 1008 echoed", srv.Closes())
	}

}

// A Gateway that speaks a protocol outside MinProtocol–MaxProtocol refuses the client with
// PROTOCOL_MISMATCH and 1002; the client backs off and says which protocols it speaks.
func TestClientProtocolMismatch(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := gatewaytest.NewServer(t, gatewaytest.Options{Token: testToken, TickInterval: testTick, Protocol: openclaw.MaxProtocol + 1})
	c := newTestClient(t, srv.URL(), &streamtest.Sink{})
	logs := &streamtest.Logger{}
	c.Logger = logs
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "two refusals", func() bool { return c.Stats().Refusals >= 2 })
	if got := logs.Count("PROTOCOL_MISMATCH"); got != 1 {
		t.Errorf("logs: got %q, want the mismatch named once", logs.Lines())
	}
	if got := logs.Count("speaks Gateway protocols 3–5"); got != 1 {
		t.Errorf("logs: got %q, want the protocols named", logs.Lines())
	}
}

// A Gateway closing an established connection with a policy code (1008, 4xxx) is retried only
// every BackoffMax; a restart (1012) is retried at once.
func TestClientPolicyCloseBacksOff(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	c := newTestClient(t, srv.URL(), &streamtest.Sink{})
	c.BackoffMax = time.Second
	logs := &streamtest.Logger{}
	c.Logger = logs
	openClient(t, c, srv)
	srv.DropConnections(gatewaytest.CloseAuthChanged, "gateway auth changed")
	start := time.Now()
	streamtest.WaitFor(t, streamtest.Patience, "the reconnect", func() bool { return srv.Connects() >= 2 })
	if took := time.Since(start); took < c.BackoffMax/2 {
		t.Errorf("reconnected after %v, want at least BackoffMax/2 (%v) after a 4001", took, c.BackoffMax/2)
	}
	if got := logs.Count("ERROR the Gateway refused the connection; retrying until it accepts error=closed by the Gateway: 4001 gateway auth changed"); got != 1 {
		t.Errorf("logs: got %q, want the 4001 named once", logs.Lines())
	}
	streamtest.WaitFor(t, streamtest.Patience, "the subscription", func() bool { return srv.Subscribed() == 1 })
	srv.DropConnections(gatewaytest.CloseServiceRestart, "service restart")
	start = time.Now()
	streamtest.WaitFor(t, streamtest.Patience, "the reconnect after 1012", func() bool { return srv.Connects() >= 3 })
	if took := time.Since(start); took > c.BackoffMax/2 {
		t.Errorf("reconnected %v after a 1012, want well within BackoffMax/2", took)
	}
	if st := c.Stats(); st.Refusals != 1 {
		t.Errorf("stats: got %+v, want 1 refusal", st)
	}
}

// The Gateway's shutdown notice is logged; the close that follows is an ordinary reconnect.
func TestClientShutdownNotice(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newGateway(t)
	c := newTestClient(t, srv.URL(), &streamtest.Sink{})
	logs := &streamtest.Logger{}
	c.Logger = logs
	openClient(t, c, srv)
	srv.Emit("shutdown", map[string]any{"reason": "gateway restarting", "restartExpectedMs": 1500})
	streamtest.WaitFor(t, streamtest.Patience, "the notice in the log", func() bool {
		return logs.Count("the Gateway is shutting down reason=gateway restarting restart_expected_in=1.5s") == 1
	})
	if st := c.Stats(); st.Malformed != 0 || st.Events != 0 {
		t.Errorf("stats: got %+v, want the notice neither malformed nor an event", st)
	}
	if lines := strings.Join(logs.Lines(), "\n"); strings.Contains(lines, "refused") {
		t.Errorf("logs: got %q, want no refusal", lines)
	}
}
