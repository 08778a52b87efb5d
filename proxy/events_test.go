package proxy_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/internal/leaktest"
	"github.com/heirloom-dev/heirloom/proxy"
)

// patience bounds every wait for what should happen within milliseconds, so that a loaded
// machine slows the tests down without failing them.
const patience = 20 * time.Second

// feedURL is the ws:// address of s's live feed with query.
func feedURL(s *proxy.Server, query string) string {
	u := "ws" + strings.TrimPrefix(s.URL(), "http") + "/api/events"
	if query != "" {
		u += "?" + query
	}
	return u
}

// dialFeed opens the live feed with query and header; the connection closes at cleanup.
func dialFeed(t *testing.T, s *proxy.Server, query string, header http.Header) *websocket.Conn {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.Dial(feedURL(s, query), header)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial the feed (?%s): %v (status %d)", query, err, status)
	}
	t.Cleanup(func() { ws.Close() })
	waitFor(t, "the feed's subscription", func() bool { return s.Engine.Feed.Stats().Subscribers > 0 })
	return ws
}

// waitFor polls cond until it holds, failing t after patience.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// readEvents reads events from ws until until returns true for the one just read, failing t
// if the connection ends or patience passes first.
func readEvents(t *testing.T, ws *websocket.Conn, until func(engine.Event) bool) []engine.Event {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(patience))
	var got []engine.Event
	for {
		_, raw, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("read the feed after %v: %v", types(got), err)
		}
		var ev engine.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("a message is not an event: %q: %v", raw, err)
		}
		got = append(got, ev)
		if until(ev) {
			return got
		}
	}
}

// quiet reads ws for d and returns what arrived meanwhile.
func quiet(t *testing.T, ws *websocket.Conn, d time.Duration) []engine.Event {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(d))
	var got []engine.Event
	for {
		_, raw, err := ws.ReadMessage()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return got
		}
		if err != nil {
			t.Fatalf("read the feed: %v", err)
		}
		var ev engine.Event
		json.Unmarshal(raw, &ev)
		got = append(got, ev)
	}
}

func types(evs []engine.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type+"("+ev.Session+")")
	}
	return out
}

func is(typ, session string) func(engine.Event) bool {
	return func(ev engine.Event) bool { return ev.Type == typ && ev.Session == session }
}

// openFeedServer opens a server reading Claude Code transcripts under tr, its live feed tuned
// by feed.
func openFeedServer(t *testing.T, tr cct.Tree, feed proxy.FeedOptions) *proxy.Server {
	return MustOpenServer(t, func(s *proxy.Server) {
		s.Engine.Config.TranscriptRoots = []string{tr.Root}
		s.Engine.Config.SpawnRecordWait = 5 * time.Millisecond
		s.Feed = feed
	})
}

// spawnLifecycle drives one sub-agent's life through Claude Code's hooks, as the engine's own
// TestEvents_SpawnLifecycle does: session S spawns run toolu_1, served by S:agent1.
func spawnLifecycle(t *testing.T, s *proxy.Server, tr cct.Tree) {
	hook(t, s, cct.Event(tr, S, "SessionStart", map[string]any{"source": "startup"}))
	cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "Port the parser."), cct.AssistantLine("a1", "Reading."))
	hook(t, s, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Port the parser."}))
	hook(t, s, cct.Spawn(tr, S, "toolu_1", "Explore", "Find every caller", ""))
	hook(t, s, cct.Start(tr, S, "agent1", "Explore"))
	sub := filepath.Join(filepath.Dir(tr.Transcript), "S", "subagents", "agent-agent1.jsonl")
	cct.AppendLines(t, sub, cct.UserLine("c1", "Find every caller"), cct.AssistantLine("c2", "Three."))
	hook(t, s, cct.Event(tr, S, "SubagentStop", map[string]any{"agent_id": "agent1", "agent_type": "Explore", "agent_transcript_path": sub, "last_assistant_message": "Three."}))
	hook(t, s, cct.Result(tr, S, "toolu_1", "agent1", "Three callers."))
}

