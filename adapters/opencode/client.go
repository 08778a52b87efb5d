package opencode

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/follow"
)

// Defaults of the Client fields whose zero value means "use the default".
const (
	DefaultIdleTimeout    = 30 * time.Second // OpenCode sends a heartbeat about every 10 s
	DefaultHeaderTimeout  = 5 * time.Second  // a starting OpenCode may never answer an early /event
	DefaultBackoffMin     = follow.DefaultBackoffMin
	DefaultBackoffMax     = follow.DefaultBackoffMax
	DefaultMaxEventBytes  = 32 << 20 // tool outputs make multi-MiB events
	DefaultResyncSessions = 20
	DefaultRESTTimeout    = 30 * time.Second // per REST call of a resync, with the default HTTPClient

	// restBodyFactor bounds a REST reply of a resync to this many times MaxEventBytes: one
	// session's message history holds many events' worth of parts.
	restBodyFactor = 8
	// brokenAfter is how many connections in a row must end at once without a single frame
	// before the client says the server's /event is broken.
	brokenAfter = 3
)

// Client is one connection to one OpenCode server: it subscribes to the server's event stream
// (GET {URL}/event), decodes every frame into adapters.Events and hands them to Sink, and after
// every (re)connect reads the server's state back over REST (GET /session and
// GET /session/{id}/message) because OpenCode does not replay what a client missed.
//
// Lifecycle: NewClient (or a literal with URL and Sink set), then Open, then Close. Open returns
// at once without waiting for the server: the client connects in the background and keeps
// reconnecting, with jittered exponential backoff between BackoffMin and BackoffMax, until Close
// or until the context given to Open is canceled. A connection on which nothing (not even a
// heartbeat) arrives for IdleTimeout is dropped and made again. Malformed frames are counted,
// logged at Debug at growing intervals (the 1st, 2nd, 4th, …) and skipped; they never end the
// stream.
//
// The exported fields are read by Open and must not change afterwards. A Client is not reusable:
// after Close, Open fails. It is an adapters.Stream.
type Client struct {
	// URL is the server's base URL, e.g. "http://127.0.0.1:4096". Required; http or https, no
	// query. A trailing slash is ignored.
	URL string
	// Password, when not empty, is sent with HTTP basic auth as user "opencode" (the server's
	// OPENCODE_SERVER_PASSWORD). Empty: no Authorization header.
	Password string
	// Directory, when not empty, names the project instance to follow: it is sent as the
	// x-opencode-directory header on every request (percent-encoded; the server decodes it once).
	// Empty: the instance of the server's own working directory.
	Directory string
	// Sink receives every decoded event. Required. A Client calls it from one goroutine at a
	// time, with a context that is canceled by Close. An error is counted and logged and the
	// stream goes on; the next resync repairs what was lost.
	Sink adapters.Sink
	// Logger logs startup, shutdown and connections at Info, lost connections, refused events
	// and failed resyncs at Warn, a password the server refuses and a server whose /event sends
	// nothing at Error, and malformed input at Debug; never one Info line per event. Nil: silent.
	Logger adapters.Logger
	// HTTPClient makes the REST calls; the stream uses a copy of it without its Timeout (the
	// read-idle watchdog bounds the stream instead). Nil: a client of our own with
	// DefaultRESTTimeout per call, whose idle connections Close releases.
	HTTPClient *http.Client
	// IdleTimeout is how long the stream may go without receiving a byte, from the request on,
	// before the connection is dropped and made again: it bounds the wait for the response
	// headers too. Time spent in the Sink or in a resync does not count. It must outlast
	// parsing one frame of MaxEventBytes (well under a second). Zero: DefaultIdleTimeout.
	IdleTimeout time.Duration
	// HeaderTimeout bounds the wait for /event's response headers, after which the attempt is
	// dropped and made again. OpenCode 1.18 never answers an /event request that reaches it while
	// it is starting up, while later ones answer in milliseconds, so this is much shorter than
	// IdleTimeout. Zero: the smaller of IdleTimeout and DefaultHeaderTimeout.
	HeaderTimeout time.Duration
	// BackoffMin and BackoffMax bound the wait between connection attempts: it starts at
	// BackoffMin, doubles after each failed attempt up to BackoffMax, is jittered into
	// [d/2, d], and goes back to BackoffMin after a connection that delivered a frame and
	// stayed up for at least IdleTimeout. Attempts never stop. Zero: DefaultBackoffMin,
	// DefaultBackoffMax.
	BackoffMin, BackoffMax time.Duration
	// MaxEventBytes is the largest SSE frame the client reads. A larger frame cannot be read: the
	// connection is dropped, counted in Stats.Oversized, and made again (the resync repairs what
	// the frame carried). REST replies may be up to 8 times as large. Zero: DefaultMaxEventBytes.
	MaxEventBytes int
	// ResyncSessions bounds the work of a resync: messages are fetched only for the sessions
	// created or updated since the previous resync (all sessions, the first time), and of those
	// only the ResyncSessions most recently updated. The rest are taken as synced; their
	// history before this point is not backfilled. Zero: DefaultResyncSessions; negative: no
	// messages are fetched, only the session list.
	ResyncSessions int

	loop follow.Loop

	// Set by Open, read-only afterwards.
	log           adapters.Logger
	base          string // URL without a trailing slash
	headers       map[string]string
	rest, stream  *http.Client
	ownTransport  *http.Transport // ours to release on Close; nil with a caller's HTTPClient
	idle          time.Duration
	headerWait    time.Duration
	backoff       follow.Backoff // Min and Max only; run copies it
	maxEventBytes int
	resyncLimit   int // <0: no message fetches

	// Owned by the loop goroutine.
	seen         map[string]float64 // session id → time.updated at the last successful message fetch
	refused      atomic.Bool        // the Sink refused events since the last resync began
	brokenLogged bool

	stats follow.Counters

	opened atomic.Bool // set once setup derived the fields above: Describe may read them
}

