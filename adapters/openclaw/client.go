package openclaw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/follow"
)

// Defaults of the Client fields whose zero value means "use the default", and protocol facts
// of OpenClaw 2026.9.6.
const (
	DefaultGatewayURL       = "ws://127.0.0.1:18789" // where a local Gateway listens
	DefaultHandshakeTimeout = 10 * time.Second       // dial, connect.challenge and hello-ok together
	DefaultRequestTimeout   = 30 * time.Second       // OpenClaw's own client waits as long per request
	DefaultBackoffMin       = follow.DefaultBackoffMin
	DefaultBackoffMax       = follow.DefaultBackoffMax
	DefaultMaxFrameBytes    = 25 << 20 // the Gateway's policy.maxPayload
	DefaultQueueBytes       = 64 << 20
	DefaultResyncSessions   = 20
	DefaultListLimit        = 200
	// DefaultTickInterval is the keepalive period assumed until hello-ok advertises its own
	// (policy.tickIntervalMs; 30 s in 2026.9.6).
	DefaultTickInterval = 30 * time.Second

	// MinProtocol and MaxProtocol are the Gateway protocol versions the client offers in
	// connect. OpenClaw 2026.9.6 speaks 4 and refuses an operator whose range leaves it out.
	MinProtocol = 3
	MaxProtocol = 5
	// testedProtocol is the version the client was verified against.
	testedProtocol = 4

	// ClientID and ClientMode are how the client names itself in connect: OpenClaw lets a
	// "gateway-client" in "backend" mode connect over loopback with the shared token and no
	// device identity, and keeps the scopes it asks for.
	ClientID   = "gateway-client"
	ClientMode = "backend"

	// closeGrace bounds each step of a close we start: writing our close frame, then waiting for
	// the Gateway's (OpenClaw's own client allows 250 ms before it cuts the connection).
	closeGrace = 250 * time.Millisecond
	// writeWait bounds writing one frame.
	writeWait = 10 * time.Second
)

// ReadScope is the one operator scope the client asks for: sessions.subscribe, sessions.list,
// sessions.describe and chat.history need it and nothing more, and the Gateway sends session
// events only to connections that hold it.
const ReadScope = "operator.read"

// ErrNotConnected is returned, wrapped, by Describe when the Client has no live connection to
// the Gateway, and when the connection ends before the answer arrives.
var ErrNotConnected = errors.New("not connected to the OpenClaw Gateway")

