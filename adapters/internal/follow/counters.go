package follow

import (
	"context"
	"sync/atomic"

	"github.com/heirloom-dev/heirloom/adapters"
)

// Counters are the counters of adapters.StreamStats, for a client to keep among its own. Every
// field is safe to use from any goroutine; see adapters.StreamStats for what each counts.
// Oversized counts the connections dropped on a frame over the size limit, which StreamStats
// reports in Dropped.
type Counters struct {
	Connected    atomic.Bool
	Connects     atomic.Int64
	Reconnects   atomic.Int64
	Frames       atomic.Int64
	Events       atomic.Int64
	SinkErrors   atomic.Int64
	Malformed    atomic.Int64
	Oversized    atomic.Int64
	IdleTimeouts atomic.Int64
	Resyncs      atomic.Int64
	ResyncErrors atomic.Int64
}

// Connect counts a connection made: Connected is set, Connects grows, and Reconnects too after
// the first.
func (c *Counters) Connect() {
	c.Connected.Store(true)
	if n := c.Connects.Add(1); n > 1 {
		c.Reconnects.Add(1)
	}
}

// StreamStats returns a snapshot of the counters. Dropped is Oversized; a client that drops
// connections for another reason too adds its own count.
func (c *Counters) StreamStats() adapters.StreamStats {
	return adapters.StreamStats{
		Connected:    c.Connected.Load(),
		Connects:     c.Connects.Load(),
		Reconnects:   c.Reconnects.Load(),
		Frames:       c.Frames.Load(),
		Events:       c.Events.Load(),
		SinkErrors:   c.SinkErrors.Load(),
		Malformed:    c.Malformed.Load(),
		Dropped:      c.Oversized.Load(),
		IdleTimeouts: c.IdleTimeouts.Load(),
		Resyncs:      c.Resyncs.Load(),
		ResyncErrors: c.ResyncErrors.Load(),
	}
}

// Deliver hands evs to sink in order, counting what it accepts (Events) and what it refuses
// (SinkErrors); a refusal is logged at Warn on the 1st, 2nd, 4th, … and the rest still go. It
// stops when ctx ends. It reports whether every event was accepted.
func (c *Counters) Deliver(ctx context.Context, sink adapters.Sink, log adapters.Logger, evs []adapters.Event) bool {
	ok := true
	for _, ev := range evs {
		if err := sink.Consume(ctx, ev); err != nil {
			if ctx.Err() != nil {
				return false
			}
			ok = false
			if n := c.SinkErrors.Add(1); IsPow2(n) {
				log.Warn("the sink refused an event", "event", ev.Name, "session", ev.SessionID, "refusals", n, "error", err)
			}
			continue
		}
		c.Events.Add(1)
	}
	return ok
}

// Skip counts one piece of malformed input from the harness (Malformed) and logs it at Debug on
// the 1st, 2nd, 4th, …; what names it ("frame of 120 bytes", "reply to GET /session").
func (c *Counters) Skip(log adapters.Logger, what string, err error) {
	if n := c.Malformed.Add(1); IsPow2(n) {
		log.Debug("skipped a malformed input", "input", what, "malformed", n, "error", err)
	}
}
