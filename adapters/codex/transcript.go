package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/toolinput"
)

// MaxToolText bounds, in bytes, the text of a tool-output turn; longer output is cut at a rune
// boundary with a marker saying how much was dropped.
const MaxToolText = 4096

// rolloutRecord is one line of a rollout file: {timestamp, ordinal, type, payload}.
type rolloutRecord struct {
	Timestamp string          `json:"timestamp"`
	Ordinal   json.RawMessage `json:"ordinal"` // a number; anything else counts as none
	Type      string          `json:"type"`    // session_meta, turn_context, response_item, event_msg, compacted, …
	Payload   json.RawMessage `json:"payload"`
	// Metadata of a response_item: compaction_output marks the compaction model's reply,
	// whose summary the compacted record that follows carries again.
	Metadata json.RawMessage `json:"metadata"`
}

// responseItem is a response_item payload, reduced to what turns need.
type responseItem struct {
	Type    string        `json:"type"` // message, function_call, function_call_output, custom_tool_call, reasoning, …
	ID      string        `json:"id"`
	Role    string        `json:"role"` // message: developer, user, assistant
	Content []contentPart `json:"content"`
	// function_call and custom_tool_call
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"` // "mcp__<server>" for an MCP tool, multi_agent_v1, …
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"` // custom_tool_call (apply_patch's patch)
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"` // function_call_output: a string, or {content, …}
}

type contentPart struct {
	Type string `json:"type"` // input_text, output_text, …
	Text string `json:"text"`
}

// ParseTranscript parses the complete JSONL lines at the start of chunk and returns their turns
// and the bytes consumed. A last line without "\n" is consumed only when atEOF is true. It never
// fails: a line it cannot use is consumed and yields no turn. Each record stands alone, so
// parsing a rollout in pieces yields the same turns as parsing it whole.
//
// Turns come from response_item records: a user message (its input_text) is a "user" turn; an
// assistant message (output_text) an "assistant" turn; a function or custom tool call an
// "assistant" turn naming the tool, without text (Files from its arguments or patch); a tool's output a
// "tool" turn (bounded to MaxToolText); a compacted record's summary a "system" turn.
// Developer messages (Codex's instructions, and the additionalContext hooks added, heirloom's
// among them: never read back), reasoning, the environment and instruction messages Codex adds
// as user text, the compaction model's reply (metadata.compaction_output; its summary is the
// compacted record's turn), and every other record type yield none. Turn.ID is the item's id, else
// "ordinal-N"; Turn.At the record's timestamp.
func (Adapter) ParseTranscript(chunk []byte, atEOF bool) ([]adapters.Turn, int) {
	return adapters.ParseLines(chunk, atEOF, parseRecord)
}

// parseRecord turns one rollout line into a turn; ok is false when it yields none.
func parseRecord(line []byte) (t adapters.Turn, ok bool) {
	if !adapters.IsObject(line) {
		return t, false
	}
	var r rolloutRecord
	if adapters.DecodeObject("rollout record", line, &r) != nil {
		return t, false // a field of the wrong type is left zero; only broken JSON is dropped
	}
	if at, err := time.Parse(time.RFC3339Nano, r.Timestamp); err == nil {
		t.At = at
	}
	switch r.Type {
	case "response_item":
		var meta struct {
			CompactionOutput bool `json:"compaction_output"`
		}
		adapters.UnmarshalObject(r.Metadata, &meta)
		if meta.CompactionOutput {
			return t, false
		}
		var it responseItem
		adapters.UnmarshalObject(r.Payload, &it)
		t.ID = it.ID
		if t.ID == "" {
			t.ID = recordID("ordinal-", "line-", r.Ordinal, line)
		}
		return itemTurn(t, &it)
	case "compacted":
		var c struct {
			Message string `json:"message"`
		}
		adapters.UnmarshalObject(r.Payload, &c)
		if strings.TrimSpace(c.Message) == "" {
			return t, false
		}
		t.ID, t.Role, t.Text = recordID("compacted-", "compacted-", r.Ordinal, line), "system", c.Message
		return t, true
	}
	return t, false
}

