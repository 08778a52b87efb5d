package responsesapi

import (
	"encoding/json"
	"strings"

	"github.com/heirloom-dev/heirloom/e2e/internal/standin"
)

// Request is one decoded POST /v1/responses body. Input holds the
// conversation as the model reads it: messages (roles "developer", "user",
// "assistant"), function calls and their outputs. The embedded Received
// keeps the headers (Codex's x-codex-turn-metadata names the thread) and the
// whole body.
type Request struct {
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Input        []Item          `json:"input"`
	Tools        json.RawMessage `json:"tools"`
	Stream       bool            `json:"stream"`

	standin.Received
}

// Item is one entry of Request.Input. Type "message" sets Role and Content;
// "function_call" Name, CallID and Arguments; "function_call_output" CallID
// and Output.
type Item struct {
	Type      string          `json:"type"`
	Role      string          `json:"role,omitempty"`
	Content   Content         `json:"content,omitempty"`
	Name      string          `json:"name,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Arguments string          `json:"arguments,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
}

// Part is one part of a message's content: input_text, output_text (Text
// set) or another type (only Type kept).
type Part struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// PartText returns the part's text when it holds text.
func (p Part) PartText() string {
	if p.Type == "input_text" || p.Type == "output_text" || p.Type == "text" {
		return p.Text
	}
	return ""
}

// TextPart returns the part a bare-string content decodes to.
func (Part) TextPart(s string) Part { return Part{Type: "input_text", Text: s} }

// Content is a message's content: an array of parts or a bare string.
type Content = standin.Content[Part]

// Messages returns the input's messages as the model reads them, in order.
func (r Request) Messages() []standin.Turn {
	var out []standin.Turn
	for _, it := range r.Input {
		if it.Type == "message" {
			out = append(out, standin.Turn{Role: it.Role, Text: it.Content.Text()})
		}
	}
	return out
}

// DeveloperText returns every developer message's text, joined by newlines:
// where Codex puts hook context (additionalContext).
func (r Request) DeveloperText() string { return standin.JoinText(r.Messages(), "developer") }

// LastUserText returns the text of the last user message, or "".
func (r Request) LastUserText() string { return standin.LastText(r.Messages(), "user") }

// AllText returns the instructions and every message's text, joined by newlines.
func (r Request) AllText() string {
	return strings.TrimSpace(r.Instructions + "\n" + standin.JoinText(r.Messages(), ""))
}

// HasTool reports whether the request offers a tool with the given name
// (anywhere in its tools, namespaced ones included).
func (r Request) HasTool(name string) bool {
	return strings.Contains(string(r.Tools), `"name":"`+name+`"`)
}

// FunctionOutputs returns the function_call_output items after the last
// assistant message or function call: the answers to the previous reply.
func (r Request) FunctionOutputs() []Item {
	var out []Item
	for i := len(r.Input) - 1; i >= 0; i-- {
		it := r.Input[i]
		if it.Type == "function_call" || it.Type == "message" && it.Role == "assistant" {
			break
		}
		if it.Type == "function_call_output" {
			out = append([]Item{it}, out...)
		}
	}
	return out
}

// TurnMetadata returns the decoded x-codex-turn-metadata header (Codex names
// the thread, its parent and its source there), nil when absent or not JSON.
func (r Request) TurnMetadata() map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(r.Header.Get("X-Codex-Turn-Metadata")), &m) != nil {
		return nil
	}
	return m
}
