package proxy

// GET /api/events: the engine's live feed (engine.Feed) over a WebSocket, one JSON message per
// event, the engine.Event as it was published. The feed never waits for a client: each client
// has a bounded subscription, and one that falls behind is dropped by the feed, its connection
// closed with a close frame saying why. The server pings every client and closes one that stops
// answering; every write has a deadline; Close ends every connection, since
// http.Server.Shutdown neither closes nor waits for hijacked ones.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/heirloom-dev/heirloom/engine"
)

// Defaults of FeedOptions.
const (
	DefaultFeedPingInterval = 30 * time.Second
	DefaultFeedWriteTimeout = 10 * time.Second
)

// FeedOptions tune GET /api/events. The zero value takes the defaults.
type FeedOptions struct {
	// Buffer is how many events a client may fall behind before the feed drops it: its
	// connection is then closed with code 1008 and a reason. Zero or less means
	// engine.DefaultSubscriberBuffer.
	Buffer int
	// PingInterval is how often the server pings each client. A client from which nothing,
	// pongs included, arrived for two intervals is closed as unresponsive. Zero or less means
	// DefaultFeedPingInterval.
	PingInterval time.Duration
	// WriteTimeout bounds writing one message to a client; a client that does not take it in
	// time is closed. Zero or less means DefaultFeedWriteTimeout.
	WriteTimeout time.Duration
}

func (o FeedOptions) buffer() int {
	if o.Buffer <= 0 {
		return engine.DefaultSubscriberBuffer
	}
	return o.Buffer
}

func (o FeedOptions) pingInterval() time.Duration {
	if o.PingInterval <= 0 {
		return DefaultFeedPingInterval
	}
	return o.PingInterval
}

func (o FeedOptions) writeTimeout() time.Duration {
	if o.WriteTimeout <= 0 {
		return DefaultFeedWriteTimeout
	}
	return o.WriteTimeout
}

// feedCloseGrace bounds each step of closing a feed connection: waiting for the client's answer
// to our close frame, and a write still blocked on a client once the server closes.
const feedCloseGrace = time.Second

// feedReadLimit caps a message from a feed client. Clients have nothing to say; control frames
// are at most 125 bytes.
const feedReadLimit = 4096

// Why a feed connection ended: the reason label of heirloom_feed_disconnects_total.
const (
	feedClient       = "client"       // the client closed the connection or went away
	feedSlow         = "slow"         // the feed dropped it for falling behind
	feedUnresponsive = "unresponsive" // no pong within two ping intervals, or a write timed out
	feedShutdown     = "shutdown"     // the server closed
)

// feedReasons lists every reason, for pre-creating the counter's series.
var feedReasons = []string{feedClient, feedSlow, feedUnresponsive, feedShutdown}

// feedConns tracks the open feed connections so that Close can end them and wait.
type feedConns struct {
	mu     sync.Mutex
	closed bool
	ctx    context.Context // cancelled by close: every connection says goodbye
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// open makes the context the connections live under.
func (f *feedConns) open() { f.ctx, f.cancel = context.WithCancel(context.Background()) }

// enter counts a new connection in, or returns false once close has begun (or before open).
// A true return must be matched by f.wg.Done.
func (f *feedConns) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.ctx == nil {
		return false
	}
	f.wg.Add(1)
	return true
}

// close tells every connection to close (1001, "heirloom is shutting down") and waits for them
// until ctx ends. Each takes at most about two feedCloseGrace.
func (f *feedConns) close(ctx context.Context) error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	if f.cancel == nil {
		return nil
	}
	f.cancel()
	done := make(chan struct{})
	go func() {
		f.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close live feed connections: %w", ctx.Err())
	}
}

// serveEvents serves GET /api/events: it checks the query, upgrades to a WebSocket and sends
// every event the filter matches until the client goes, falls behind, stops answering pings,
// or the server closes.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	filter, err := eventFilter(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		s.writeError(w, r, Errorf(ECodeInvalid, "GET /api/events is a WebSocket: send Connection: Upgrade and Upgrade: websocket (heirloom watch does)"))
		return
	}
	if !s.feeds.enter() {
		s.writeError(w, r, Errorf(ECodeUnavailable, "heirloom is shutting down"))
		return
	}
	defer s.feeds.wg.Done()
	up := websocket.Upgrader{
		HandshakeTimeout: s.Feed.writeTimeout(),
		CheckOrigin:      sameOrigin,
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			s.writeError(w, r, upgradeError(status, reason))
		},
	}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // answered through up.Error
	}
	sub := s.Engine.Feed.Subscribe(filter, s.Feed.buffer())
	reason := s.follow(ws, sub)
	s.metrics.feedClosed(reason)
	switch reason {
	case feedSlow:
		s.Logger.Warn("live feed client dropped: it fell behind", "remote", r.RemoteAddr, "buffer", s.Feed.buffer())
	case feedUnresponsive:
		s.Logger.Warn("live feed client closed: it stopped answering", "remote", r.RemoteAddr)
	}
}