var _ adapters.Stream = (*Client)(nil) // and so an io.Closer

// NewClient returns a Client for the server at url that hands events to sink. Its optional fields
// are zero, which each field documents as its default: Open applies the defaults, once.
func NewClient(url string, sink adapters.Sink) *Client { return &Client{URL: url, Sink: sink} }

// Open validates the fields and starts the connection loop in the background. It does not wait
// for the server: an unreachable server is retried, not an error. The loop stops when Close is
// called or ctx is canceled; call Close in either case to wait for it and release connections.
// Open fails on a bad field, when the Client is already open, and after Close.
func (c *Client) Open(ctx context.Context) error {
	return c.loop.Start(ctx, follow.Settings{Client: "opencode client", URL: c.URL, Scheme: "http", Sink: c.Sink,
		Logger: c.Logger, BackoffMin: c.BackoffMin, BackoffMax: c.BackoffMax, Following: "following /event"}, c.setup, c.run)
}

// Close stops the connection loop, waits for every goroutine the Client started and releases
// its idle connections. It is safe to call more than once, concurrently, and without Open; it
// always returns nil. A Sink that ignores its context can delay it.
func (c *Client) Close() error {
	c.loop.Stop(func() {
		if c.ownTransport != nil {
			c.ownTransport.CloseIdleConnections()
		}
	})
	return nil
}

