package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Timeouts of the session helpers.
const (
	// RequestTimeout bounds a call that does not run the model.
	RequestTimeout = 30 * time.Second
	// PromptTimeout bounds a call that runs the model until the session is
	// idle again (Prompt, Summarize).
	PromptTimeout = 3 * time.Minute
)

// Session is a session as OpenCode's API returns it (the fields tests use).
type Session struct {
	ID string `json:"id"`
	// ParentID is set on a child session, such as one the task tool made.
	ParentID  string `json:"parentID,omitempty"`
	ProjectID string `json:"projectID"`
	Directory string `json:"directory"`
	Title     string `json:"title"`
}

// Message is a message with its parts, as POST /session/{id}/message and
// GET /session/{id}/message return it.
type Message struct {
	Info struct {
		ID        string `json:"id"`
		SessionID string `json:"sessionID"`
		Role      string `json:"role"`
		Agent     string `json:"agent,omitempty"`
		Finish    string `json:"finish,omitempty"`
		// Summary is true on the assistant message a compaction wrote; on
		// a user message it is an object ({"diffs": [...]}).
		Summary json.RawMessage `json:"summary,omitempty"`
		Error   json.RawMessage `json:"error,omitempty"`
	} `json:"info"`
	Parts []Part `json:"parts"`
}

// Part is one part of a message. Type "text" sets Text; "tool" sets Tool,
// CallID and State; "compaction" marks the user message that asked for a
// compaction. Other types (step-start, step-finish, ...) keep Type only.
type Part struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Text   string `json:"text,omitempty"`
	Tool   string `json:"tool,omitempty"`
	CallID string `json:"callID,omitempty"`
	State  *struct {
		Status string          `json:"status"`
		Input  json.RawMessage `json:"input,omitempty"`
		Output string          `json:"output,omitempty"`
		Error  string          `json:"error,omitempty"`
		// Metadata of a task tool part names the child: {"sessionId": ...}.
		Metadata json.RawMessage `json:"metadata,omitempty"`
	} `json:"state,omitempty"`
}

// Text returns the text of the message's text parts, joined by newlines.
func (m Message) Text() string {
	var out []string
	for _, p := range m.Parts {
		if p.Type == "text" && p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// Do sends one request to the server and decodes a JSON reply into out
// (nil discards it). body, when not nil, is sent as JSON. A status other
// than 2xx is an error carrying the start of the reply. Do has no timeout
// of its own: ctx bounds it.
func (s *Server) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("marshal %s %s body: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL()+path, rd)
	if err != nil {
		return fmt.Errorf("build %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read reply: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %.500s", method, path, resp.Status, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode reply: %w: %.200s", method, path, err, data)
	}
	return nil
}

// call runs Do under timeout and fails tb on error.
func (s *Server) call(tb testing.TB, ctx context.Context, timeout time.Duration, method, path string, body, out any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	if err := s.Do(ctx, method, path, body, out); err != nil {
		tb.Fatalf("opencode API after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
}

// CreateSession creates a top-level session with the given title
// (POST /session); no model runs. A non-empty title also spares the model
// the title-generation request OpenCode sends for untitled sessions.
func (s *Server) CreateSession(tb testing.TB, ctx context.Context, title string) Session {
	tb.Helper()
	var out Session
	s.call(tb, ctx, RequestTimeout, http.MethodPost, "/session", map[string]string{"title": title}, &out)
	return out
}

// Prompt sends text as a user message to session id
// (POST /session/{id}/message, parts [{type:"text",text}]) and returns the
// assistant message that ends the turn: the call returns once the model has
// finished, child sessions of task calls included. It fails tb after
// PromptTimeout.
func (s *Server) Prompt(tb testing.TB, ctx context.Context, id, text string) Message {
	tb.Helper()
	start := time.Now()
	msg, err := s.SendPrompt(ctx, id, text)
	if err != nil {
		tb.Fatalf("opencode API after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	return msg
}

// SendPrompt is Prompt returning its error instead of failing a test, for
// prompts sent from goroutines of their own (two parents at once).
func (s *Server) SendPrompt(ctx context.Context, id, text string) (Message, error) {
	ctx, cancel := context.WithTimeout(ctx, PromptTimeout)
	defer cancel()
	body := map[string]any{"parts": []map[string]string{{"type": "text", "text": text}}}
	var out Message
	err := s.Do(ctx, http.MethodPost, "/session/"+url.PathEscape(id)+"/message", body, &out)
	return out, err
}

// Summarize compacts session id (POST /session/{id}/summarize with the
// configured model) and returns once the summary is written.
func (s *Server) Summarize(tb testing.TB, ctx context.Context, id string) {
	tb.Helper()
	body := map[string]any{"providerID": ProviderID, "modelID": ModelID}
	s.call(tb, ctx, PromptTimeout, http.MethodPost, "/session/"+url.PathEscape(id)+"/summarize", body, nil)
}

// Sessions lists the project's sessions (GET /session), children included.
func (s *Server) Sessions(tb testing.TB, ctx context.Context) []Session {
	tb.Helper()
	var out []Session
	s.call(tb, ctx, RequestTimeout, http.MethodGet, "/session", nil, &out)
	return out
}

// Children lists the child sessions of id (GET /session/{id}/children).
func (s *Server) Children(tb testing.TB, ctx context.Context, id string) []Session {
	tb.Helper()
	var out []Session
	s.call(tb, ctx, RequestTimeout, http.MethodGet, "/session/"+url.PathEscape(id)+"/children", nil, &out)
	return out
}

// Messages returns the messages of session id in order
// (GET /session/{id}/message).
func (s *Server) Messages(tb testing.TB, ctx context.Context, id string) []Message {
	tb.Helper()
	var out []Message
	s.call(tb, ctx, RequestTimeout, http.MethodGet, "/session/"+url.PathEscape(id)+"/message", nil, &out)
	return out
}
