package responsesapi

import (
	"fmt"
	"strings"

	"github.com/heirloom-dev/heirloom/e2e/internal/standin"
)

// Reply is what the stand-in model answers to one request (see
// standin.Reply): optional text, then an optional function call (and More
// calls after it, in parallel).
type Reply = standin.Reply

// ToolCall is a function call (see standin.ToolCall): a zero ID gets a
// generated "call_" id, and Input is sent as the call's arguments string.
type ToolCall = standin.ToolCall

// Error is an API error reply (see standin.Error).
type Error = standin.Error

// SpawnTool is the name of Codex's sub-agent tool.
const SpawnTool = "spawn_agent"

// Text returns a Reply that answers with s and ends the turn.
func Text(s string) Reply { return Reply{Text: s} }

// CallTool returns a Reply that calls the function name with arguments.
func CallTool(name string, arguments any) Reply {
	return Reply{Tool: &ToolCall{Name: name, Input: arguments}}
}

// Spawn returns a Reply that makes Codex start a sub-agent with message as
// its task (spawn_agent's arguments).
func Spawn(message string) Reply {
	return CallTool(SpawnTool, map[string]any{"message": message})
}

// AgentNamespace is the tool namespace Codex 0.169 offers its sub-agent tools
// under; a call to one of them must name it, or Codex answers "unsupported call".
const AgentNamespace = "multi_agent_v1"

// namespaces gives the namespace of each namespaced tool a reply may call.
var namespaces = map[string]string{
	SpawnTool: AgentNamespace, WaitTool: AgentNamespace, "close_agent": AgentNamespace,
	"send_input": AgentNamespace, "resume_agent": AgentNamespace,
}

// NamespaceSep joins a tool namespace and a function name in a ToolCall.Name
// ("mcp__heirloom__" + NamespaceSep + "session_search"): the call is sent with
// that namespace.
const NamespaceSep = "::"

// WaitTool is Codex's tool that waits for sub-agents (arguments {targets, timeout_ms}).
const WaitTool = "wait_agent"

// item is one output item of a reply, ready for the wire.
type item struct {
	Type      string // "message" or "function_call"
	ID        string
	Text      string // message
	CallID    string // function_call
	Name      string
	Namespace string
	Arguments string
}

// outputItems returns reply's output: its text as one assistant message, then
// each tool call as a function_call item. seq numbers the ids.
func outputItems(reply Reply, seq int) ([]item, error) {
	var items []item
	if reply.Text != "" || reply.Tool == nil {
		items = append(items, item{Type: "message", ID: fmt.Sprintf("msg_standin%08d", seq), Text: reply.Text})
	}
	if reply.Tool == nil {
		return items, nil
	}
	calls := append([]ToolCall{*reply.Tool}, reply.More...)
	for i, c := range calls {
		def := fmt.Sprintf("call_standin%08d", seq)
		if i > 0 {
			def = fmt.Sprintf("%s_%d", def, i+1)
		}
		t, err := standin.NewToolUse(c.ID, def, c.Name, c.Input)
		if err != nil {
			return nil, err
		}
		ns, name := namespaces[t.Name], t.Name
		if n, f, ok := strings.Cut(t.Name, NamespaceSep); ok {
			ns, name = n, f
		}
		items = append(items, item{Type: "function_call", ID: fmt.Sprintf("fc_%s", t.ID), CallID: t.ID,
			Name: name, Namespace: ns, Arguments: string(t.Input)})
	}
	return items, nil
}

// added is the item as response.output_item.added announces it: empty content.
func (it item) added() map[string]any {
	if it.Type == "message" {
		return map[string]any{"type": "message", "id": it.ID, "role": "assistant", "status": "in_progress", "content": []any{}}
	}
	m := it.done()
	m["arguments"] = ""
	m["status"] = "in_progress"
	return m
}

// done is the whole item, as response.output_item.done carries it.
func (it item) done() map[string]any {
	if it.Type == "message" {
		return map[string]any{"type": "message", "id": it.ID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": it.Text, "annotations": []any{}}}}
	}
	m := map[string]any{"type": "function_call", "id": it.ID, "call_id": it.CallID, "name": it.Name,
		"arguments": it.Arguments, "status": "completed"}
	if it.Namespace != "" {
		m["namespace"] = it.Namespace
	}
	return m
}
