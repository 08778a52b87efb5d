package opencode_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

// The server closes the stream cleanly: the client connects again and resyncs, and the resync
// fetches messages only of the sessions that changed.
func TestClientReconnectsAfterCleanClose(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newFakeServer(t)
	srv.setSessions(sessionInfo("ses_a", 10))
	srv.setMessages("ses_a", messagesReply("ses_a", "prt_a", "text of a"))
	srv.beforeHeaders = func(r *http.Request, n int) {
		if n == 2 {
			// While the client was away, a child session appeared.
			srv.setSessions(sessionInfo("ses_a", 10), sessionInfo("ses_late", 20))
			srv.setMessages("ses_late", messagesReply("ses_late", "prt_late", "text of late"))
		}
	}
	srv.stream = func(w *sseWriter, r *http.Request, n int) {
		w.send(frameConnected)
		if n == 1 {
			w.send(frameSessionCreated("ses_live"))
			return // a clean close
		}
		w.hold(r)
	}
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.start().URL, sink)
	start := time.Now()
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "the resync after the reconnect", func() bool {
		return sink.Index(withText("text of late")) >= 0
	})
	t.Logf("reconnected and resynced in %v", time.Since(start))

	for _, want := range []string{"ses_live", "ses_late"} {
		if sink.Index(forSession(want)) < 0 {
			t.Errorf("no event for session %s", want)
		}
	}
	if sink.Index(withText("text of a")) < 0 {
		t.Errorf("no turn from the first resync")
	}
	_ = c.Close()
	// A loaded machine may add a reconnect (the idle timeout is short), and Close may cut the
	// last connection's resync short: count per connection.
	st := c.Stats()
	if st.Connects < 2 || st.Reconnects != st.Connects-1 || st.Resyncs < 2 || st.Resyncs < st.Connects-1 {
		t.Errorf("stats: got %+v, want 2+ connects, each but the first a reconnect, each resynced", st)
	}
	if got := int64(len(srv.requestsTo("/session"))); got < 2 || got < st.Connects-1 || got > st.Connects {
		t.Errorf("session lists: got %d, want one per connection (%d)", got, st.Connects)
	}
	if got := len(srv.requestsTo("/session/ses_a/message")); got != 1 {
		t.Errorf("message fetches of the unchanged session: got %d, want 1", got)
	}
}

// A 2 MiB event (a large tool output) arrives whole, along with the frames after it.
func TestClientLargeEvent(t *testing.T) {
	streamtest.CheckGoroutines(t)
	big := strings.Repeat("0123456789abcdef", 2<<20/16)
	srv := newFakeServer(t)
	srv.stream = func(w *sseWriter, r *http.Request, n int) {
		w.send(frameConnected)
		w.send(frameTextPart("ses_big", "prt_big", big))
		w.send(frameSessionCreated("ses_after"))
		w.hold(r)
	}
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.start().URL, sink)
	// The library parses a whole frame before handing it on, which the race detector and a
	// loaded machine make slow: the idle timeout has to outlast parsing one frame.
	c.IdleTimeout = opencode.DefaultIdleTimeout
	start := time.Now()
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "the event after the big one", func() bool {
		return sink.Index(forSession("ses_after")) >= 0
	})
	t.Logf("2 MiB event delivered in %v", time.Since(start))
	if sink.Index(withText(big)) < 0 {
		t.Errorf("the 2 MiB text part did not arrive intact")
	}
	if st := c.Stats(); st.Connects != 1 || st.Oversized != 0 {
		t.Errorf("stats: got %+v, want 1 connect, nothing oversized", st)
	}
}

