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
