// Package claudecodetest builds what Claude Code hands heirloom, for tests: a projects
// directory with a session's transcript, transcript records, and hook payloads. Like
// net/http/httptest, nothing but tests imports it.
package claudecodetest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Tree is a fake Claude Code projects directory: a transcript root holding one session's
// transcript, with the folder for its sub-agents' transcripts beside it.
type Tree struct {
	Root       string // the allowed transcript root
	Transcript string // the session's transcript path
}

// NewTree makes a Tree for session sid in a temporary directory.
func NewTree(tb testing.TB, sid string) Tree {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), "projects")
	dir := filepath.Join(root, "-work-app")
	if err := os.MkdirAll(filepath.Join(dir, sid, "subagents"), 0o755); err != nil {
		tb.Fatal(err)
	}
	return Tree{Root: root, Transcript: filepath.Join(dir, sid+".jsonl")}
}

// AppendLines appends JSONL records to path.
func AppendLines(tb testing.TB, path string, lines ...string) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			tb.Fatal(err)
		}
	}
}

// UserLine is a transcript record of a user prompt.
func UserLine(uuid, text string) string {
	return fmt.Sprintf(`{"type":"user","uuid":%q,"timestamp":"2026-11-01T10:00:00Z","message":{"role":"user","content":%q}}`, uuid, text)
}

// AssistantLine is a transcript record of an assistant's text reply.
func AssistantLine(uuid, text string) string {
	return fmt.Sprintf(`{"type":"assistant","uuid":%q,"timestamp":"2026-11-01T10:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":%q}]}}`, uuid, text)
}

// ToolUseLine is a transcript record of an assistant's text and an Agent tool call with id
// toolUseID: the spawning turn.
func ToolUseLine(uuid, toolUseID, text string) string {
	return fmt.Sprintf(`{"type":"assistant","uuid":%q,"timestamp":"2026-11-01T10:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":%q},{"type":"tool_use","id":%q,"name":"Agent","input":{"prompt":"x","subagent_type":"Explore"}}]}}`, uuid, text, toolUseID)
}

// Event is the payload of hook event for session sid of tree tr, with extra fields.
func Event(tr Tree, sid, event string, extra map[string]any) map[string]any {
	m := map[string]any{"session_id": sid, "transcript_path": tr.Transcript, "cwd": "/work/app", "hook_event_name": event}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// Spawn is a PreToolUse(Agent) of session sid; agentID, when given and not empty, names the
// sub-agent that spawns (a nested spawn).
func Spawn(tr Tree, sid, toolUseID, typ, prompt string, agentID ...string) map[string]any {
	extra := map[string]any{"tool_name": "Agent", "tool_use_id": toolUseID,
		"tool_input": map[string]any{"description": "desc " + toolUseID, "prompt": prompt, "subagent_type": typ}}
	if len(agentID) > 0 && agentID[0] != "" {
		extra["agent_id"] = agentID[0]
		extra["agent_type"] = "general-purpose"
	}
	return Event(tr, sid, "PreToolUse", extra)
}

// Start is a SubagentStart of sub-agent agentID of type typ in session sid.
func Start(tr Tree, sid, agentID, typ string) map[string]any {
	return Event(tr, sid, "SubagentStart", map[string]any{"agent_id": agentID, "agent_type": typ})
}

// Result is the PostToolUse(Agent) of spawn toolUseID, served by sub-agent agentID, returning
// text (1234 tokens, 5678 ms).
func Result(tr Tree, sid, toolUseID, agentID, text string) map[string]any {
	return Event(tr, sid, "PostToolUse", map[string]any{"tool_name": "Agent", "tool_use_id": toolUseID,
		"tool_input":    map[string]any{"prompt": "x"},
		"tool_response": map[string]any{"status": "completed", "agentId": agentID, "content": []any{map[string]any{"type": "text", "text": text}}, "totalTokens": 1234, "totalDurationMs": 5678}})
}