// A frame over MaxEventBytes cannot be read: the connection is dropped, counted, and made again.
func TestClientOversizedEvent(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newFakeServer(t)
	srv.stream = func(w *sseWriter, r *http.Request, n int) {
		w.send(frameConnected)
		if n == 1 {
			w.send(frameTextPart("ses_big", "prt_big", strings.Repeat("x", 128<<10)))
		}
		w.send(frameSessionCreated(fmt.Sprintf("ses_%d", n)))
		w.hold(r)
	}
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.start().URL, sink)
	c.MaxEventBytes = 64 << 10
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "a frame on the second connection", func() bool {
		return sink.Index(forSession("ses_2")) >= 0
	})
	if st := c.Stats(); st.Oversized != 1 || st.Reconnects < 1 {
		t.Errorf("stats: got %+v, want 1 oversized, a reconnect", st)
	}
	// StreamStats is Stats without the OpenCode detail; the oversized frame is a drop.
	_ = c.Close()
	st := c.Stats()
	want := adapters.StreamStats{Connected: st.Connected, Connects: st.Connects, Reconnects: st.Reconnects,
		Frames: st.Frames, Events: st.Events, SinkErrors: st.SinkErrors, Malformed: st.Malformed,
		Dropped: st.Oversized, IdleTimeouts: st.IdleTimeouts, Resyncs: st.Resyncs, ResyncErrors: st.ResyncErrors}
	if got := c.StreamStats(); got != want || got.Dropped != 1 {
		t.Errorf("StreamStats: got %+v, want %+v", got, want)
	}
}

// A server that goes silent (headers, then nothing; or not even headers) is dropped after
// IdleTimeout and connected to again.
func TestClientIdleWatchdog(t *testing.T) {
	cases := []struct {
		name string
		set  func(srv *fakeServer)
	}{
		{"AfterHeaders", func(srv *fakeServer) {
			srv.stream = func(w *sseWriter, r *http.Request, n int) { <-r.Context().Done() }
		}},
		{"AfterFrames", func(srv *fakeServer) {
			srv.stream = func(w *sseWriter, r *http.Request, n int) {
				w.send(frameConnected)
				w.send(frameHeartbeat)
				<-r.Context().Done()
			}
		}},
		{"BeforeHeaders", func(srv *fakeServer) {
			srv.beforeHeaders = func(r *http.Request, n int) {
				if n == 1 {
					<-r.Context().Done()
				}
			}
			srv.stream = func(w *sseWriter, r *http.Request, n int) { <-r.Context().Done() }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			streamtest.CheckGoroutines(t)
			srv := newFakeServer(t)
			tc.set(srv)
			c := newTestClient(t, srv.start().URL, &streamtest.Sink{})
			start := time.Now()
			if err := c.Open(t.Context()); err != nil {
				t.Fatal(err)
			}
			streamtest.WaitFor(t, streamtest.Patience, "a second connection", func() bool { return srv.conns.Load() >= 2 })
			elapsed := time.Since(start)
			t.Logf("second connection after %v", elapsed)
			if elapsed < c.IdleTimeout {
				t.Errorf("reconnected after %v, before the idle timeout %v", elapsed, c.IdleTimeout)
			}
			if st := c.Stats(); st.IdleTimeouts < 1 {
				t.Errorf("stats: got %+v, want an idle timeout", st)
			}
		})
	}
}

// Heartbeats keep a connection alive past IdleTimeout.
func TestClientHeartbeatsKeepAlive(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newFakeServer(t) // its /event sends a heartbeat every 50 ms
	c := newTestClient(t, srv.start().URL, &streamtest.Sink{})
	c.IdleTimeout = time.Second // room for a loaded machine's pauses; still 20 heartbeats
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * c.IdleTimeout)
	if st := c.Stats(); st.Connects != 1 || st.IdleTimeouts != 0 || st.Frames < 10 {
		t.Errorf("stats: got %+v, want one connection, no idle timeout, 10+ frames", st)
	}
}