// Client is one connection to one OpenClaw Gateway: it makes the Gateway handshake
// (connect.challenge → connect → hello-ok), subscribes to session events (sessions.subscribe),
// decodes every event frame into adapters.Events and hands them to Sink, and after every
// (re)connect reads the sessions back (sessions.list, then sessions.describe for sub-agents
// whose parent the list did not name, then chat.history for the sessions updated since their
// transcript was last read), because the Gateway does not replay what a client missed. Describe asks the Gateway about one session on demand.
//
// Lifecycle: NewClient (or a literal with URL and Sink set), then Open, then Close. Open returns
// at once without waiting for the Gateway: the client connects in the background and keeps
// reconnecting, with jittered exponential backoff between BackoffMin and BackoffMax, until Close
// or until the context given to Open is canceled. A connection on which nothing arrives (no
// frame, no pong) for twice the tick interval the Gateway advertised is dropped with close
// code 4000 and made again, as OpenClaw's own client does. A Gateway that refuses the client
// (bad token, protocol mismatch, any 1008 or 4xxx close) is retried only every BackoffMax and
// named once in the log, at Error. A jump in the events' seq numbers (the Gateway dropped events
// for a slow client) resyncs on the same connection. Malformed frames are counted, logged at
// Debug at growing intervals (the 1st, 2nd, 4th, …) and skipped; they never end the stream.
//
// Each connection has one reader goroutine and one writer goroutine, as gorilla/websocket
// allows; requests are matched to responses by id, and fail when their connection ends.
//
// The exported fields are read by Open and must not change afterwards. A Client is not reusable:
// after Close, Open fails. It is an adapters.Stream.
type Client struct {
	// URL is the Gateway's WebSocket URL, ws:// or wss://. Required; no query or fragment.
	// DefaultGatewayURL is the local Gateway's.
	URL string
	// Token is the shared gateway token, sent as connect.params.auth.token. Empty: no auth is
	// sent (a Gateway in auth mode "none"). The Client does not read TokenEnv itself; the
	// Registration's stream constructor does, for a Gateway configured without a token.
	Token string
	// Version is heirloom's version, sent as connect.params.client.version. Empty: "dev".
	Version string
	// Sink receives every decoded event. Required. A Client calls it from one goroutine at a
	// time, in the order the Gateway sent the events (a resync's events come before the events
	// that arrived while it ran), with a context that is canceled by Close. An error is counted
	// and logged and the stream goes on; the next resync restores the sessions and their lineage,
	// and the transcript turns of sessions updated since their history was last read (the
	// latest HistoryLimit rows of each, for ResyncSessions sessions at a time), but not run
	// states. A turn the Sink refused is not sent again until its session changes.
	Sink adapters.Sink
	// Logger logs startup, shutdown, connections and the Gateway's shutdown notices at Info,
	// lost connections, gaps, refused events and failed resyncs at Warn, a Gateway that refuses
	// the client (or grants it no read scope) at Error, and malformed input at Debug; never one
	// Info line per event. Nil: silent.
	Logger adapters.Logger
	// HandshakeTimeout bounds a connection attempt: the WebSocket dial, the Gateway's
	// connect.challenge and its answer to connect. Zero: DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// RequestTimeout bounds each request (sessions.subscribe, sessions.list,
	// sessions.describe, chat.history) unless the caller's context ends sooner. Zero:
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// BackoffMin and BackoffMax bound the wait between connection attempts: it starts at
	// BackoffMin, doubles after each failed attempt up to BackoffMax, is jittered into
	// [d/2, d], and goes back to BackoffMin after a connection that stayed up for twice the
	// tick interval. A refusal waits BackoffMax at once; a Gateway that is starting up is
	// retried after the delay it asks for. Attempts never stop. Zero: DefaultBackoffMin,
	// DefaultBackoffMax.
	BackoffMin, BackoffMax time.Duration
	// MaxFrameBytes is the largest frame the client reads. A larger frame cannot be read: the
	// connection is closed with 1009, counted in Stats.Oversized, and made again (the resync
	// restores the session rows, and backfills the session's transcript turns from chat.history,
	// up to HistoryLimit rows, where the Gateway sends an oversized row as a placeholder, which is
	// skipped). The Gateway's advertised policy.maxPayload bounds what it accepts from us, not
	// what it sends, so it does not lower this limit. Zero: DefaultMaxFrameBytes.
	MaxFrameBytes int64
	// QueueBytes bounds the event frames read but not yet handed to the Sink. The reader never
	// waits for the Sink (so a slow Sink is never mistaken for a silent Gateway); when the Sink
	// falls this far behind, the connection is dropped, counted in Stats.Overflows, and made
	// again, and the resync restores the sessions and lineage it carried and backfills their
	// transcript turns (the latest HistoryLimit rows of each updated session). Zero:
	// DefaultQueueBytes; it must not be below MaxFrameBytes.
	QueueBytes int64
	// ResyncSessions bounds the sessions.describe calls of one resync, and separately its
	// chat.history calls. Describes go to sub-agent sessions the list names without a parent,
	// not described before, in list order; history calls to the sessions whose updatedAt is newer
	// than at their last history call (all of them at the first resync), most recently updated
	// first. The rest wait for the next resync. Zero: DefaultResyncSessions; negative: none.
	ResyncSessions int
	// ListLimit is the limit of a resync's sessions.list: the Gateway returns the most
	// recently updated sessions first (pinned ones before them). Zero: DefaultListLimit.
	ListLimit int

	loop follow.Loop

	// Set by Open, read-only afterwards.
	log            adapters.Logger
	dialer         *websocket.Dialer
	handshakeWait  time.Duration
	requestTimeout time.Duration
	backoff        follow.Backoff // Min and Max only; run copies it
	maxFrameBytes  int64
	queueBytes     int64
	resyncLimit    int // <0: no describe calls
	listLimit      int

	// live is the connection past hello-ok, for Describe; nil between connections.
	live atomic.Pointer[conn]

	// Owned by the loop goroutine.
	described     map[string]bool   // sub-agent keys sessions.describe answered, as of the last resync
	refused       atomic.Bool       // the Sink refused events since the last resync began
	repaired      time.Time         // when the last resync for refused events began
	historySeen   map[string]Millis // key → the updatedAt listed when chat.history last answered for it
	refusalLogged string            // the refusal named in the log since the last good connection
	scopeLogged   bool

	stats counters
}

var (
	_ adapters.Stream    = (*Client)(nil) // and so an io.Closer
	_ adapters.Describer = (*Client)(nil)
)

// NewClient returns a Client for the Gateway at url that hands events to sink. Its optional fields
// are zero, which each field documents as its default: Open applies the defaults, once.
func NewClient(url string, sink adapters.Sink) *Client { return &Client{URL: url, Sink: sink} }