// TestEvents_Filters: real WebSocket clients on loopback follow a sub-agent's life through
// the server's hooks, each with its own filter: everything; run events only (the type given
// twice, once as a list); the child's session; another scope, which sees nothing.
func TestEvents_Filters(t *testing.T) {
	leaktest.Check(t)
	tr := cct.NewTree(t, "S")
	s := openFeedServer(t, tr, proxy.FeedOptions{})
	all := dialFeed(t, s, "", nil)
	runs := dialFeed(t, s, "type=run.started&type=run.ended,+spawn.refused", nil)
	child := dialFeed(t, s, "session="+S+":agent1", nil)
	other := dialFeed(t, s, "scope=elsewhere", nil)
	waitFor(t, "four subscribers", func() bool { return s.Engine.Feed.Stats().Subscribers == 4 })

	spawnLifecycle(t, s, tr)

	got := readEvents(t, all, is(engine.EventRunEnded, S))
	find := func(typ, session string) *engine.Event {
		for i := range got {
			if got[i].Type == typ && got[i].Session == session {
				return &got[i]
			}
		}
		return nil
	}
	if ev := find(engine.EventSessionStarted, S); ev == nil || ev.Scope != "default" || ev.Data["harness"] != "claude-code" || ev.Time.IsZero() {
		t.Errorf("session.started for S: %+v", ev)
	}
	if ev := find(engine.EventRunStarted, S); ev == nil || ev.Run != "toolu_1" || ev.Data["child"] != S+":agent1" {
		t.Errorf("run.started: %+v", ev)
	}
	if ev := find(engine.EventBlockInjected, S+":agent1"); ev == nil || ev.Data["block"] != inject.InheritedHeading || ev.Data["chars"].(float64) <= 0 || ev.Data["via"] != "subagent_start" {
		t.Errorf("block.injected for the child: %+v", ev)
	}
	if ev := find(engine.EventRunEnded, S); ev == nil || ev.Run != "toolu_1" || ev.Data["status"] != "completed" {
		t.Errorf("run.ended: %+v", ev)
	}

	gotRuns := readEvents(t, runs, is(engine.EventRunEnded, S))
	if want := []string{"run.started(" + S + ")", "run.ended(" + S + ")"}; !slices.Equal(types(gotRuns), want) {
		t.Errorf("the run subscriber saw %v, want %v", types(gotRuns), want)
	}
	gotChild := readEvents(t, child, is(engine.EventRunEnded, S))
	for _, ev := range gotChild {
		if ev.Session != S+":agent1" && ev.Data["child"] != S+":agent1" {
			t.Errorf("the child's subscriber saw %+v", ev)
		}
	}
	if !slices.ContainsFunc(gotChild, is(engine.EventBlockInjected, S+":agent1")) {
		t.Errorf("the child's subscriber missed its block: %v", types(gotChild))
	}
	if evs := quiet(t, other, 100*time.Millisecond); len(evs) != 0 {
		t.Errorf("the subscriber of another scope saw %v", types(evs))
	}
	// The raw message is the engine.Event's JSON, run omitted where there is none.
	hook(t, s, cct.Event(tr, S2, "SessionStart", map[string]any{"source": "startup"}))
	all.SetReadDeadline(time.Now().Add(patience))
	for {
		_, raw, err := all.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), `"session":"`+S2+`"`) {
			continue
		}
		var m map[string]any
		json.Unmarshal(raw, &m)
		if m["type"] != "session.started" || m["scope"] != "default" || m["time"] == nil || m["data"] == nil {
			t.Errorf("message %s", raw)
		}
		if _, ok := m["run"]; ok {
			t.Errorf("a session event carries run: %s", raw)
		}
		break
	}
}

