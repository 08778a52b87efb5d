package opencode

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/heirloom-dev/heirloom/adapters"
)

var _ adapters.Describer = (*Client)(nil)

// Describe asks the OpenCode server about session id now, for a plugin's model call that beat
// the event stream: GET /session/{id}, and when it names a parent, the parent's too with its
// messages (GET /session/{parent}/message, best effort: a failed fetch leaves them out), as
// events for the Sink, the parent's first. heirloom asks only when it does not store the parent. The
// caller bounds it with ctx (engine Config.DescribeWait). A session the server does not know is
// an error ("not found"), as is a malformed reply (wrapping adapters.ErrMalformed).
func (c *Client) Describe(ctx context.Context, id string) ([]adapters.Event, error) {
	if !c.opened.Load() {
		return nil, fmt.Errorf("describe opencode session %q: the client is not open", id)
	}
	self, err := c.sessionInfo(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("describe opencode session %q: %w", id, err)
	}
	var evs []adapters.Event
	if self.ParentID != "" && self.ParentID != id {
		parent, err := c.sessionInfo(ctx, self.ParentID)
		if err != nil {
			return nil, fmt.Errorf("describe opencode session %q: its parent: %w", id, err)
		}
		evs = append(evs, sessionEvent(adapters.KindSessionStart, NameSessionList, parent.ID, parent))
		// The parent's messages, best effort: without them the sessions and their link are
		// still worth storing, and the stream's resync brings the messages later.
		path := "/session/" + url.PathEscape(parent.ID) + "/message"
		if body, err := c.get(ctx, path); err == nil {
			if msgs, err := DecodeMessages(parent.ID, body); err == nil {
				evs = append(evs, msgs...)
			}
		}
	}
	return append(evs, sessionEvent(adapters.KindSessionStart, NameSessionList, self.ID, self)), nil
}

// sessionInfo reads GET /session/{id}.
func (c *Client) sessionInfo(ctx context.Context, id string) (SessionInfo, error) {
	body, err := c.get(ctx, "/session/"+url.PathEscape(id))
	if err != nil {
		return SessionInfo{}, err
	}
	var in SessionInfo
	if err := adapters.DecodeObject("session", body, &in); err != nil {
		return SessionInfo{}, err
	}
	if in.ID == "" {
		return SessionInfo{}, errors.New("the server's reply names no session")
	}
	return in, nil
}