// recordID names a record that carries no id of its own: byOrdinal and its ordinal, or, in a
// rollout without ordinals, byHash and a hash of the line (the same bytes read again get the
// same id).
func recordID(byOrdinal, byHash string, ordinal json.RawMessage, line []byte) string {
	var n int64
	if json.Unmarshal(ordinal, &n) == nil {
		return byOrdinal + strconv.FormatInt(n, 10)
	}
	sum := sha256.Sum256(bytes.TrimRight(line, " \t\r"))
	return byHash + hex.EncodeToString(sum[:8])
}

func itemTurn(t adapters.Turn, it *responseItem) (adapters.Turn, bool) {
	switch it.Type {
	case "message":
		text := partsText(it.Content)
		switch it.Role {
		case "user":
			if text = strings.TrimSpace(text); text == "" || isInjected(text) {
				return t, false
			}
			t.Role, t.Text = "user", text
			if strings.HasPrefix(text, "<subagent_notification>") {
				t.Role = "system"
			}
			return t, true
		case "assistant":
			if strings.TrimSpace(text) == "" {
				return t, false
			}
			t.Role, t.Text = "assistant", text
			return t, true
		}
	case "function_call", "custom_tool_call", "local_shell_call":
		t.Role, t.Tool = "assistant", toolName(it.Namespace, it.Name)
		args := json.RawMessage(it.Arguments)
		if !adapters.IsObject(args) {
			args = nil
		}
		t.Files = toolFiles(args)
		for _, p := range patchFiles(it.Input) {
			t.Files = appendNew(t.Files, p)
		}
		if t.Tool == "" {
			t.Tool = it.Type
		}
		return t, true // a bare tool call, as Claude Code's: the tool and its files, no text
	case "function_call_output", "custom_tool_call_output":
		text := outputText(it.Output)
		t.Role, t.Text = "tool", toolinput.Bound(text, MaxToolText)
		return t, true
	}
	return t, false
}

// partsText joins the text of a message's content parts with newlines.
func partsText(parts []contentPart) string {
	var out []string
	for _, p := range parts {
		if p.Text != "" && (p.Type == "input_text" || p.Type == "output_text" || p.Type == "text") {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// toolName names a tool call's tool: an MCP tool as mcp__<server>__<tool>, as Claude Code names
// them (so heirloom knows its own, adapters.IsHeirloomTool); any other by its bare name.
func toolName(namespace, name string) string {
	if strings.HasPrefix(namespace, "mcp__") {
		return strings.TrimSuffix(namespace, "__") + "__" + name
	}
	return name
}

// wallTime is the header Codex puts before a tool's output ("Wall time: 0.02 seconds\nOutput:").
const wallTime = "Wall time: "

// outputText is a tool output's text: a JSON string, an array of parts (an MCP tool's), or an
// object's content (a string or parts). Codex's "Wall time: …\nOutput:" header part is left out.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []contentPart
	if json.Unmarshal(raw, &parts) == nil {
		if len(parts) > 1 && strings.HasPrefix(parts[0].Text, wallTime) {
			parts = parts[1:]
		}
		return partsText(parts)
	}
	var o struct {
		Content json.RawMessage `json:"content"`
	}
	adapters.UnmarshalObject(raw, &o)
	if json.Unmarshal(o.Content, &s) == nil {
		return s
	}
	parts = nil
	_ = json.Unmarshal(o.Content, &parts)
	return partsText(parts)
}

// isInjected reports whether user-role text is context Codex adds itself (the environment,
// AGENTS.md and other instructions), not the user's words.
func isInjected(text string) bool {
	for _, p := range [...]string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<skills_instructions>", "<user_shell_command>", "<turn_aborted>"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}
