package messagesapi

import "github.com/heirloom-dev/heirloom/e2e/internal/standin"

// Reply is what the stand-in model answers to one request (see
// standin.Reply). StopReason is "tool_use" when Tool is set and "end_turn"
// otherwise.
type Reply = standin.Reply

// ToolCall is a tool_use block (see standin.ToolCall): a zero ID gets a
// generated "toolu_" id.
type ToolCall = standin.ToolCall

// Error is an API error reply: HTTP Status (zero: 500) with the body
// {"type":"error","error":{"type":Type,"message":Message}} (Type zero:
// "api_error"). Claude Code may retry 408, 409, 429 and 5xx answers with
// backoff, so a test that wants a quick failure should use 400
// invalid_request_error.
type Error = standin.Error

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
	return ToolUse(AgentTool, standin.SpawnInput(description, prompt, agentType))
}