// Open validates the fields and starts the connection loop in the background. It does not wait
// for the Gateway: an unreachable Gateway is retried, not an error. The loop stops when Close
// is called or ctx is canceled; call Close in either case to wait for it. Open fails on a bad
// field, when the Client is already open, and after Close.
func (c *Client) Open(ctx context.Context) error {
	return c.loop.Start(ctx, follow.Settings{Client: "openclaw client", URL: c.URL, Scheme: "ws", Sink: c.Sink,
		Logger: c.Logger, BackoffMin: c.BackoffMin, BackoffMax: c.BackoffMax, Following: "following the Gateway"}, c.setup, c.run)
}

// Close stops the connection loop, closes the connection with 1000 (waiting at most a moment
// for the Gateway's close reply) and waits for every goroutine the Client started. It is safe
// to call more than once, concurrently, and without Open; it always returns nil. A Sink that
// ignores its context can delay it.
func (c *Client) Close() error {
	c.loop.Stop(nil)
	return nil
}

// setup validates the exported fields follow.Settings does not carry and derives what the loop
// reads. Called by Open (through follow.Loop.Start, once it checked the shared ones), with the
// loop locked.
func (c *Client) setup(o follow.Opened) error {
	if c.HandshakeTimeout < 0 || c.RequestTimeout < 0 || c.MaxFrameBytes < 0 || c.QueueBytes < 0 || c.ListLimit < 0 {
		return errors.New("negative HandshakeTimeout, RequestTimeout, MaxFrameBytes, QueueBytes or ListLimit")
	}
	c.log, c.backoff = o.Log, o.Backoff
	c.handshakeWait = follow.OrDefault(c.HandshakeTimeout, DefaultHandshakeTimeout)
	c.requestTimeout = follow.OrDefault(c.RequestTimeout, DefaultRequestTimeout)
	c.maxFrameBytes = follow.OrDefault(c.MaxFrameBytes, DefaultMaxFrameBytes)
	c.queueBytes = follow.OrDefault(c.QueueBytes, DefaultQueueBytes)
	if c.queueBytes < c.maxFrameBytes {
		return fmt.Errorf("QueueBytes %d below MaxFrameBytes %d", c.queueBytes, c.maxFrameBytes)
	}
	c.resyncLimit = follow.OrDefault(c.ResyncSessions, DefaultResyncSessions)
	c.listLimit = follow.OrDefault(c.ListLimit, DefaultListLimit)
	c.dialer = &websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment, // never used for loopback
		HandshakeTimeout: c.handshakeWait,
		// The Gateway does not negotiate permessage-deflate; frames arrive as they are.
		EnableCompression: false,
	}
	c.described = make(map[string]bool)
	c.historySeen = make(map[string]Millis)
	return nil
}

// run is the connection loop: one attempt at a time, a jittered, capped, growing wait between
// attempts, forever until ctx ends.
func (c *Client) run(ctx context.Context) {
	backoff := c.backoff
	failures := 0    // attempts in a row that did not end healthy
	refused := false // the last attempt was refused
	for {
		res := c.attempt(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case res.helloed && res.up >= res.window:
			backoff.Reset()
			failures = 0
		case res.helloed && refused:
			// Accepted again after a refusal: back to growing from BackoffMin, not from
			// BackoffMax.
			backoff.Reset()
		}
		refused = res.refused
		failures++

		wait := backoff.Next()
		switch {
		case res.refused:
			c.stats.refusals.Add(1)
			wait = backoff.Hold()
			if why := res.err.Error(); why != c.refusalLogged {
				c.refusalLogged = why
				args := []any{"error", res.err, "retry_every", c.backoff.Max}
				if hint := refusalHint(res.err); hint != "" {
					args = append(args, "hint", hint)
				}
				c.log.Error("the Gateway refused the connection; retrying until it accepts", args...)
			}
		case res.retryAfter > 0:
			wait = max(res.retryAfter, c.backoff.Min)
			fallthrough
		default:
			if follow.IsPow2(int64(failures)) {
				c.log.Warn("reconnecting", "error", res.err, "attempt", failures, "wait", wait.Round(time.Millisecond))
			}
		}
		if !follow.Sleep(ctx, wait) {
			return
		}
	}
}

