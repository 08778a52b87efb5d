package messagesapi

import (
	"encoding/json"
	"fmt"
)

// Reply is what the stand-in model answers to one request: optional text,
// then an optional tool call. StopReason is "tool_use" when Tool is set and
// "end_turn" otherwise. When Error is set the stand-in answers with that API
// error instead and ignores the other fields.
type Reply struct {
	Text  string
	Tool  *ToolCall
	Error *Error
}

// ToolCall is a tool_use block. A zero ID gets a generated "toolu_" id.
// Input is marshalled to JSON (a map, a struct or a json.RawMessage); nil
// sends an empty object.
type ToolCall struct {
	ID    string
	Name  string
	Input any
}

// Error is an API error reply: HTTP Status with the body
// {"type":"error","error":{"type":Type,"message":Message}}.
// Claude Code may retry 408, 409, 429 and 5xx answers with backoff, so a
// test that wants a quick failure should use 400 invalid_request_error.
type Error struct {
	Status  int
	Type    string
	Message string
}

// Text returns a Reply that answers with s and ends the turn.
func Text(s string) Reply { return Reply{Text: s} }

// ToolUse returns a Reply that calls the tool name with input.
func ToolUse(name string, input any) Reply {
	return Reply{Tool: &ToolCall{Name: name, Input: input}}
}

// SpawnAgent returns a Reply that makes Claude Code spawn a sub-agent through
// its Agent tool with the given description, task prompt and agent type
// (Claude Code's built-in type is "general-purpose").
func SpawnAgent(description, prompt, agentType string) Reply {
	return ToolUse(AgentTool, map[string]string{
		"description":   description,
		"prompt":        prompt,
		"subagent_type": agentType,
	})
}

// StopReason returns the stop_reason the reply is sent with.
func (r Reply) StopReason() string {
	if r.Tool != nil {
		return "tool_use"
	}
	return "end_turn"
}

// block is a content block of a reply, as the API writes it.
type block struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

// blocks returns the reply's content blocks with tool input marshalled.
// A reply with neither text nor tool gets one empty text block.
func (r Reply) blocks(toolID string) ([]block, error) {
	var out []block
	if r.Text != "" || r.Tool == nil {
		t := r.Text
		out = append(out, block{Type: "text", Text: &t})
	}
	if r.Tool != nil {
		input := json.RawMessage("{}")
		if r.Tool.Input != nil {
			b, err := json.Marshal(r.Tool.Input)
			if err != nil {
				return nil, fmt.Errorf("marshal input of tool %s: %w", r.Tool.Name, err)
			}
			input = b
		}
		id := r.Tool.ID
		if id == "" {
			id = toolID
		}
		out = append(out, block{Type: "tool_use", ID: id, Name: r.Tool.Name, Input: input})
	}
	return out, nil
}