// TestEvents_Refused: the feed is behind the same checks as the API, and refuses bad queries
// before upgrading.
func TestEvents_Refused(t *testing.T) {
	s := MustOpenServer(t, func(s *proxy.Server) { s.Token = "sekret" })
	auth := http.Header{"Authorization": {"Bearer sekret"}}
	for _, tt := range []struct {
		name   string
		query  string
		header http.Header
		status int
		code   string
		msg    string
	}{
		{"ErrNoToken", "", nil, 401, "unauthorized", "bearer token required"},
		{"ErrWrongToken", "", http.Header{"Authorization": {"Bearer nope"}}, 401, "unauthorized", ""},
		{"ErrCrossOrigin", "", http.Header{"Authorization": {"Bearer sekret"}, "Origin": {"https://evil.example"}}, 403, "forbidden", "cross-origin"},
		{"ErrUnknownParameter", "sesion=S", auth, 400, "invalid", `unknown parameter "sesion"`},
		{"ErrUnknownType", "type=run.started,run.exploded", auth, 400, "invalid", `unknown event type "run.exploded"`},
		{"ErrSessionTwice", "session=a&session=b", auth, 400, "invalid", "session: given 2 times"},
		{"OK", "type=run.ended&session=S&scope=default", auth, 101, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws, resp, err := websocket.DefaultDialer.Dial(feedURL(s, tt.query), tt.header)
			if tt.status == 101 {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				ws.Close()
				return
			}
			if err == nil {
				ws.Close()
				t.Fatalf("dial: got a connection, want %d", tt.status)
			}
			if resp == nil || resp.StatusCode != tt.status {
				t.Fatalf("dial: %v, response %v; want status %d", err, resp, tt.status)
			}
			var body struct{ Error, Code string }
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Code != tt.code || !strings.Contains(body.Error, tt.msg) {
				t.Errorf("body: %+v (%v), want code %q and a message with %q", body, err, tt.code, tt.msg)
			}
		})
	}
	t.Run("ErrNotWebSocket", func(t *testing.T) {
		status, got, _ := do(t, "GET", s.URL()+"/api/events", "", map[string]string{"Authorization": "Bearer sekret"})
		if status != 400 || got["code"] != "invalid" || !strings.Contains(got["error"].(string), "WebSocket") {
			t.Errorf("plain GET: got %d %v", status, got)
		}
		status, got, hdr := do(t, "POST", s.URL()+"/api/events", "", map[string]string{"Authorization": "Bearer sekret"})
		if status != 405 || got["code"] != "method_not_allowed" || hdr.Get("Allow") != "GET" {
			t.Errorf("POST: got %d %v", status, got)
		}
	})
	// The upgrade refuses a cross-origin page by itself, not only behind the caller checks.
	t.Run("ErrCrossOriginUpgrade", func(t *testing.T) {
		bare := httptest.NewServer(s.EventsHandler())
		defer bare.Close()
		u := "ws" + strings.TrimPrefix(bare.URL, "http")
		_, resp, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {"http://evil.example"}})
		if err == nil || resp == nil || resp.StatusCode != 403 {
			t.Fatalf("dial with a foreign Origin: %v, %v; want 403", err, resp)
		}
		ws, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {bare.URL}})
		if err != nil {
			t.Fatalf("dial with our own Origin: %v", err)
		}
		ws.Close()
	})
}

