package chatapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Request is one decoded POST /v1/chat/completions body, as a harness sent
// it. Fields mirror the chat-completions wire format; Raw keeps the whole
// body for anything the typed fields leave out (temperature, tool_choice,
// provider-specific options).
type Request struct {
	// Seq numbers model requests from 1 in arrival order.
	Seq int `json:"-"`
	// Header holds the request headers. OpenCode 1.18 sends X-Session-Id
	// (the session making the call) and, for a child session,
	// X-Parent-Session-Id: see SessionID and ParentSessionID.
	Header http.Header `json:"-"`
	// Raw is the undecoded body.
	Raw json.RawMessage `json:"-"`

	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools"`
	Stream   bool      `json:"stream"`
	// StreamOptions is stream_options; IncludeUsage asks for a final chunk
	// carrying token usage (OpenCode always asks).
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
}

// StreamOptions is the stream_options object of a request.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one entry of Request.Messages. Role is "system", "user",
// "assistant" or "tool". An assistant turn that called tools carries
// ToolCalls; the answer to each is a "tool" message with ToolCallID.
type Message struct {
	Role       string         `json:"role"`
	Content    Content        `json:"content"`
	ToolCalls  []ToolCallWire `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// ToolCallWire is a tool call as it appears in an assistant message (and,
// piecewise, in a streamed reply): Function.Arguments is a JSON document
// encoded as a string.
type ToolCallWire struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is one entry of Request.Tools: {"type":"function","function":{...}}.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

// Part is one part of a message's content array. Type "text" sets Text;
// other types (image_url, file, ...) keep only Type.
type Part struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// Content is a message's content, which the API accepts as a string, an
// array of parts, or null. A string decodes as one text part.
type Content []Part

// UnmarshalJSON implements json.Unmarshaler for the string-or-array forms.
func (c *Content) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		*c = nil
		return nil
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("decode text content: %w", err)
		}
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	var parts []Part
	if err := json.Unmarshal(data, &parts); err != nil {
		return fmt.Errorf("decode content parts: %w", err)
	}
	*c = parts
	return nil
}

// Text returns the text of every text part, in order, joined by newlines.
func (c Content) Text() string {
	var out []string
	for _, p := range c {
		if p.Type == "text" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// SystemText returns the text of every system-role message, in order,
// joined by newlines: the system prompt. OpenCode 1.18 sends its agent
// prompt (with environment, instructions and skills) as one system message
// and, when plugins pushed text onto output.system in
// experimental.chat.system.transform, all of that as a second one.
func (r Request) SystemText() string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "system" {
			if t := m.Content.Text(); t != "" {
				out = append(out, t)
			}
		}
	}
	return strings.Join(out, "\n")
}

// LastUserText returns the text of the last user-role message, or "".
func (r Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content.Text()
		}
	}
	return ""
}

// FirstUserText returns the text of the first user-role message, or "":
// for a child session of OpenCode's task tool, its task prompt.
func (r Request) FirstUserText() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content.Text()
		}
	}
	return ""
}

// AllText returns every text the model sees, message by message in order
// (system messages included, tool results included), joined by newlines.
// Tool-call arguments are not text and are left out.
func (r Request) AllText() string {
	var out []string
	for _, m := range r.Messages {
		if t := m.Content.Text(); t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

// HasTool reports whether the request offers a tool with the given name.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

// ToolResults returns the tool-role messages after the last assistant
// message: the answers to the tool calls of the previous reply.
func (r Request) ToolResults() []Message {
	var out []Message
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role == "assistant" {
			break
		}
		if m.Role == "tool" {
			out = append([]Message{m}, out...)
		}
	}
	return out
}

// IsSideRequest reports whether the request offers no tools: a harness's
// side call such as OpenCode's title generation, not an agent's turn.
func (r Request) IsSideRequest() bool { return len(r.Tools) == 0 }

// SessionID returns the X-Session-Id header: the OpenCode session the
// request is a turn of ("" when absent).
func (r Request) SessionID() string { return r.Header.Get("X-Session-Id") }

// ParentSessionID returns the X-Parent-Session-Id header, which OpenCode
// sets on the requests of a child session; "" for a top-level session.
func (r Request) ParentSessionID() string { return r.Header.Get("X-Parent-Session-Id") }
