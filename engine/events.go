package engine

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// The live feed: lifecycle events as they happen, for GET /api/events and `heirloom watch`.
// Most events are read off the store's commits (kv.Store.OnCommit), so every path that changes
// a session or a run, a hook, a stream, a sweep, reports it without remembering to; the blocks
// heirloom hands out are reported where they are built. Publishing never waits: a subscriber
// whose buffer is full is dropped (its channel closed) and counted, so a slow consumer can
// never hold up a hook.

// Event types.
const (
	EventSessionStarted    = "session.started"    // a session heirloom had not seen
	EventSessionEnded      = "session.ended"      // data: status
	EventSessionCompacted  = "session.compacted"  // data: compactions (the epoch)
	EventRunStarted        = "run.started"        // a sub-agent started for a run; data: child, type, depth
	EventRunEnded          = "run.ended"          // data: status, end_reason, child
	EventSpawnRefused      = "spawn.refused"      // data: reason, depth, type, enforced (false: observe mode, the spawn went ahead)
	EventCheckpointWritten = "checkpoint.written" // data: id, trigger
	EventBlockInjected     = "block.injected"     // data: block (its heading), chars, via (hook event or plugin call)
)

// EventTypes lists every event type, in the order above.
var EventTypes = []string{
	EventSessionStarted, EventSessionEnded, EventSessionCompacted, EventRunStarted, EventRunEnded,
	EventSpawnRefused, EventCheckpointWritten, EventBlockInjected,
}

// Event is one message of the live feed. Session is the session it is about (for a run's
// events, the parent that spawned it); Run is the run's id for run and spawn events.
type Event struct {
	Type    string         `json:"type"`
	Time    time.Time      `json:"time"`
	Scope   string         `json:"scope"`
	Session string         `json:"session"`
	Run     string         `json:"run,omitempty"`
	Data    map[string]any `json:"data,omitempty"`
}

// EventFilter selects events for a subscriber. Zero fields match everything.
type EventFilter struct {
	Scope string
	// Session matches events about this session, and run events whose run it spawned or runs
	// as the child of.
	Session string
	Types   []string // any of these types
}

func (f EventFilter) match(ev *Event) bool {
	if f.Scope != "" && ev.Scope != f.Scope {
		return false
	}
	if f.Session != "" && ev.Session != f.Session && ev.Data["child"] != f.Session {
		return false
	}
	return len(f.Types) == 0 || slices.Contains(f.Types, ev.Type)
}

// DefaultSubscriberBuffer is how many events a subscriber may fall behind before it is dropped.
const DefaultSubscriberBuffer = 256

// Feed fans events out to subscribers. The zero value is ready to use.
type Feed struct {
	mu      sync.Mutex
	subs    map[*Subscription]struct{}
	dropped atomic.Uint64
	sent    atomic.Uint64
}

// Subscription is one subscriber's view of the feed: read C until it is closed, which happens
// when the subscriber fell too far behind (Dropped then reports true) or called Close.
type Subscription struct {
	C       <-chan Event
	c       chan Event
	filter  EventFilter
	feed    *Feed
	once    sync.Once
	dropped atomic.Bool
}

// Subscribe returns a subscription to the events filter matches, buffering up to buffer of them
// (0 or less: DefaultSubscriberBuffer). Close it when done.
func (f *Feed) Subscribe(filter EventFilter, buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultSubscriberBuffer
	}
	c := make(chan Event, buffer)
	s := &Subscription{C: c, c: c, filter: filter, feed: f}
	f.mu.Lock()
	if f.subs == nil {
		f.subs = map[*Subscription]struct{}{}
	}
	f.subs[s] = struct{}{}
	f.mu.Unlock()
	return s
}

// Close ends the subscription and closes C. It is safe to call more than once.
func (s *Subscription) Close() {
	s.feed.mu.Lock()
	defer s.feed.mu.Unlock()
	s.close()
}

// close removes s; the caller holds the feed's lock.
func (s *Subscription) close() {
	s.once.Do(func() {
		delete(s.feed.subs, s)
		close(s.c)
	})
}