// follow sends sub's events over ws until the connection ends, then closes both and returns
// why it ended. It runs on the request's goroutine, the only writer of data frames, beside one
// reader goroutine, which it waits for.
func (s *Server) follow(ws *websocket.Conn, sub *engine.Subscription) string {
	defer sub.Close()
	ctx := s.feeds.ctx
	interval, writeTimeout := s.Feed.pingInterval(), s.Feed.writeTimeout()
	// When the server closes, a write blocked on a client that stopped reading gives up soon.
	stop := context.AfterFunc(ctx, func() { _ = ws.NetConn().SetWriteDeadline(time.Now().Add(feedCloseGrace)) })
	defer stop()

	// The reader is the only caller of NextReader. It discards what the client sends and
	// answers its pings; anything arriving, pongs included, proves the client alive for two
	// more ping intervals. It ends when the connection does.
	alive := func() { _ = ws.SetReadDeadline(time.Now().Add(2 * interval)) }
	ws.SetReadLimit(feedReadLimit)
	ws.SetPongHandler(func(string) error { alive(); return nil })
	ws.SetPingHandler(func(data string) error {
		alive()
		err := ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(writeTimeout))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	alive()
	readerDone := make(chan struct{})
	var readErr error // set before readerDone closes
	go func() {
		defer close(readerDone)
		for {
			if _, _, err := ws.NextReader(); err != nil {
				readErr = err
				return
			}
			alive()
		}
	}()
	readerEnded := func() bool {
		select {
		case <-readerDone:
			return true
		default:
			return false
		}
	}
	// why names the reason a write failed with err.
	why := func(err error) string {
		switch {
		case ctx.Err() != nil:
			return feedShutdown
		case sub.Dropped():
			return feedSlow
		case readerEnded():
			return readReason(readErr)
		case isTimeout(err):
			return feedUnresponsive
		}
		return feedClient
	}

	ping := time.NewTicker(interval)
	defer ping.Stop()
	reason := ""
	for reason == "" {
		if ctx.Err() != nil { // select picks at random among ready cases: shutdown first
			reason = feedShutdown
			break
		}
		select {
		case <-ctx.Done():
			reason = feedShutdown
		case <-readerDone:
			reason = readReason(readErr)
		case <-ping.C:
			if err := ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeTimeout)); err != nil {
				reason = why(err)
			}
		case ev, ok := <-sub.C:
			if !ok { // only the feed closes C while we hold it: it dropped us
				reason = feedSlow
				break
			}
			if err := s.writeEvent(ws, ev, writeTimeout); err != nil {
				reason = why(err)
			}
		}
	}

	// Say why, unless the client left first; then wait briefly for its answering close frame.
	var code int
	var text string
	switch reason {
	case feedSlow:
		code, text = websocket.ClosePolicyViolation, fmt.Sprintf("too slow: fell %d events behind, dropped; reconnect", s.Feed.buffer())
	case feedUnresponsive:
		code, text = websocket.ClosePolicyViolation, "unresponsive: no pong or a write timed out"
	case feedShutdown:
		code, text = websocket.CloseGoingAway, "heirloom is shutting down"
	}
	if code != 0 && !readerEnded() {
		msg := websocket.FormatCloseMessage(code, text)
		if ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(feedCloseGrace)) == nil {
			select {
			case <-readerDone:
			case <-time.After(feedCloseGrace):
			}
		}
	}
	_ = ws.Close()
	<-readerDone
	return reason
}

// writeEvent sends ev as one text message within timeout.
func (s *Server) writeEvent(ws *websocket.Conn, ev engine.Event, timeout time.Duration) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		// Event data are strings and numbers; should one not encode, the client misses it and
		// the log says why.
		s.Logger.Error("encode live feed event", "type", ev.Type, "error", err)
		return nil
	}
	if err := ws.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	return ws.WriteMessage(websocket.TextMessage, bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// readReason names why the reader stopped: silence past its deadline is an unresponsive
// client; a close frame, EOF or reset is a client that left.
func readReason(err error) string {
	if isTimeout(err) {
		return feedUnresponsive
	}
	return feedClient
}

// eventFilter reads GET /api/events' query: session, scope (each at most once), and type,
// which may be given more than once and may hold a comma-separated list; every type must be
// one of engine.EventTypes. Anything else is a 400.
func eventFilter(r *http.Request) (engine.EventFilter, error) {
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return engine.EventFilter{}, Errorf(ECodeInvalid, "query: "+err.Error())
	}
	var types []string
	for _, v := range vals["type"] {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimSpace(t)
			switch {
			case t == "" || slices.Contains(types, t):
			case !slices.Contains(engine.EventTypes, t):
				return engine.EventFilter{}, Errorf(ECodeInvalid, fmt.Sprintf("type: unknown event type %q: want any of %s", t, strings.Join(engine.EventTypes, ", ")))
			default:
				types = append(types, t)
			}
		}
	}
	delete(vals, "type")
	p, err := parseValues(vals, "session", "type", "scope")
	if err != nil {
		return engine.EventFilter{}, err
	}
	return engine.EventFilter{Scope: p["scope"], Session: p["session"], Types: types}, nil
}

// upgradeError turns a failed WebSocket handshake into the API's error.
func upgradeError(status int, reason error) error {
	switch status {
	case http.StatusForbidden:
		return Errorf(ECodeForbidden, "cross-origin requests not allowed")
	case http.StatusMethodNotAllowed:
		return Errorf(ECodeMethodNotAllowed, reason.Error())
	case http.StatusBadRequest:
		return Errorf(ECodeInvalid, reason.Error())
	}
	return fmt.Errorf("upgrade to websocket: %w", reason) // internal: logged, hidden
}
