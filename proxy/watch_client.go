package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/heirloom-dev/heirloom/engine"
)

// WatchOptions select what Client.Watch asks the live feed for. Zero fields ask for everything.
type WatchOptions struct {
	// Session keeps events about this session, and run events of runs it spawned or runs as
	// the child of.
	Session string
	// Types keeps events of these types (engine.EventTypes).
	Types []string
	// Scope keeps events of this memory scope; "" keeps every scope's.
	Scope string
	// Connected, when not nil, is called once the feed is open, before the first event.
	Connected func()
}

// watchIdle is how long Watch waits for anything from the sidecar, pings included, before it
// takes the connection for dead: the server pings every DefaultFeedPingInterval.
const watchIdle = 2*DefaultFeedPingInterval + 15*time.Second

// watchCloseWait bounds Watch's goodbye when ctx ends: its close frame, and the wait for the
// sidecar's answer.
const watchCloseWait = time.Second

// FeedClosedError is returned by Watch when the sidecar closed the feed and said why: it is
// shutting down (code 1001), or it dropped this client for falling behind or for not answering
// (1008).
type FeedClosedError struct {
	URL    string
	Code   int    // the WebSocket close code
	Reason string // the sidecar's reason, as sent
}

// Error says who closed the feed and why.
func (e *FeedClosedError) Error() string {
	reason := e.Reason
	if reason == "" {
		reason = "no reason given"
	}
	return fmt.Sprintf("heirloom at %s closed the feed: %s (code %d)", e.URL, reason, e.Code)
}

// ShuttingDown reports whether the sidecar closed the feed because it is stopping.
func (e *FeedClosedError) ShuttingDown() bool { return e.Code == websocket.CloseGoingAway }

// Watch follows the live event feed, GET /api/events, with the filters in opts: it calls fn
// with each event and its message as sent, one at a time, until ctx ends (Watch then closes
// the connection cleanly and returns ctx.Err()), the connection ends, or fn returns an error,
// which is returned as is. It makes one connection; reconnecting is the caller's.
//
// Nothing listening at URL comes back as a *NotRunningError; a refusal (a bad filter, a missing
// token) as an *Error with the sidecar's code and message; the sidecar closing the feed as a
// *FeedClosedError; a connection lost otherwise, or silent for over a minute, as an error
// saying so. Timeout bounds the handshake; c.HTTP is not used (the dialer ignores proxy
// settings, as the sidecar is local).
func (c *Client) Watch(ctx context.Context, opts WatchOptions, fn func(ev engine.Event, raw []byte) error) error {
	u, err := url.Parse(strings.TrimRight(c.URL, "/") + "/api/events")
	if err != nil {
		return fmt.Errorf("heirloom URL %q: %w", c.URL, err)
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return fmt.Errorf("heirloom URL %q: want http:// or https://", c.URL)
	}
	q := url.Values{}
	if opts.Session != "" {
		q.Set("session", opts.Session)
	}
	if opts.Scope != "" {
		q.Set("scope", opts.Scope)
	}
	if len(opts.Types) > 0 {
		q.Set("type", strings.Join(opts.Types, ","))
	}
	u.RawQuery = q.Encode()
	header := http.Header{}
	if c.Token != "" {
		header.Set("Authorization", "Bearer "+c.Token)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	dialer := websocket.Dialer{Proxy: nil, HandshakeTimeout: timeout}
	ws, resp, err := dialer.DialContext(ctx, u.String(), header)
	if err != nil {
		return c.dialError(ctx, resp, err, timeout)
	}
	defer ws.Close()
	if opts.Connected != nil {
		opts.Connected()
	}

	// Ctrl-C: a close frame, then the sidecar's answering one ends the read below (bounded).
	stop := context.AfterFunc(ctx, func() {
		msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
		_ = ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(watchCloseWait))
		_ = ws.NetConn().SetReadDeadline(time.Now().Add(watchCloseWait))
	})
	defer stop()
	alive := func() { _ = ws.SetReadDeadline(time.Now().Add(watchIdle)) }
	ws.SetPingHandler(func(data string) error {
		alive()
		err := ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(watchCloseWait))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	alive()
	for {
		_, raw, err := ws.ReadMessage()
		if err != nil {
			return c.readError(ctx, err)
		}
		alive()
		var ev engine.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("decode an event from heirloom at %s: %w", c.URL, err)
		}
		if err := fn(ev, raw); err != nil {
			return err
		}
	}
}

// dialError explains a failed handshake.
func (c *Client) dialError(ctx context.Context, resp *http.Response, err error, timeout time.Duration) error {
	var opErr *net.OpError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case resp != nil:
		// gorilla keeps the start of a refused handshake's body.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		var e struct{ Error, Code string }
		if json.Unmarshal(body, &e) == nil && e.Code != "" {
			return &Error{Code: e.Code, Message: e.Error}
		}
		return fmt.Errorf("heirloom at %s answered %s to the feed's handshake: %s", c.URL, resp.Status, firstLine(body))
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return &NotRunningError{URL: c.URL, Err: err}
	case isTimeout(err):
		return fmt.Errorf("heirloom at %s did not open the feed within %s", c.URL, timeout)
	}
	return fmt.Errorf("connect to heirloom's feed at %s: %w", c.URL, err)
}

// readError explains why reading the feed stopped.
func (c *Client) readError(ctx context.Context, err error) error {
	var closeErr *websocket.CloseError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &closeErr) && closeErr.Code != websocket.CloseAbnormalClosure:
		return &FeedClosedError{URL: c.URL, Code: closeErr.Code, Reason: closeErr.Text}
	case isTimeout(err):
		return fmt.Errorf("heirloom at %s sent nothing for %s, not even a ping", c.URL, watchIdle)
	}
	return fmt.Errorf("lost the connection to heirloom at %s: %w", c.URL, err)
}