// TestEvents_NeverReadingClient: a client that connects and never reads stalls its connection:
// the server's writes fill the socket and block. Hooks go on answering at their usual pace
// meanwhile, the feed drops the client once it is Buffer events behind, and the server closes
// the connection when the blocked write's deadline passes.
func TestEvents_NeverReadingClient(t *testing.T) {
	leaktest.Check(t)
	const writeTimeout = 2 * time.Second
	s := MustOpenServer(t, func(s *proxy.Server) { s.Feed = proxy.FeedOptions{Buffer: 16, WriteTimeout: writeTimeout} })
	stuck := dialFeed(t, s, "", nil)
	healthy := dialFeed(t, s, "type=session.started", nil)
	healthyGot := make(chan int, 1)
	go func() { // a client that keeps up, for contrast: it is never dropped
		n := 0
		defer func() { healthyGot <- n }()
		for {
			if _, _, err := healthy.ReadMessage(); err != nil {
				return
			}
			n++
		}
	}()

	// Large events fill the stuck client's socket fast; a hook per round shows hooks are not
	// held up by it.
	pad := strings.Repeat("x", 64<<10)
	var slowest time.Duration
	hooks := 0
	for i := 0; s.Engine.Feed.Stats().Dropped == 0; i++ {
		if i == 5000 {
			t.Fatal("the client that never reads was never dropped")
		}
		s.Engine.Feed.Publish(engine.Event{Type: engine.EventCheckpointWritten, Scope: "default", Session: "filler", Data: map[string]any{"pad": pad}})
		start := time.Now()
		if status, _, _ := do(t, "POST", s.URL()+"/hooks/claude-code", fmt.Sprintf(`{"session_id":"5e550000-0000-4000-8000-%012d","cwd":"/tmp","hook_event_name":"SessionStart","source":"startup"}`, i), nil); status != 200 {
			t.Fatalf("hook %d: status %d", i, status)
		}
		slowest = max(slowest, time.Since(start))
		hooks++
	}
	t.Logf("dropped after %d rounds; the slowest hook took %v", hooks, slowest)
	if slowest >= writeTimeout/2 {
		t.Errorf("a hook took %v while a feed client was stuck: hooks waited on the feed", slowest)
	}
	// Hooks after the drop are as quick.
	for i := range 5 {
		start := time.Now()
		do(t, "POST", s.URL()+"/hooks/claude-code", fmt.Sprintf(`{"session_id":"af7e0000-0000-4000-8000-%012d","cwd":"/tmp","hook_event_name":"SessionStart","source":"startup"}`, i), nil)
		if d := time.Since(start); d >= writeTimeout/2 {
			t.Errorf("hook after the drop took %v", d)
		}
	}
	if st := s.Engine.Feed.Stats(); st.Dropped != 1 || st.Subscribers != 1 {
		t.Errorf("feed: %+v, want the stuck client dropped and the healthy one kept", st)
	}
	// The server closes the stuck connection once its blocked write gives up.
	waitFor(t, "the stuck connection closed", func() bool {
		return strings.Contains(metricsBody(t, s), `heirloom_feed_disconnects_total{reason="slow"} 1`)
	})
	stuck.SetReadDeadline(time.Now().Add(patience))
	for {
		if _, _, err := stuck.ReadMessage(); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the stuck client's connection is still open: %v", err)
			}
			break
		}
	}
	body := metricsBody(t, s)
	for _, want := range []string{"heirloom_feed_subscribers 1", "heirloom_feed_dropped_total 1"} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "slow-1") {
		t.Errorf("a session id in a metric")
	}
	healthy.Close()
	if n := <-healthyGot; n < hooks {
		t.Errorf("the healthy client got %d events of %d hooks", n, hooks)
	}
}

// TestEvents_SlowClientToldWhy: a client that reads, but slower than a burst of events
// arrives, gets every event up to the drop, in order, then a close frame saying why.
func TestEvents_SlowClientToldWhy(t *testing.T) {
	leaktest.Check(t)
	s := MustOpenServer(t, func(s *proxy.Server) { s.Feed = proxy.FeedOptions{Buffer: 4} })
	ws := dialFeed(t, s, "", nil)
	for i := 0; s.Engine.Feed.Stats().Dropped == 0; i++ {
		if i == 1_000_000 {
			t.Fatal("never dropped")
		}
		s.Engine.Feed.Publish(engine.Event{Type: engine.EventSessionStarted, Scope: "default", Session: "burst", Data: map[string]any{"seq": i}})
	}
	ws.SetReadDeadline(time.Now().Add(patience))
	n := 0
	for {
		_, raw, err := ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation || !strings.Contains(ce.Text, "too slow") || !strings.Contains(ce.Text, "4 events") {
				t.Fatalf("after %d events: %v, want close 1008 saying the client was too slow", n, err)
			}
			t.Logf("close frame: %d %q", ce.Code, ce.Text)
			break
		}
		var ev engine.Event
		json.Unmarshal(raw, &ev)
		if ev.Data["seq"] != float64(n) {
			t.Fatalf("event %d: got seq %v; events before the drop come in order, none missing", n, ev.Data["seq"])
		}
		n++
	}
	if n < 4 {
		t.Errorf("got %d events before the close, want at least the 4 buffered", n)
	}
	waitFor(t, "the disconnect counted", func() bool {
		return strings.Contains(metricsBody(t, s), `heirloom_feed_disconnects_total{reason="slow"} 1`)
	})
}

