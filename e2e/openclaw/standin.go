package openclaw

import (
	"regexp"
	"strings"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
)

// What OpenClaw 2026.9.6 sends its model, and how a stand-in's script answers
// it. A turn's request holds the system prompt, the session's messages, and
// then the turn's own user message(s): the prompt, stamped
// "[Www YYYY-MM-DD HH:MM UTC] " in front and a "Runtime: agent=… |
// session=<key> | …" line at the end, followed by a user message holding
// OpenClaw's internal context block. Match requests by this content, not by
// order: sub-agents run in parallel with their parent, and background turns
// (announcements of finished sub-agents) arrive whenever they are ready.

// The tools of OpenClaw's Tool Search. With tools.toolSearch unset (the
// default) a run is offered tool_search, tool_describe and tool_call plus the
// core file and shell tools; every other tool, sessions_spawn included, is a
// catalog entry the model calls through tool_call {id, args}.
const (
	ToolCall     = "tool_call"
	ToolSearch   = "tool_search"
	ToolDescribe = "tool_describe"
	// SpawnTool is OpenClaw's sub-agent tool: arguments {task, label, …}.
	SpawnTool = "sessions_spawn"
)

// runtimeLine matches the session key in the Runtime line of a turn's prompt.
var runtimeLine = regexp.MustCompile(`(?m)^Runtime: agent=\S+ \| session=(\S+) \|`)

// SessionKey returns the key of the session a request is a turn of, from the
// Runtime line OpenClaw appends to each turn's prompt (the last one in the
// request), or "" when there is none (compaction and other side requests).
func SessionKey(r chatapi.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "user" {
			continue
		}
		if m := runtimeLine.FindStringSubmatch(r.Messages[i].Content.Text()); m != nil {
			return m[1]
		}
	}
	return ""
}

// internalContext starts the user message OpenClaw adds after each turn's
// prompt (active exec sessions, active sub-agents, completion data).
const internalContext = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"

// Prompt returns the text of the last user message that is not OpenClaw's
// internal context block: what started the current turn (the user's prompt, a
// sub-agent's task, or the announcement of a finished sub-agent), with its
// timestamp and Runtime line, and what plugins prepended to it
// (before_prompt_build prependContext) after the timestamp.
func Prompt(r chatapi.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "user" {
			continue
		}
		if t := m.Content.Text(); !strings.HasPrefix(t, internalContext) {
			return t
		}
	}
	return ""
}

// subagentTask matches the wrapped task of a sub-agent's first user message:
// "[Subagent Context] You are running as a subagent (depth N/M). …
// [Subagent Task]\n\n<task>\n\nBegin. Execute the assigned task to completion."
var subagentTask = regexp.MustCompile(`(?s)\[Subagent Task\]\n\n(.*?)\n\nBegin\. `)

// SubagentTask returns the task of a sub-agent's session from the first user
// message of the request, and whether the request is a sub-agent's at all.
func SubagentTask(r chatapi.Request) (string, bool) {
	m := subagentTask.FindStringSubmatch(r.FirstUserText())
	if m == nil {
		return "", false
	}
	return m[1], true
}

// subagentDepth matches the depth in a sub-agent's task wrapper.
var subagentDepth = regexp.MustCompile(`running as a subagent \(depth (\d+)/(\d+)\)`)

// SubagentDepth returns the "N/M" depth a sub-agent's task wrapper states
// ("1/5" for a child, "2/5" for a grandchild), or "".
func SubagentDepth(r chatapi.Request) string {
	if m := subagentDepth.FindStringSubmatch(r.FirstUserText()); m != nil {
		return m[1] + "/" + m[2]
	}
	return ""
}

// IsCompletion reports whether r is a turn that announces finished
// sub-agents: its input (the user messages after the last assistant message,
// OpenClaw's internal context block included) holds "A background task
// completed." with a child's result, or "[Subagent Context] Your prior run
// ended while waiting for descendant subagent completions." when a
// sub-agent's own children have settled. The completion data is always in
// the internal context block: the visible prompt of such a turn may hold only
// what a plugin prepended.
func IsCompletion(r chatapi.Request) bool {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role == "assistant" {
			break
		}
		if m.Role != "user" {
			continue
		}
		t := m.Content.Text()
		if strings.Contains(t, "A background task completed.") ||
			strings.Contains(t, "[Subagent Context] Your prior run ended while waiting for descendant subagent completions.") {
			return true
		}
	}
	return false
}

// IsCompaction reports whether r is a compaction's summarization request:
// no tools, OpenClaw's summarization system prompt, the conversation in the
// user message. Answer it with Summary.
func IsCompaction(r chatapi.Request) bool {
	return len(r.Tools) == 0 && strings.Contains(r.SystemText(), "context summarization assistant")
}

// Summary returns a compaction summary holding text in the structure
// OpenClaw's summarization prompt asks for (its safeguard rejects summaries
// without the headings).
func Summary(text string) string {
	return "## Original Request\n" + text + "\n\n## Early Progress\n- " + text +
		"\n\n## Context for Suffix\n- " + text
}

// Spawn returns a reply that makes OpenClaw spawn a sub-agent with task and
// label: a sessions_spawn call, made directly when r offers the tool (with
// tools.toolSearch false) and through Tool Search's tool_call otherwise (the
// default). OpenClaw answers it at once with {status: "accepted",
// childSessionKey, runId, …}; the child runs in the background and its
// result comes back to the spawning session in a turn of its own.
func Spawn(r chatapi.Request, task, label string) chatapi.Reply {
	return SpawnUnder(r, task, label, "")
}

// SpawnUnder is Spawn with sessions_spawn's agentId: the child runs under that
// configured agent (agent:<agentID>:subagent:<uuid>), when the spawning
// agent's subagents.allowAgents lets it; "" spawns under the caller's agent.
func SpawnUnder(r chatapi.Request, task, label, agentID string) chatapi.Reply {
	args := map[string]any{"task": task, "label": label}
	if agentID != "" {
		args["agentId"] = agentID
	}
	if r.HasTool(SpawnTool) || !r.HasTool(ToolCall) {
		return chatapi.CallTool(SpawnTool, args)
	}
	return chatapi.CallTool(ToolCall, map[string]any{"id": SpawnTool, "args": args})
}