// Dropped reports whether the feed dropped s because it fell behind.
func (s *Subscription) Dropped() bool { return s.dropped.Load() }

// Publish hands ev to every matching subscriber without waiting; a subscriber with a full
// buffer is dropped.
func (f *Feed) Publish(ev Event) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		if !s.filter.match(&ev) {
			continue
		}
		select {
		case s.c <- ev:
			f.sent.Add(1)
		default:
			s.dropped.Store(true)
			f.dropped.Add(1)
			s.close()
		}
	}
}

// FeedStats are the feed's counters.
type FeedStats struct {
	Subscribers int
	Sent        uint64 // events delivered, summed over subscribers
	Dropped     uint64 // subscribers dropped for falling behind
}

// Stats returns the feed's counters.
func (f *Feed) Stats() FeedStats {
	f.mu.Lock()
	n := len(f.subs)
	f.mu.Unlock()
	return FeedStats{Subscribers: n, Sent: f.sent.Load(), Dropped: f.dropped.Load()}
}

// observe turns the store's committed changes into events (kv.Store.OnCommit). It runs under
// the store's write lock and only publishes.
func (e *Engine) observe(changes []kv.Change) {
	now := e.Now()
	for _, c := range changes {
		switch {
		case c.Session != nil:
			e.observeSession(c.Session, now)
		case c.Run != nil:
			e.observeRun(c.Run, now)
		case c.Checkpoint != nil:
			cp := c.Checkpoint
			e.Feed.Publish(Event{Type: EventCheckpointWritten, Time: now, Scope: cp.Scope, Session: cp.SessionID,
				Data: map[string]any{"id": cp.ID, "trigger": cp.Trigger}})
		}
	}
}

func (e *Engine) observeSession(c *kv.SessionChange, now time.Time) {
	s := c.New
	if !c.Existed {
		data := map[string]any{"harness": s.Harness}
		if s.ParentID != "" {
			data["parent"] = s.ParentID
			data["depth"] = s.Depth
		}
		if s.Project != "" {
			data["project"] = s.Project
		}
		e.Feed.Publish(Event{Type: EventSessionStarted, Time: now, Scope: s.Scope, Session: s.ID, Data: data})
	}
	if s.Status == kv.StatusEnded && (!c.Existed || c.Old.Status != kv.StatusEnded) {
		e.Feed.Publish(Event{Type: EventSessionEnded, Time: now, Scope: s.Scope, Session: s.ID, Data: map[string]any{"status": s.Status}})
	}
	if c.Existed && s.Compactions > c.Old.Compactions {
		e.Feed.Publish(Event{Type: EventSessionCompacted, Time: now, Scope: s.Scope, Session: s.ID, Data: map[string]any{"compactions": s.Compactions}})
	}
}

func (e *Engine) observeRun(c *kv.RunChange, now time.Time) {
	r := c.New
	// A refused run whose harness went ahead after all (see unrefuse) starts and ends like an
	// open one.
	wasOpen := c.Existed && (c.Old.Open() || c.Old.Status == kv.RunRefused && r.Status != kv.RunRefused)
	switch {
	case r.Status == kv.RunRefused && (!c.Existed || c.Old.Status != kv.RunRefused):
		e.Feed.Publish(Event{Type: EventSpawnRefused, Time: now, Scope: r.Scope, Session: r.ParentID, Run: r.ID,
			Data: map[string]any{"reason": r.Reason, "depth": r.Depth, "type": r.Type, "enforced": true}})
		return
	case r.Pending() && r.Reason != "" && (!c.Existed || c.Old.Reason == ""):
		// A spawn over a limit in observe mode (spawn.mode): recorded with the reason a refusal
		// would have given, and going ahead.
		e.Feed.Publish(Event{Type: EventSpawnRefused, Time: now, Scope: r.Scope, Session: r.ParentID, Run: r.ID,
			Data: map[string]any{"reason": r.Reason, "depth": r.Depth, "type": r.Type, "enforced": false}})
	case r.ChildID != "" && (!c.Existed || c.Old.ChildID == "") && (r.Open() || wasOpen):
		e.Feed.Publish(Event{Type: EventRunStarted, Time: now, Scope: r.Scope, Session: r.ParentID, Run: r.ID,
			Data: map[string]any{"child": r.ChildID, "type": r.Type, "depth": r.Depth}})
	}
	if !r.Open() && (!c.Existed || wasOpen) {
		data := map[string]any{"status": r.Status, "end_reason": r.EndReason}
		if r.ChildID != "" {
			data["child"] = r.ChildID
		}
		e.Feed.Publish(Event{Type: EventRunEnded, Time: now, Scope: r.Scope, Session: r.ParentID, Run: r.ID, Data: data})
		e.counts.ended(e.knownHarness(r.Harness), cmp.Or(r.EndReason, "other"))
	}
}