// TestEvents_Unresponsive: a client that answers no ping (it never reads, so gorilla never
// answers for it) is closed after two ping intervals, though nothing was published; one that
// reads answers the pings and stays.
func TestEvents_Unresponsive(t *testing.T) {
	leaktest.Check(t)
	t.Run("Silent", func(t *testing.T) {
		s := MustOpenServer(t, func(s *proxy.Server) { s.Feed = proxy.FeedOptions{PingInterval: 50 * time.Millisecond} })
		dialFeed(t, s, "", nil)
		waitFor(t, "the silent client closed", func() bool {
			return strings.Contains(metricsBody(t, s), `heirloom_feed_disconnects_total{reason="unresponsive"} 1`)
		})
		if st := s.Engine.Feed.Stats(); st.Subscribers != 0 || st.Dropped != 0 {
			t.Errorf("feed: %+v, want no subscriber and none dropped for slowness", st)
		}
	})
	t.Run("Reading", func(t *testing.T) {
		// Intervals long enough for a pong's round trip on a loaded machine, and three of them.
		const interval = 300 * time.Millisecond
		s := MustOpenServer(t, func(s *proxy.Server) { s.Feed = proxy.FeedOptions{PingInterval: interval} })
		ws := dialFeed(t, s, "", nil)
		if evs := quiet(t, ws, 3*interval); len(evs) != 0 {
			t.Errorf("got %v", types(evs))
		}
		if st := s.Engine.Feed.Stats(); st.Subscribers != 1 {
			t.Errorf("a client answering pings was closed: %+v", st)
		}
	})
}

// TestEvents_ClientLeaves: a client's close frame ends its connection, subscription and
// goroutines.
func TestEvents_ClientLeaves(t *testing.T) {
	leaktest.Check(t)
	s := MustOpenServer(t, nil)
	ws := dialFeed(t, s, "", nil)
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye")
	if err := ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the subscription ended", func() bool { return s.Engine.Feed.Stats().Subscribers == 0 })
	waitFor(t, "the disconnect counted", func() bool {
		return strings.Contains(metricsBody(t, s), `heirloom_feed_disconnects_total{reason="client"} 1`)
	})
	// A client that just drops its TCP connection is noticed too.
	ws = dialFeed(t, s, "", nil)
	ws.NetConn().Close()
	waitFor(t, "the second disconnect counted", func() bool {
		return strings.Contains(metricsBody(t, s), `heirloom_feed_disconnects_total{reason="client"} 2`)
	})
}

// TestEvents_Shutdown: closing the server tells every client why, promptly, and leaves no
// goroutine behind; a client that stopped reading does not hold Close up.
func TestEvents_Shutdown(t *testing.T) {
	leaktest.Check(t)
	s, closeAll := openServer(t, t.TempDir(), nil)
	ws := dialFeed(t, s, "", nil)
	stuck := dialFeed(t, s, "", nil)
	waitFor(t, "two subscribers", func() bool { return s.Engine.Feed.Stats().Subscribers == 2 })
	pad := strings.Repeat("x", 64<<10)
	for range 200 { // enough to block writes to the client that does not read
		s.Engine.Feed.Publish(engine.Event{Type: engine.EventCheckpointWritten, Session: "filler", Data: map[string]any{"pad": pad}})
	}
	readEvents(t, ws, func(engine.Event) bool { return true })
	ws.SetReadDeadline(time.Now().Add(patience))
	closed := make(chan error, 1)
	go func() {
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				closed <- err
				return
			}
		}
	}()
	start := time.Now()
	closeAll()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	err := <-closed
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway || ce.Text != "heirloom is shutting down" {
		t.Errorf("the reading client got %v, want close 1001 saying heirloom is shutting down", err)
	}
	_ = stuck
}

// FuzzEventsQuery drives GET /api/events with arbitrary queries through the server's handler,
// without the upgrade (a recorder cannot be hijacked): every answer is the API's 400 JSON
// error, for the query or for the missing upgrade, never anything else and never a panic.
func FuzzEventsQuery(f *testing.F) {
	for _, seed := range []string{"", "session=S&type=run.started,run.ended&type=spawn.refused", "type=%zz", "type=,,", "scope=a&scope=b", "sesion=x", "session=%ff%00", "type=session.started;x=y"} {
		f.Add(seed)
	}
	h := MustOpenServer(f, nil).Handler()
	f.Fuzz(func(t *testing.T, query string) {
		u, err := url.ParseRequestURI("/api/events?" + query)
		if err != nil {
			return // not a request line a client could send
		}
		req := (&http.Request{Method: http.MethodGet, URL: u, Host: "127.0.0.1", Header: http.Header{}}).WithContext(t.Context())
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var reply struct{ Error, Code string }
		if rec.Code != 400 || json.Unmarshal(rec.Body.Bytes(), &reply) != nil || reply.Code != "invalid" || reply.Error == "" {
			t.Fatalf("GET %s: %d %q, want 400 invalid", u, rec.Code, rec.Body)
		}
	})
}