// Describe asks the Gateway for one session (sessions.describe {key}) over the live
// connection and returns it decoded; it does not hand the events to the Sink. It fails at once,
// wrapping ErrNotConnected, when the Client has no connection past the handshake, and when the
// connection ends before the answer. It waits at most RequestTimeout, or until ctx ends. A
// refusal by the Gateway is a *RequestError; a malformed answer wraps adapters.ErrMalformed. A
// key the Gateway does not know decodes to no events.
func (c *Client) Describe(ctx context.Context, key string) ([]adapters.Event, error) {
	cn := c.live.Load()
	if cn == nil {
		return nil, fmt.Errorf("describe openclaw session %q: %w", key, ErrNotConnected)
	}
	payload, err := c.call(ctx, cn, "sessions.describe", describeParams{Key: key})
	if err != nil {
		return nil, fmt.Errorf("describe openclaw session %q: %w", key, err)
	}
	evs, err := DecodeSessionDescribe(payload)
	if err != nil {
		return nil, fmt.Errorf("describe openclaw session %q: %w", key, err)
	}
	return evs, nil
}

// ScopeOf returns the memory scope of the session with key: the agentId of the key, lowercase,
// as in Event.Scope. Empty when the key does not parse.
func (c *Client) ScopeOf(key string) string {
	k, err := ParseSessionKey(key)
	if err != nil {
		return ""
	}
	return k.AgentID
}

// describeParams are sessions.describe's params.
type describeParams struct {
	Key string `json:"key"`
}

// consume hands evs to the Sink in order, counting what it accepts and what it refuses. It
// reports whether the Sink took them all, and notes a refusal for the repair (see dispatch).
func (c *Client) consume(ctx context.Context, evs []adapters.Event) bool {
	ok := c.stats.Deliver(ctx, c.Sink, c.log, evs)
	if !ok && ctx.Err() == nil {
		c.refused.Store(true)
	}
	return ok
}

// malformed counts one piece of bad input from the Gateway and logs it at growing intervals.
func (c *Client) malformed(what string, err error) {
	c.stats.Skip(c.log, what, err)
}

// Stats counts what a Client has done since Open, for metrics and tests. Counters only grow.
type Stats struct {
	Connected    bool  // a connection past the handshake is up now
	Protocol     int   // the protocol the last handshake agreed on; 0 before the first
	Connects     int64 // handshakes completed: the first and every reconnect
	Reconnects   int64 // handshakes completed after the first
	Disconnects  int64 // connections past the handshake that ended
	Frames       int64 // frames received, ticks included
	Events       int64 // events the Sink accepted, from the stream and from resyncs
	Malformed    int64 // frames, events and replies skipped as malformed input
	Oversized    int64 // connections dropped on a frame over MaxFrameBytes
	IdleTimeouts int64 // connections dropped because nothing arrived for twice the tick interval
	Overflows    int64 // connections dropped because the Sink fell QueueBytes behind
	Gaps         int64 // jumps in the event seq: events the Gateway dropped for us; each resyncs
	Refusals     int64 // attempts the Gateway refused (auth, protocol, policy)
	Resyncs      int64 // resyncs done: the list read and handed on, the describes and history calls made
	ResyncErrors int64 // requests of a resync that failed; they are retried at the next one
	SinkErrors   int64 // events the Sink refused
}

// counters are the Stats counters: those every stream keeps, and the Gateway's own.
type counters struct {
	follow.Counters
	protocol                              atomic.Int64
	disconnects, overflows, gap, refusals atomic.Int64
}

// Stats returns a snapshot of the counters. Safe to call at any time, from any goroutine.
func (c *Client) Stats() Stats {
	s := &c.stats
	return Stats{
		Connected:    s.Connected.Load(),
		Protocol:     int(s.protocol.Load()),
		Connects:     s.Connects.Load(),
		Reconnects:   s.Reconnects.Load(),
		Disconnects:  s.disconnects.Load(),
		Frames:       s.Frames.Load(),
		Events:       s.Events.Load(),
		Malformed:    s.Malformed.Load(),
		Oversized:    s.Oversized.Load(),
		IdleTimeouts: s.IdleTimeouts.Load(),
		Overflows:    s.overflows.Load(),
		Gaps:         s.gap.Load(),
		Refusals:     s.refusals.Load(),
		Resyncs:      s.Resyncs.Load(),
		ResyncErrors: s.ResyncErrors.Load(),
		SinkErrors:   s.SinkErrors.Load(),
	}
}

// StreamStats returns the counters every adapters.Stream keeps: Stats without the Gateway's
// detail, Dropped being Oversized plus Overflows. Safe to call at any time, from any goroutine.
func (c *Client) StreamStats() adapters.StreamStats {
	st := c.stats.Counters.StreamStats()
	st.Dropped += c.stats.overflows.Load()
	return st
}
