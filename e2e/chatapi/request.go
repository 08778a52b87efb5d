package chatapi

import (
	"encoding/json"
	"slices"

	"github.com/heirloom-dev/heirloom/e2e/internal/standin"
)

// Request is one decoded POST /v1/chat/completions body, as a harness sent
// it. Fields mirror the chat-completions wire format; the embedded Received
// numbers the request (Seq) and keeps its headers (Header: OpenCode 1.18
// sends X-Session-Id, and X-Parent-Session-Id for a child session; see
// SessionID and ParentSessionID) and its whole body (Raw) for anything the
// typed fields leave out (temperature, tool_choice, provider-specific
// options).
type Request struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools"`
	Stream   bool      `json:"stream"`
	// StreamOptions is stream_options; IncludeUsage asks for a final chunk
	// carrying token usage (OpenCode always asks).
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`

	standin.Received
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

// PartText returns the part's text when it is a text part, "" otherwise.
func (p Part) PartText() string {
	if p.Type != "text" {
		return ""
	}
	return p.Text
}

// TextPart returns the text part a bare-string content decodes to.
func (Part) TextPart(s string) Part { return Part{Type: "text", Text: s} }

// Content is a message's content, which the API accepts as a string, an
// array of parts, or null. A string decodes as one text part.
type Content = standin.Content[Part]

// SystemText returns the text of every system-role message, in order,
// joined by newlines: the system prompt. OpenCode 1.18 sends its agent
// prompt (with environment, instructions and skills) as one system message
// and, when plugins pushed text onto output.system in
// experimental.chat.system.transform, all of that as a second one.
func (r Request) SystemText() string { return standin.JoinText(r.turns(), "system") }

// LastUserText returns the text of the last user-role message, or "".
func (r Request) LastUserText() string { return standin.LastText(r.turns(), "user") }

// FirstUserText returns the text of the first user-role message, or "":
// for a child session of OpenCode's task tool, its task prompt.
func (r Request) FirstUserText() string { return standin.FirstText(r.turns(), "user") }

// AllText returns every text the model sees, message by message in order
// (system messages included, tool results included), joined by newlines.
// Tool-call arguments are not text and are left out.
func (r Request) AllText() string { return standin.JoinText(r.turns(), "") }

// HasTool reports whether the request offers a tool with the given name.
func (r Request) HasTool(name string) bool {
	return slices.ContainsFunc(r.Tools, func(t Tool) bool { return t.Function.Name == name })
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

// turns returns the messages as the model reads them.
func (r Request) turns() []standin.Turn {
	return standin.Turns(r.Messages, func(m Message) standin.Turn { return standin.Turn{Role: m.Role, Text: m.Content.Text()} })
}

// SessionID returns the X-Session-Id header: the OpenCode session the
// request is a turn of ("" when absent).
func (r Request) SessionID() string { return r.Header.Get("X-Session-Id") }

// ParentSessionID returns the X-Parent-Session-Id header, which OpenCode
// sets on the requests of a child session; "" for a top-level session.
func (r Request) ParentSessionID() string { return r.Header.Get("X-Parent-Session-Id") }
