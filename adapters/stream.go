package adapters

import "context"

// Stream is a long-lived connection to a harness that hands the events it decodes to a Sink: the
// OpenCode SSE client and the OpenClaw Gateway client. Both follow New → Open → Close.
type Stream interface {
	// Open validates the client's settings and starts following the harness in the background; it
	// does not wait for the harness, which is retried until Close or until ctx ends. It fails on
	// bad settings, when already open, and after Close.
	Open(ctx context.Context) error
	// Close stops following and waits for every goroutine Open started. It is safe to call more
	// than once, concurrently, and without Open.
	Close() error
	// StreamStats returns the counters every stream keeps. Safe from any goroutine at any time.
	StreamStats() StreamStats
}

// StreamTarget is one endpoint of a harness that heirloom follows, as configured: an OpenCode
// server, an OpenClaw Gateway.
type StreamTarget struct {
	// URL is the endpoint's address, without credentials. Required.
	URL string
	// Secret authenticates heirloom to the endpoint (OpenCode's server password, OpenClaw's
	// Gateway token). Empty: the harness's own environment variable, read through
	// StreamOptions.Getenv, else none.
	Secret string
	// Directory selects one project instance of a server that serves several (OpenCode). Empty:
	// the server's own working directory; harnesses without instances ignore it.
	Directory string
}

// StreamOptions is what main hands every stream client it builds.
type StreamOptions struct {
	// Sink receives the client's events: the engine. Required.
	Sink Sink
	// Logger is the client's, named for its harness and endpoint. Nil: silent.
	Logger Logger
	// Version is heirloom's version, for a harness that asks its clients to name themselves.
	Version string
	// Getenv reads heirloom's own environment, for a secret the target leaves empty. Nil reads
	// nothing.
	Getenv func(key string) string
}

// Secret returns t.Secret, or when it is empty the environment variable env through Getenv
// ("" when Getenv is nil): where a harness's client finds its credentials.
func (o StreamOptions) Secret(t StreamTarget, env string) string {
	if t.Secret != "" || o.Getenv == nil {
		return t.Secret
	}
	return o.Getenv(env)
}

// NewStream builds the client that follows target and hands its events to opts.Sink. It does
// not connect and fails on nothing: the caller Opens it (which checks its settings) and Closes
// it. A harness's Registration carries its NewStream.
type NewStream func(target StreamTarget, opts StreamOptions) Stream

// StreamStats is what every Stream counts since Open, for metrics (main exports them to
// Prometheus) and tests. The counters only grow; Connected is a gauge. Each client's own Stats
// says more.
type StreamStats struct {
	// Connected is whether a connection to the harness is up now (for OpenClaw: past the
	// handshake).
	Connected bool
	// Connects counts the connections made: the first and every reconnect (for OpenClaw: the
	// handshakes completed).
	Connects int64
	// Reconnects counts the connections made after the first.
	Reconnects int64
	// Frames counts the frames received (SSE frames, WebSocket messages), keepalives included.
	Frames int64
	// Events counts the events the Sink accepted, from the stream and from resyncs.
	Events int64
	// SinkErrors counts the events the Sink refused. They are not offered again; the next resync
	// repairs what it can.
	SinkErrors int64
	// Malformed counts the frames, events and resync replies skipped as malformed input.
	Malformed int64
	// Dropped counts the connections dropped because a frame could not be taken: one over the
	// client's frame size limit, or (OpenClaw) the Sink falling too far behind the stream. The
	// events such a drop loses are repaired by the resync after the reconnect.
	Dropped int64
	// IdleTimeouts counts the connections dropped because nothing arrived for the client's idle
	// window.
	IdleTimeouts int64
	// Resyncs counts the resyncs that read the harness's session list back and handed it on.
	Resyncs int64
	// ResyncErrors counts the requests of a resync that failed; they are retried later.
	ResyncErrors int64
}
