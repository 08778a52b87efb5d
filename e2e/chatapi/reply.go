package chatapi

import "github.com/heirloom-dev/heirloom/e2e/internal/standin"

// Reply is what the stand-in model answers to one request (see
// standin.Reply). The finish reason is "tool_calls" when Tool is set and
// "stop" otherwise.
type Reply = standin.Reply

// ToolCall is a function tool call (see standin.ToolCall): a zero ID gets a
// generated "call_" id, and Input is sent as the call's arguments string.
type ToolCall = standin.ToolCall

// Error is an API error reply: HTTP Status (zero: 500) with the body
// {"error":{"message":Message,"type":Type,"code":null}} (Type zero:
// "server_error"). Harnesses retry 408, 409, 429 and 5xx answers with
// backoff, so a test that wants a quick failure should use 400.
type Error = standin.Error

// TaskTool is the name of OpenCode's sub-agent tool.
const TaskTool = "task"

// Text returns a Reply that answers with s and ends the turn.
func Text(s string) Reply { return Reply{Text: s} }

// CallTool returns a Reply that calls the tool name with arguments.
func CallTool(name string, arguments any) Reply {
	return Reply{Tool: &ToolCall{Name: name, Input: arguments}}
}

// SpawnTask returns a Reply that makes OpenCode spawn a child session
// through its task tool with the given description, task prompt and agent
// type (OpenCode's built-in sub-agent types are "general" and "explore").
func SpawnTask(description, prompt, agentType string) Reply {
	return CallTool(TaskTool, standin.SpawnInput(description, prompt, agentType))
}
