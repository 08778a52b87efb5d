package openclaw

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/follow"
)

// HistoryLimit is the limit of a resync's chat.history calls: the most recent transcript rows
// of a session read back, at most. Older turns missed while disconnected stay missed.
const HistoryLimit = 200

// listParams are the params of a resync's sessions.list (SessionsListParamsSchema is a closed
// object: limit, offset, sortBy, spawnedBy, agentId, excludeSubagents, archived, …; there is no
// includeSubagents, and sub-agents are listed unless excludeSubagents is set).
type listParams struct {
	Limit int `json:"limit"`
}

// follow subscribes to session events, resyncs, then hands the queued events to the Sink, in
// order, until the connection ends or ctx does. It returns why it stopped.
//
// The subscription comes first, so that nothing falls between the snapshot and the stream:
// events that arrive while the resync runs wait in the queue and follow the resync's events.
// sessions.subscribe {} only subscribes; the list is a request of its own.
func (c *Client) follow(ctx context.Context, cn *conn) error {
	if _, err := c.call(ctx, cn, "sessions.subscribe", struct{}{}); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	if err := c.resync(ctx, cn); err != nil {
		return err
	}
	for {
		if it, ok := cn.events.pop(); ok {
			if err := c.dispatch(ctx, cn, it); err != nil {
				return err
			}
			continue
		}
		select {
		case <-cn.events.ready:
		case <-cn.done:
			// Hand on what was read before the end; the resyncs it asked for need a
			// connection, and the next one resyncs anyway.
			for ctx.Err() == nil {
				it, ok := cn.events.pop()
				if !ok {
					break
				}
				if !it.resync {
					c.event(ctx, it.frame)
				}
			}
			return cn.ended()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// dispatch handles one queued item; an error ends the connection.
func (c *Client) dispatch(ctx context.Context, cn *conn, it queued) error {
	if it.resync {
		if n := c.stats.gap.Load(); follow.IsPow2(n) {
			c.log.Warn("the Gateway skipped events; resyncing", "from_seq", it.gap[0], "to_seq", it.gap[1]-1, "gaps", n)
		}
		return c.resync(ctx, cn)
	}
	if c.event(ctx, it.frame) && c.refused.Load() && time.Since(c.repaired) >= follow.RepairEvery {
		// The Sink takes events again after refusing some: read back what it refused.
		c.repaired = time.Now()
		c.log.Info("the sink takes events again: resyncing to read back what it refused")
		return c.resync(ctx, cn)
	}
	return nil
}

// event decodes one event frame and hands its events to the Sink. A malformed payload is
// counted, logged at growing intervals, and skipped. It reports whether the Sink took events
// of it (a frame with none, or refused, is false).
func (c *Client) event(ctx context.Context, f Frame) bool {
	if f.Event == "shutdown" {
		var p struct {
			Reason            string `json:"reason"`
			RestartExpectedMs int64  `json:"restartExpectedMs"`
		}
		_ = json.Unmarshal(f.Payload, &p)
		args := []any{"reason", p.Reason}
		if p.RestartExpectedMs > 0 {
			args = append(args, "restart_expected_in", time.Duration(p.RestartExpectedMs)*time.Millisecond)
		}
		c.log.Info("the Gateway is shutting down", args...)
		return false
	}
	evs, err := DecodeEvent(f.Event, f.Payload)
	if err != nil {
		c.malformed(f.Event+" event", err)
		return false
	}
	return len(evs) > 0 && c.consume(ctx, evs)
}

// call makes one request on cn, bounded by RequestTimeout.
func (c *Client) call(ctx context.Context, cn *conn, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout)
	defer cancel()
	return cn.request(ctx, method, params)
}

// resync reads the Gateway's sessions back after a (re)connect or a gap in the events, because
// the Gateway replays nothing: sessions.list (the ListLimit most recently updated sessions, as
// DecodeSessionList sees them), then sessions.describe for sub-agents the list names without a
// parent, bounded by ResyncSessions, then chat.history for the sessions updated since their
// transcript was last read back (see backfill). A list that fails in transit is returned: the
// connection is dropped and made again. A list the Gateway refuses, and malformed replies, are
// counted and skipped: they would fail the same way again. A failed describe or history call is
// counted and retried at the next resync; the rest of the resync goes on.
func (c *Client) resync(ctx context.Context, cn *conn) error {
	c.refused.Store(false) // what was refused so far is read back now
	payload, err := c.call(ctx, cn, "sessions.list", listParams{Limit: c.listLimit})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.stats.ResyncErrors.Add(1)
		var re *RequestError
		if errors.As(err, &re) {
			c.log.Warn("resync: the Gateway refused sessions.list", "error", err)
			return nil
		}
		return fmt.Errorf("resync: %w", err)
	}
	evs, err := DecodeSessionList(payload)
	if err != nil {
		c.malformed("sessions.list reply", err)
		return nil
	}
	c.consume(ctx, evs)
	if err := c.describeOrphans(ctx, cn, evs); err != nil {
		return err
	}
	if err := c.backfill(ctx, cn, payload); err != nil {
		return err
	}
	c.stats.Resyncs.Add(1)
	return nil
}

// historyParams are the params of a resync's chat.history (ChatHistoryParamsSchema is a closed
// object: sessionKey, agentId, cursor, limit (1–1000), maxBytes, offset, pendingBefore,
// inputRunIds, messageId, sessionId, maxChars).
type historyParams struct {
	SessionKey string `json:"sessionKey"`
	Limit      int    `json:"limit"`
}

// listStamp is what backfill reads of a sessions.list row.
type listStamp struct {
	Key       string `json:"key"`
	UpdatedAt Millis `json:"updatedAt"`
}

// backfill reads back the transcripts the stream may have missed: chat.history {sessionKey,
// limit: HistoryLimit} for the sessions in list (a sessions.list result) whose updatedAt is
// newer than at the last successful history call for the key (every session, the first time),
// most recently updated first, at most resyncLimit of them; their turns go to the Sink as
// DecodeChatHistory gives them, with the Turn IDs the stream gives, so turns already delivered
// are replaced in place. Sessions past the limit, and failed calls, are left for the next
// resync; a malformed reply is counted and not asked for again until the session changes. Keys
// that left the list are forgotten. It returns an error only when the connection or ctx ended.
func (c *Client) backfill(ctx context.Context, cn *conn, list json.RawMessage) error {
	if c.resyncLimit < 0 {
		return nil
	}
	var l struct {
		Sessions []json.RawMessage `json:"sessions"`
	}
	_ = json.Unmarshal(list, &l) // DecodeSessionList took it
	stamps := make([]listStamp, 0, len(l.Sessions))
	for _, raw := range l.Sessions {
		var s listStamp
		if adapters.UnmarshalObject(raw, &s); s.Key != "" {
			stamps = append(stamps, s)
		}
	}
	slices.SortStableFunc(stamps, func(a, b listStamp) int { return cmp.Compare(b.UpdatedAt, a.UpdatedAt) })

	next := make(map[string]Millis, len(stamps))
	ended := false
	defer func() {
		if ended { // the rest of the list was not looked at: forget nothing yet
			for key, at := range c.historySeen {
				if _, ok := next[key]; !ok {
					next[key] = at
				}
			}
		}
		c.historySeen = next
	}()
	keep := func(key string) { // as it was: fetched before, or never
		if at, ok := c.historySeen[key]; ok {
			next[key] = at
		}
	}
	fetched := 0
	for _, s := range stamps {
		if _, dup := next[s.Key]; dup {
			continue
		}
		if prev, ok := c.historySeen[s.Key]; ok && s.UpdatedAt <= prev {
			next[s.Key] = prev
			continue
		}
		if fetched >= c.resyncLimit {
			keep(s.Key)
			continue
		}
		fetched++
		payload, ok, err := c.resyncCall(ctx, cn, "chat.history", s.Key, historyParams{SessionKey: s.Key, Limit: HistoryLimit})
		if err != nil {
			ended = true
			return err
		}
		if !ok {
			keep(s.Key)
			continue
		}
		next[s.Key] = s.UpdatedAt
		evs, err := DecodeChatHistory(s.Key, payload)
		if err != nil {
			c.malformed("chat.history reply", err)
			continue
		}
		c.consume(ctx, evs)
	}
	return nil
}

// describeOrphans calls sessions.describe for the sub-agent sessions in evs (a session list)
// that name no parent, in list order, at most resyncLimit of them, skipping those described at
// an earlier resync (spawnedBy is written once, at creation: a second answer would say the
// same). It returns an error only when the connection or ctx ended.
func (c *Client) describeOrphans(ctx context.Context, cn *conn, evs []adapters.Event) error {
	if c.resyncLimit < 0 {
		return nil
	}
	parented := make(map[string]bool, len(evs))
	var orphans []string
	for _, ev := range evs {
		switch {
		case ev.SessionID == "" || parented[ev.SessionID]:
		case ev.ParentSessionID != "":
			parented[ev.SessionID] = true
		default:
			if k, err := ParseSessionKey(ev.SessionID); err == nil && k.IsSubagent() {
				orphans = append(orphans, ev.SessionID)
			}
		}
	}
	next := make(map[string]bool, len(orphans))
	ended := false
	defer func() {
		if ended { // the rest of the list was not looked at: forget nothing yet
			for key := range c.described {
				next[key] = true
			}
		}
		c.described = next
	}()
	fetched := 0
	for _, key := range orphans {
		if parented[key] || next[key] {
			continue
		}
		if c.described[key] {
			next[key] = true
			continue
		}
		if fetched >= c.resyncLimit {
			continue
		}
		fetched++
		payload, ok, err := c.resyncCall(ctx, cn, "sessions.describe", key, describeParams{Key: key})
		if err != nil {
			ended = true
			return err
		}
		if !ok {
			continue
		}
		next[key] = true
		described, err := DecodeSessionDescribe(payload)
		if err != nil {
			c.malformed("sessions.describe reply", err)
			continue
		}
		c.consume(ctx, described)
	}
	return nil
}

// resyncCall makes one per-session request of a resync (method on session key). ok reports
// whether it answered. A failure that ends the resync is returned as err: ctx ended, or the
// connection is gone or did not answer within RequestTimeout while still ticking (either way it
// is of no more use). Any other failure (the Gateway refused this one request) is counted,
// logged at growing intervals, and left for the next resync: ok false, err nil.
func (c *Client) resyncCall(ctx context.Context, cn *conn, method, key string, params any) (payload json.RawMessage, ok bool, err error) {
	payload, err = c.call(ctx, cn, method, params)
	switch {
	case err == nil:
		return payload, true, nil
	case ctx.Err() != nil:
		return nil, false, ctx.Err()
	case errors.Is(err, ErrNotConnected), errors.Is(err, context.DeadlineExceeded):
		return nil, false, fmt.Errorf("resync: %w", err)
	}
	if n := c.stats.ResyncErrors.Add(1); follow.IsPow2(n) {
		c.log.Warn("resync: a request failed; retried at the next resync", "method", method, "session", key, "error", err, "failures", n)
	}
	return nil, false, nil
}
