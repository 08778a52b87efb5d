package opencode

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/follow"
)

// errNotFound is a REST reply of 404: the session went away between the list and the fetch.
var errNotFound = errors.New("not found")

// resync reads the server's state back over REST after a (re)connect, because OpenCode ignores
// Last-Event-ID and replays nothing: GET /session (every session, as DecodeSessionList sees
// them), then GET /session/{id}/message for the sessions that changed since the previous resync,
// bounded by ResyncSessions. A failed session list is returned: the connection is dropped and
// made again later. Malformed replies are counted and skipped; they would fail the same way
// again. A failed message fetch is counted and retried at the next resync.
func (c *Client) resync(ctx context.Context) error {
	c.refused.Store(false) // what was refused so far is read back now
	body, err := c.get(ctx, "/session")
	switch {
	case errors.Is(err, adapters.ErrMalformed):
		c.malformedReply("/session", err)
		return nil
	case err != nil:
		c.stats.ResyncErrors.Add(1)
		return err
	}
	c.stats.Resyncs.Add(1)
	evs, err := DecodeSessionList(body)
	if err != nil {
		c.malformedReply("/session", err)
		return nil
	}
	c.consume(ctx, evs)
	c.syncMessages(ctx, body)
	return nil
}

// sessionStamp is what the resync reads of each session in GET /session to tell which changed.
type sessionStamp struct {
	ID   string `json:"id"`
	Time struct {
		Created float64 `json:"created"` // milliseconds since the epoch
		Updated float64 `json:"updated"`
	} `json:"time"`
}

func (s sessionStamp) at() float64 { return max(s.Time.Created, s.Time.Updated) }

// syncMessages fetches the messages of the sessions in list (a GET /session reply) that are new
// or updated since the last resync, most recently updated first, at most resyncLimit of them.
// Sessions past the limit are taken as synced; failed fetches are left to the next resync.
func (c *Client) syncMessages(ctx context.Context, list []byte) {
	if c.resyncLimit < 0 {
		return
	}
	var stamps []sessionStamp
	if err := json.Unmarshal(list, &stamps); err != nil {
		return // DecodeSessionList took it; without stamps there is nothing to compare
	}
	slices.SortStableFunc(stamps, func(a, b sessionStamp) int { return cmp.Compare(b.at(), a.at()) })
	next := make(map[string]float64, len(stamps))
	fetched := 0
	for _, s := range stamps {
		if s.ID == "" {
			continue
		}
		at := s.at()
		if prev, ok := c.seen[s.ID]; (ok && prev == at) || fetched >= c.resyncLimit {
			next[s.ID] = at
			continue
		}
		fetched++
		if c.fetchMessages(ctx, s.ID) {
			next[s.ID] = at
		}
		if ctx.Err() != nil {
			return
		}
	}
	c.seen = next
}

// fetchMessages hands one session's messages to the Sink and reports whether the session is
// done with: true also for a session gone since the list and for a malformed reply.
func (c *Client) fetchMessages(ctx context.Context, id string) bool {
	path := "/session/" + url.PathEscape(id) + "/message"
	body, err := c.get(ctx, path)
	switch {
	case errors.Is(err, errNotFound):
		return true
	case errors.Is(err, adapters.ErrMalformed):
		c.malformedReply(path, err)
		return true
	case err != nil:
		if ctx.Err() == nil {
			if n := c.stats.ResyncErrors.Add(1); follow.IsPow2(n) {
				c.log.Warn("resync: a message fetch failed; retried at the next resync", "error", err, "failures", n)
			}
		}
		return false
	}
	evs, err := DecodeMessages(id, body)
	if err != nil {
		c.malformedReply(path, err)
		return true
	}
	return c.consume(ctx, evs)
}

func (c *Client) malformedReply(path string, err error) {
	c.stats.Skip(c.log, "reply to GET "+path, err)
}

// get makes one REST call and returns the body of a 200 reply. A reply over the size bound
// wraps adapters.ErrMalformed; a 404 wraps errNotFound.
func (c *Client) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.rest.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: %w", path, errNotFound)
	default:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	limit := int64(restBodyFactor) * int64(c.maxEventBytes)
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: read reply: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("GET %s: %w", path, adapters.Malformed("reply over %d bytes", limit))
	}
	return b, nil
}