// delivery is what a reply's context came from, for its record: the parent an inherited block
// carries, and how that pairing stood.
type delivery struct {
	session             string // the session it went to, when the event does not say it (a sub-agent's)
	parent, parentScope string
	provisional         bool
}

// blocksInjected reports each block of context, the text heirloom hands session: one
// block.injected per block, with its heading, its length in UTF-16 units (what the harness
// caps) and through what it went (a hook event's kind, or a plugin's inject call); and records
// the delivery (kv.Block), what `heirloom explain` shows: unsynced, about 70 us before the reply
// goes out. A record that fails is logged, and the reply goes out all the same.
func (e *Engine) blocksInjected(scope, session, text, via, harness string, note delivery) {
	if text == "" || session == "" {
		return
	}
	type at struct {
		heading string
		i       int
	}
	var starts []at
	for _, h := range []string{inject.ObjectiveHeading, inject.InheritedHeading, inject.RecoveredHeading} {
		if i := headingAt(text, h); i >= 0 {
			starts = append(starts, at{h, i})
		}
	}
	slices.SortFunc(starts, func(a, b at) int { return a.i - b.i })
	headings := make([]string, 0, len(starts))
	for _, st := range starts {
		headings = append(headings, st.heading)
	}
	defer e.recordBlock(scope, session, text, via, harness, headings, note)
	if len(starts) == 0 {
		starts = []at{{"", 0}}
	}
	now := e.Now()
	for k, st := range starts {
		end := len(text)
		if k+1 < len(starts) {
			end = starts[k+1].i
		}
		chars := inject.Len(strings.TrimSpace(text[st.i:end]))
		e.Feed.Publish(Event{Type: EventBlockInjected, Time: now, Scope: scope, Session: session,
			Data: map[string]any{"block": st.heading, "chars": chars, "via": via}})
		kind := blockKind(st.heading)
		if kind == "other" && via == "inject:compacting" {
			kind = BlockCompaction // the objective a compaction summary must keep: no heading of its own
		}
		e.counts.delivered(e.knownHarness(harness), kind, chars)
	}
}

// recordBlock stores one delivery (see blocksInjected), holding headings, in the text's order.
func (e *Engine) recordBlock(scope, session, text, via, harness string, headings []string, note delivery) {
	b := kv.Block{Scope: scope, SessionID: session, At: e.Now(), Via: via, Harness: harness, Headings: headings,
		Chars: inject.Len(text), Cut: cutNote(text), Text: text}
	if slices.Contains(headings, inject.InheritedHeading) {
		b.ParentID, b.ParentScope, b.Provisional = note.parent, note.parentScope, note.provisional
	}
	base := e.ctx
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := context.WithTimeout(base, 5*time.Second)
	defer cancel()
	if err := e.Store.RecordBlock(ctx, b); err != nil {
		e.warn("delivered block not recorded", err, "session", session)
	}
}

// cutNote is the "(cut to fit: …)" line of a block, "" when it has none.
func cutNote(text string) string {
	i := headingAt(text, "(cut to fit:")
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(text[i:], "\n")
	return line
}

// headingAt returns where heading starts a line of text, or -1.
func headingAt(text, heading string) int {
	for off := 0; ; {
		i := strings.Index(text[off:], heading)
		if i < 0 {
			return -1
		}
		i += off
		if i == 0 || text[i-1] == '\n' {
			return i
		}
		off = i + 1
	}
}