// Basic auth as user "opencode" goes with every request when Password is set, and the
// directory header when Directory is set; neither otherwise.
func TestClientAuthAndDirectory(t *testing.T) {
	cases := []struct {
		name, password, directory string
		wantAuth, wantDir         string
	}{
		{"None", "", "", "", ""},
		{"Password", "s3cret", "", "Basic " + base64.StdEncoding.EncodeToString([]byte("opencode:s3cret")), ""},
		{"Directory", "", "/home/dev/src/parser", "", "/home/dev/src/parser"},
		{"DirectoryEscaped", "pw", "/tmp/my proj/ü%", "Basic " + base64.StdEncoding.EncodeToString([]byte("opencode:pw")),
			"/tmp/my%20proj/%C3%BC%25"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t)
			srv.setSessions(sessionInfo("ses_a", 1))
			sink := &streamtest.Sink{}
			c := newTestClient(t, srv.start().URL, sink)
			c.Password = tc.password
			c.Directory = tc.directory
			if err := c.Open(t.Context()); err != nil {
				t.Fatal(err)
			}
			streamtest.WaitFor(t, streamtest.Patience, "the resync", func() bool {
				return len(srv.requestsTo("/session/ses_a/message")) > 0
			})
			for _, path := range []string{"/event", "/session", "/session/ses_a/message"} {
				reqs := srv.requestsTo(path)
				if len(reqs) == 0 {
					t.Fatalf("no request to %s", path)
				}
				h := reqs[0].Header
				if got := h.Get("Authorization"); got != tc.wantAuth {
					t.Errorf("%s Authorization: got %q, want %q", path, got, tc.wantAuth)
				}
				if got := h.Get("x-opencode-directory"); got != tc.wantDir {
					t.Errorf("%s x-opencode-directory: got %q, want %q", path, got, tc.wantDir)
				}
				if got := h.Get("Last-Event-ID"); got != "" {
					t.Errorf("%s Last-Event-ID: got %q, want none", path, got)
				}
			}
		})
	}
}

// A server that refuses the password is retried with backoff and never counted as connected.
func TestClientUnauthorized(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newFakeServer(t)
	srv.wrap = func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, pw, _ := r.BasicAuth(); pw != "right" {
				srv.conns.Add(1)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	c := newTestClient(t, srv.start().URL, &streamtest.Sink{})
	c.Password = "wrong"
	logs := &streamtest.Logger{}
	c.Logger = logs
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "three refused attempts", func() bool { return srv.conns.Load() >= 3 })
	if st := c.Stats(); st.Connects != 0 {
		t.Errorf("stats: got %+v, want no connection", st)
	}
	if !logs.Contains("check the OpenCode server password") {
		t.Errorf("logs: got %q, want a hint about the password", logs.Lines())
	}
}

// Malformed frames are counted and skipped; the stream goes on without a reconnect.
func TestClientSkipsMalformedFrames(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newFakeServer(t)
	srv.stream = func(w *sseWriter, r *http.Request, n int) {
		w.send(frameConnected)
		if n == 1 {
			w.send(`not json`)
			w.send(`{"id":"evt_x","type":`)
			w.send(frameSessionCreated("ses_ok")) // sent on this connection only
		}
		w.hold(r)
	}
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.start().URL, sink)
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "the frame after the malformed ones", func() bool {
		return sink.Index(forSession("ses_ok")) >= 0
	})
	if st := c.Stats(); st.Malformed != 2 || st.Frames < 4 {
		t.Errorf("stats: got %+v, want 2 malformed of 4+ frames", st)
	}
}

// Frames the server sends while the resync runs are delivered after the resync's events, so
// nothing falls between the snapshot and the stream.
func TestClientResyncThenBufferedFrames(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newFakeServer(t)
	srv.setSessions(sessionInfo("ses_a", 1))
	sent := make(chan struct{})
	srv.stream = func(w *sseWriter, r *http.Request, n int) {
		w.send(frameConnected)
		w.send(frameTextPart("ses_a", "prt_live", "sent during the resync"))
		if n == 1 {
			close(sent)
		}
		w.hold(r)
	}
	srv.wrap = func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/session" {
				<-sent // list the sessions only once the stream has moved on
			}
			inner.ServeHTTP(w, r)
		})
	}
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.start().URL, sink)
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "the frame sent during the resync", func() bool {
		return sink.Index(withText("sent during the resync")) >= 0
	})
	list := sink.Index(func(ev adapters.Event) bool { return ev.Name == opencode.NameSessionList })
	live := sink.Index(withText("sent during the resync"))
	if list < 0 || list > live {
		t.Errorf("the resync's first event came at %d, after the streamed frame at %d", list, live)
	}
}

