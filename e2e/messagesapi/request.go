package messagesapi

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/heirloom-dev/heirloom/e2e/internal/standin"
)

// Request is one decoded POST /v1/messages body, as a harness sent it.
//
// Fields mirror the Messages API wire format; the embedded Received numbers
// the request (Seq) and keeps its headers (Header: x-api-key,
// anthropic-beta, user-agent, ...) and its whole body (Raw) for anything the
// typed fields leave out (thinking settings, tool_choice, ...).
type Request struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	// System is the system prompt; a plain string arrives as one text block.
	System   Blocks    `json:"system"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools"`
	Stream   bool      `json:"stream"`
	// Metadata is the request's metadata object (Claude Code sends user_id).
	Metadata map[string]any `json:"metadata"`

	standin.Received
}

// Message is one turn of Request.Messages. Role is "user" or "assistant",
// or "system": Claude Code 2.1.197 puts a system-role message after the new
// user turn, holding hook context ("SessionStart hook additional context:
// ...", "SubagentStart hook additional context: ...") and lists of agent
// types and skills.
type Message struct {
	Role string `json:"role"`
	// Content is the turn's content; a plain string arrives as one text block.
	Content Blocks `json:"content"`
}

// Tool is one entry of Request.Tools. Server tools carry Type and no schema.
type Tool struct {
	Name        string          `json:"name"`
	Type        string          `json:"type,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Block is one content block. Which fields are set depends on Type: "text"
// sets Text; "tool_use" sets ID, Name and Input; "tool_result" sets
// ToolUseID, Content and IsError. Other types (thinking, image, document)
// keep only Type.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   Blocks          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// PartText returns the text the model reads in the block: a text block's
// text, a tool_result's contents; "" for other types (tool inputs are not
// text).
func (blk Block) PartText() string {
	switch blk.Type {
	case "text":
		return blk.Text
	case "tool_result":
		return blk.Content.Text()
	}
	return ""
}

// TextPart returns the text block a bare-string content decodes to.
func (Block) TextPart(s string) Block { return Block{Type: "text", Text: s} }

// Blocks is a list of content blocks that also accepts the API's shorthand:
// a bare JSON string decodes as one text block, and null as no blocks. Its
// Text is the text of every text block, tool_result contents included, in
// order and joined by newlines.
type Blocks = standin.Content[Block]

// ToolUses returns the tool_use blocks of the message's content.
func (m Message) ToolUses() []Block {
	var out []Block
	for _, blk := range m.Content {
		if blk.Type == "tool_use" {
			out = append(out, blk)
		}
	}
	return out
}

// SystemText returns the text of the system prompt.
func (r Request) SystemText() string { return r.System.Text() }

// LastUserText returns the text of the last user-role message, or "" when
// there is none. Claude Code ends a request with a system-role message, so
// the last message is not necessarily the user's.
func (r Request) LastUserText() string { return standin.LastText(r.turns(), "user") }

// FirstUserText returns the text of the first user-role message, or "".
// For a sub-agent that is a date reminder and its task prompt; the
// SubagentStart hooks' additionalContext is not there but in the system-role
// message that follows (search AllText for it).
func (r Request) FirstUserText() string { return standin.FirstText(r.turns(), "user") }

// AllText returns every text the model sees: the system prompt, then each
// message's text blocks and tool_result contents in order (including the
// reminders and hook context Claude Code inserts), joined by newlines. This
// is what assertions about "what reached the model" should search.
func (r Request) AllText() string {
	return standin.JoinText(append([]standin.Turn{{Role: "system", Text: r.SystemText()}}, r.turns()...), "")
}

// turns returns the messages as the model reads them.
func (r Request) turns() []standin.Turn {
	return standin.Turns(r.Messages, func(m Message) standin.Turn { return standin.Turn{Role: m.Role, Text: m.Content.Text()} })
}

// HasTool reports whether the request offers a tool with the given name.
func (r Request) HasTool(name string) bool {
	return slices.ContainsFunc(r.Tools, func(t Tool) bool { return t.Name == name })
}

// ToolResults returns the tool_result blocks of the last user-role message:
// the answers to the tool calls of the previous reply.
func (r Request) ToolResults() []Block {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "user" {
			continue
		}
		var out []Block
		for _, blk := range r.Messages[i].Content {
			if blk.Type == "tool_result" {
				out = append(out, blk)
			}
		}
		return out
	}
	return nil
}

// IsSideRequest reports whether the request is one of Claude Code's side
// calls rather than an agent turn: an agent turn always offers tools, while
// side calls (title generation, quota probe) offer none. With
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, Claude Code 2.1.197 in -p mode
// sends none.
func (r Request) IsSideRequest() bool { return len(r.Tools) == 0 }

// IsSubagent reports whether the request is a turn of a sub-agent rather
// than of the top-level session.
//
// Claude Code 2.1.197 marks it in the first system block, a billing line
// "x-anthropic-billing-header: cc_version=...; cc_entrypoint=...;
// cc_is_subagent=true;". The rest of the request is a weaker tell: the
// sub-agent gets its agent type's system prompt ("You are an agent for
// Claude Code..." for general-purpose, where the parent has "You are an
// interactive agent..."), thinking {"type":"disabled"} and no
// context_management, and lacks the TaskOutput, ScheduleWakeup and Workflow
// tools. It does NOT lack the Agent tool, and the x-claude-code-session-id
// header and metadata.user_id carry the parent's session id, so neither
// tells them apart.
func (r Request) IsSubagent() bool {
	return strings.Contains(r.SystemText(), SubagentMarker)
}

// IsCompaction reports whether the request asks the model to summarise the
// conversation for a compaction (/compact or automatic). Claude Code 2.1.197
// sends it as a turn of the session being compacted (same system prompt and
// tools, not marked as a sub-agent) whose last user message ends with
// CompactionMarker; the model should answer with an <analysis> block and a
// <summary> block, and the summary text opens the session's next request.
func (r Request) IsCompaction() bool {
	return strings.Contains(r.LastUserText(), CompactionMarker)
}

// CompactionMarker is the text of Claude Code's compaction prompt that
// IsCompaction looks for.
const CompactionMarker = "Your task is to create a detailed summary of the conversation so far"

// SubagentMarker is the system-prompt text that marks a sub-agent's request.
const SubagentMarker = "cc_is_subagent=true"

// AgentTool is the name of Claude Code's sub-agent tool (formerly "Task").
const AgentTool = "Agent"