// setup validates the exported fields follow.Settings does not carry and derives what the loop
// reads. Called by Open (through follow.Loop.Start, once it checked the shared ones), with the
// loop locked.
func (c *Client) setup(o follow.Opened) error {
	if c.IdleTimeout < 0 || c.MaxEventBytes < 0 {
		return errors.New("negative IdleTimeout or MaxEventBytes")
	}
	c.log, c.backoff = o.Log, o.Backoff
	c.base = strings.TrimRight(c.URL, "/")
	c.idle = follow.OrDefault(c.IdleTimeout, DefaultIdleTimeout)
	c.headerWait = follow.OrDefault(c.HeaderTimeout, min(c.idle, DefaultHeaderTimeout))
	c.maxEventBytes = follow.OrDefault(c.MaxEventBytes, DefaultMaxEventBytes)
	c.resyncLimit = follow.OrDefault(c.ResyncSessions, DefaultResyncSessions)

	c.headers = make(map[string]string, 2)
	if c.Password != "" {
		c.headers["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte("opencode:"+c.Password))
	}
	if c.Directory != "" {
		c.headers["x-opencode-directory"] = escapeDirectory(c.Directory)
	}

	if c.HTTPClient != nil {
		c.rest = c.HTTPClient
		stream := *c.HTTPClient
		stream.Timeout = 0
		c.stream = &stream
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		c.ownTransport = t
		c.rest = &http.Client{Transport: t, Timeout: DefaultRESTTimeout}
		c.stream = &http.Client{Transport: t}
	}
	c.seen = make(map[string]float64)
	c.opened.Store(true)
	return nil
}

// run is the connection loop: one attempt at a time, a jittered, capped, growing wait between
// attempts, forever until ctx ends.
func (c *Client) run(ctx context.Context) {
	backoff := c.backoff
	failures := 0 // attempts in a row that did not end healthy
	empty := 0    // connections in a row that ended at once without a frame
	for {
		res := c.attempt(ctx)
		if ctx.Err() != nil {
			return
		}
		healthy := res.frames > 0 && res.up >= c.idle
		if healthy {
			backoff.Reset()
			failures = 0
		}
		failures++

		if res.frames > 0 {
			empty = 0
		} else if res.connected && !res.idle && res.up < c.idle {
			empty++
		}
		if empty >= brokenAfter && !c.brokenLogged {
			c.brokenLogged = true
			c.log.Error("OpenCode sends no events; /event is broken in 1.14.42–1.15.4: upgrade")
		}

		wait := backoff.Next()
		if follow.IsPow2(int64(failures)) {
			logAt := c.log.Warn
			if errors.Is(res.err, errUnauthorized) {
				logAt = c.log.Error
			}
			logAt("reconnecting", "error", res.err, "attempt", failures, "wait", wait.Round(time.Millisecond))
		}
		if !follow.Sleep(ctx, wait) {
			return
		}
	}
}

// consume hands evs to the Sink in order, counting what it accepts and what it refuses. It
// reports whether the Sink took them all.
func (c *Client) consume(ctx context.Context, evs []adapters.Event) bool {
	ok := c.stats.Deliver(ctx, c.Sink, c.log, evs)
	if !ok && ctx.Err() == nil {
		c.refused.Store(true)
	}
	return ok
}

// Stats counts what a Client has done since Open, for metrics and tests. Counters only grow.
type Stats struct {
	Connected    bool  // a stream connection is up now
	Connects     int64 // stream connections made: the first and every reconnect
	Reconnects   int64 // connections made after the first
	Frames       int64 // SSE frames received, heartbeats included
	Events       int64 // events the Sink accepted, from the stream and from resyncs
	Malformed    int64 // frames and REST replies skipped as malformed input
	Oversized    int64 // connections dropped on a frame over MaxEventBytes
	IdleTimeouts int64 // connections dropped by the read-idle watchdog
	Resyncs      int64 // resyncs that listed the sessions successfully
	ResyncErrors int64 // REST calls of a resync that failed; they are retried
	SinkErrors   int64 // events the Sink refused
}

// Stats returns a snapshot of the counters. Safe to call at any time, from any goroutine.
func (c *Client) Stats() Stats {
	s := c.stats.StreamStats()
	return Stats{
		Connected:    s.Connected,
		Connects:     s.Connects,
		Reconnects:   s.Reconnects,
		Frames:       s.Frames,
		Events:       s.Events,
		Malformed:    s.Malformed,
		Oversized:    c.stats.Oversized.Load(),
		IdleTimeouts: s.IdleTimeouts,
		Resyncs:      s.Resyncs,
		ResyncErrors: s.ResyncErrors,
		SinkErrors:   s.SinkErrors,
	}
}

// StreamStats returns the counters every adapters.Stream keeps: Stats without the OpenCode
// detail (Dropped is Oversized). Safe to call at any time, from any goroutine.
func (c *Client) StreamStats() adapters.StreamStats { return c.stats.StreamStats() }

// escapeDirectory percent-encodes dir the way the server expects the x-opencode-directory
// header: it applies decodeURIComponent once. Letters, digits, "/" and the marks
// encodeURIComponent keeps stay as they are, so a plain path is sent unchanged.
func escapeDirectory(dir string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(dir); i++ {
		ch := dir[i]
		switch {
		case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9',
			strings.IndexByte("/-_.!~*'()", ch) >= 0:
			b.WriteByte(ch)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[ch>>4])
			b.WriteByte(hex[ch&15])
		}
	}
	return b.String()
}