// A resync fetches messages of at most ResyncSessions sessions, the most recently updated,
// and later only of the sessions that changed.
func TestClientResyncBounded(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newFakeServer(t)
	var items []string
	for i := range 30 {
		items = append(items, sessionInfo(fmt.Sprintf("ses_%02d", i), int64(100+i)))
	}
	srv.setSessions(items...)
	srv.beforeHeaders = func(r *http.Request, n int) {
		if n == 2 {
			// ses_03 changed while the client was away.
			changed := append([]string(nil), items...)
			changed[3] = sessionInfo("ses_03", 1000)
			srv.setSessions(changed...)
		}
	}
	srv.stream = func(w *sseWriter, r *http.Request, n int) {
		w.send(frameConnected)
		if n == 1 {
			return
		}
		w.hold(r)
	}
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.start().URL, sink)
	c.ResyncSessions = 5
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "the second resync", func() bool { return c.Stats().Resyncs >= 2 })
	streamtest.WaitFor(t, streamtest.Patience, "the second resync's fetch", func() bool {
		return len(srv.requestsTo("/session/ses_03/message")) > 0
	})
	var fetched []string
	for i := range 30 {
		id := fmt.Sprintf("ses_%02d", i)
		if n := len(srv.requestsTo("/session/" + id + "/message")); n > 0 {
			fetched = append(fetched, fmt.Sprintf("%s×%d", id, n))
		}
	}
	want := "ses_03×1 ses_25×1 ses_26×1 ses_27×1 ses_28×1 ses_29×1"
	if got := strings.Join(fetched, " "); got != want {
		t.Errorf("message fetches: got %s, want %s", got, want)
	}
}

// A server whose stream ends at once, every time, without a frame (the broken /event of
// 1.14.42–1.15.4) is named once in the log.
func TestClientBrokenEventStream(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newFakeServer(t)
	srv.stream = func(w *sseWriter, r *http.Request, n int) {}
	c := newTestClient(t, srv.start().URL, &streamtest.Sink{})
	logs := &streamtest.Logger{}
	c.Logger = logs
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "8 connections", func() bool { return srv.conns.Load() >= 8 })
	want := "ERROR OpenCode sends no events; /event is broken in 1.14.42–1.15.4: upgrade"
	if got := logs.Count(want); got != 1 {
		t.Errorf("log lines %q: got %d, want 1; logs: %q", want, got, logs.Lines())
	}
}

// Once the Sink takes events again after refusing some, the client resyncs, so what was refused
// comes back from the server without waiting for a reconnect.
func TestClientResyncsWhatTheSinkRefused(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newFakeServer(t)
	srv.setSessions(sessionInfo("ses_a", 1))
	sink := &streamtest.RefusingSink{}
	sink.Refuse.Store(true)
	next := make(chan struct{})
	srv.stream = func(w *sseWriter, r *http.Request, n int) {
		w.send(frameConnected)
		if n == 1 {
			w.send(frameTextPart("ses_a", "prt_lost", "refused while the disk was full"))
			<-next
			w.send(frameTextPart("ses_b", "prt_next", "taken once space returned"))
		}
		w.hold(r)
	}
	c := newTestClient(t, srv.start().URL, sink)
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The resync's session list, then the streamed part: both refused.
	streamtest.WaitFor(t, streamtest.Patience, "the refusals", func() bool { return sink.Refused.Load() >= 2 })
	// The server has the refused part, as OpenCode keeps it; the sink takes events again.
	srv.setSessions(sessionInfo("ses_a", 2))
	srv.setMessages("ses_a", messagesReply("ses_a", "prt_lost", "refused while the disk was full"))
	sink.Refuse.Store(false)
	close(next)
	streamtest.WaitFor(t, streamtest.Patience, "the refused part, read back", func() bool {
		return sink.Index(withText("refused while the disk was full")) >= 0
	})
	if st := c.Stats(); st.Resyncs != 2 || st.Reconnects != 0 {
		t.Errorf("stats: %+v, want a second resync on the same connection", st)
	}
	if sink.Index(withText("taken once space returned")) < 0 {
		t.Error("the event that was taken is missing")
	}
}
