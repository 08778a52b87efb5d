package openclaw

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Timeouts of the session helpers.
const (
	// RequestTimeout bounds a call that does not run the model.
	RequestTimeout = 30 * time.Second
	// RunTimeout bounds a call that runs the model (Agent, Compact).
	RunTimeout = 3 * time.Minute
)

// AgentResult is the final answer to the agent method: the run's id and
// outcome, and the reply's payloads.
type AgentResult struct {
	RunID   string `json:"runId"`
	Status  string `json:"status"` // "ok" when the run completed
	Summary string `json:"summary"`
	Result  struct {
		Payloads []struct {
			Text string `json:"text"`
		} `json:"payloads"`
		Meta json.RawMessage `json:"meta"`
	} `json:"result"`
}

// Text returns the texts of the reply's payloads, joined by newlines.
func (r AgentResult) Text() string {
	var out []string
	for _, p := range r.Result.Payloads {
		out = append(out, p.Text)
	}
	return strings.Join(out, "\n")
}

// Agent sends message as a user turn of session key (the agent method, the
// one `openclaw agent` uses; a new key makes a new session) and returns once
// that run has ended: the Gateway first answers {status: "accepted", runId},
// then with the final result. The run is this session's turn only:
// sub-agents it spawned keep running, and their results come back to the
// session in runs of their own (wait for those with WaitChat). ctx bounds the
// wait, at most RunTimeout.
func (c *Client) Agent(ctx context.Context, key, message string) (AgentResult, error) {
	ctx, cancel := context.WithTimeout(ctx, RunTimeout)
	defer cancel()
	params := map[string]any{"sessionKey": key, "message": message, "idempotencyKey": randomHex(12)}
	var out AgentResult
	if err := c.Call(ctx, "agent", params, &out); err != nil {
		return out, err
	}
	if out.Status != "ok" {
		return out, fmt.Errorf("agent run %s in %s ended %q (%s)", out.RunID, key, out.Status, out.Summary)
	}
	return out, nil
}

// CompactResult is the answer to sessions.compact.
type CompactResult struct {
	OK        bool   `json:"ok"`
	Key       string `json:"key"`
	Compacted bool   `json:"compacted"`
	// Reason says why nothing was compacted.
	Reason string `json:"reason,omitempty"`
	Result *struct {
		Summary          string `json:"summary"`
		FirstKeptEntryID string `json:"firstKeptEntryId"`
		TokensBefore     int    `json:"tokensBefore"`
		TokensAfter      int    `json:"tokensAfter"`
	} `json:"result,omitempty"`
}

// Compact compacts session key with sessions.compact (no maxLines: the
// Gateway has the model summarize the transcript, which needs a reply of
// Summary's shape) and returns once it is done. A compaction that did not
// happen is an error carrying the Gateway's reason.
func (c *Client) Compact(ctx context.Context, key string) (CompactResult, error) {
	ctx, cancel := context.WithTimeout(ctx, RunTimeout)
	defer cancel()
	var out CompactResult
	if err := c.Call(ctx, "sessions.compact", map[string]any{"key": key}, &out); err != nil {
		return out, err
	}
	if !out.OK || !out.Compacted {
		return out, fmt.Errorf("sessions.compact %s: not compacted: %s", key, out.Reason)
	}
	return out, nil
}

// Session is a session row as sessions.list and sessions.changed carry it
// (the fields tests use; Raw holds all of it).
type Session struct {
	Key       string `json:"key"`
	SessionID string `json:"sessionId"`
	// SpawnedBy is the key of the session that spawned a sub-agent, and
	// SpawnDepth its depth (1 for a child of a top-level session).
	SpawnedBy        string   `json:"spawnedBy,omitempty"`
	SpawnDepth       int      `json:"spawnDepth,omitempty"`
	ParentSessionKey string   `json:"parentSessionKey,omitempty"`
	Label            string   `json:"label,omitempty"`
	Status           string   `json:"status,omitempty"`
	HasActiveRun     bool     `json:"hasActiveRun"`
	ChildSessions    []string `json:"childSessions,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// Sessions lists the sessions (sessions.list).
func (c *Client) Sessions(ctx context.Context) ([]Session, error) {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	var out struct {
		Sessions []json.RawMessage `json:"sessions"`
	}
	if err := c.Call(ctx, "sessions.list", map[string]any{}, &out); err != nil {
		return nil, err
	}
	list := make([]Session, 0, len(out.Sessions))
	for _, raw := range out.Sessions {
		var s Session
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("decode session row: %w", err)
		}
		s.Raw = raw
		list = append(list, s)
	}
	return list, nil
}

// Subscribe subscribes the client to session events (sessions.subscribe
// {}): sessions.changed for every session, and session.message,
// session.tool and session.operation.
func (c *Client) Subscribe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	return c.Call(ctx, "sessions.subscribe", map[string]any{}, nil)
}

// ChatEvent is the payload of a chat event: a run's reply as it streams
// (state "delta") and when it ends ("final", or "error").
type ChatEvent struct {
	RunID      string `json:"runId"`
	SessionKey string `json:"sessionKey"`
	SpawnedBy  string `json:"spawnedBy,omitempty"`
	State      string `json:"state"`
	Message    struct {
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"message"`
}

// Text returns the text of the event's message.
func (e ChatEvent) Text() string {
	var out []string
	for _, p := range e.Message.Content {
		if p.Type == "text" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// WaitChat waits for the final chat event of a run of session key whose
// reply contains text, looking at events from index from of Events on.
func (c *Client) WaitChat(ctx context.Context, from int, key, text string) (ChatEvent, error) {
	var found ChatEvent
	_, err := c.WaitEvent(ctx, from, func(e Event) bool {
		if e.Name != "chat" {
			return false
		}
		var ce ChatEvent
		if e.Decode(&ce) != nil || ce.SessionKey != key || ce.State != "final" || !strings.Contains(ce.Text(), text) {
			return false
		}
		found = ce
		return true
	})
	if err != nil {
		return found, fmt.Errorf("wait for a reply with %q in %s: %w", text, key, err)
	}
	return found, nil
}
