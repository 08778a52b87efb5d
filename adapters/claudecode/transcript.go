package claudecode

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/toolinput"
)

// MaxToolText bounds, in bytes, the text of a tool-result turn. Longer results are cut at a
// rune boundary and end with a marker saying how much was dropped.
const MaxToolText = 4096

// transcriptRecord is one line of a Claude Code transcript, reduced to what turns need.
type transcriptRecord struct {
	Type      string `json:"type"` // "user", "assistant", "attachment", "system", …
	UUID      string `json:"uuid"`
	Timestamp string `json:"timestamp"`
	// IsMeta marks text Claude Code adds for the model (command caveats, …), not the user's.
	IsMeta bool `json:"isMeta"`
	// IsCompactSummary marks the summary that opens a session after compaction.
	IsCompactSummary  bool               `json:"isCompactSummary"`
	IsAPIErrorMessage bool               `json:"isApiErrorMessage"` // a synthetic API error message
	Message           *transcriptMessage `json:"message"`
	// ToolUseResult is the raw result of the tool call a tool_result record answers.
	ToolUseResult json.RawMessage `json:"toolUseResult"`
}

type transcriptMessage struct {
	Content json.RawMessage `json:"content"` // a string, or an array of transcriptBlock
}

type transcriptBlock struct {
	Type    string          `json:"type"`    // "text", "tool_use", "tool_result", "thinking", …
	Text    string          `json:"text"`    // text
	Name    string          `json:"name"`    // tool_use: the tool
	Input   json.RawMessage `json:"input"`   // tool_use: its arguments
	Content json.RawMessage `json:"content"` // tool_result: a string or an array of blocks
}

// toolUseResult is the part of a record's toolUseResult that names the tool or its file.
type toolUseResult struct {
	AgentID  string `json:"agentId"`  // Agent/Task
	FilePath string `json:"filePath"` // Edit, Write, …
	File     struct {
		FilePath string `json:"filePath"` // Read
	} `json:"file"`
}

// ParseTranscript parses the complete JSONL lines at the start of chunk and returns their turns
// and the bytes consumed. A last line without "\n" is consumed only when atEOF is true. It never
// fails: a line it cannot use is consumed and yields no turn. Each record stands alone, so
// parsing a file in pieces yields the same turns as parsing it whole.
//
// A user record yields a "user" turn from its text (a slash command as "/name args"), or a
// "tool" turn when it carries tool results (Text bounded to MaxToolText; Tool named only when
// the record says, e.g. "Agent"); the summary that opens a compacted session yields a "system"
// turn. An assistant record yields an "assistant" turn: its text blocks joined, the first
// tool_use's name as Tool, every tool_use's file paths as Files; thinking is dropped. Several
// records may share one model message; each yields its own turn. Turn.ID is the record's uuid
// and Turn.At its timestamp.
//
// No turn comes from: attachments (hook_additional_context holds what hooks injected, heirloom
// among them; it must never be read back), system, summary, queue and other bookkeeping records,
// isMeta records, local-command output, <system-reminder> text, synthetic API error messages,
// records without a uuid, blank or malformed lines. Sub-agent records (isSidechain) are kept:
// they are the content of a sub-agent's own transcript.
func (Adapter) ParseTranscript(chunk []byte, atEOF bool) ([]adapters.Turn, int) {
	return adapters.ParseLines(chunk, atEOF, parseRecord)
}

// parseRecord turns one transcript line into a turn; ok is false when it yields none.
func parseRecord(line []byte) (t adapters.Turn, ok bool) {
	if !adapters.IsObject(line) {
		return t, false
	}
	var r transcriptRecord
	if json.Unmarshal(line, &r) != nil || r.UUID == "" || r.Message == nil || r.IsMeta {
		return t, false
	}
	t.ID = r.UUID
	if at, err := time.Parse(time.RFC3339Nano, r.Timestamp); err == nil {
		t.At = at
	}
	switch r.Type {
	case "user":
		return userTurn(t, &r)
	case "assistant":
		if r.IsAPIErrorMessage {
			return t, false
		}
		return assistantTurn(t, &r)
	}
	return t, false
}

func userTurn(t adapters.Turn, r *transcriptRecord) (adapters.Turn, bool) {
	text, blocks := splitContent(r.Message.Content)
	var results []string
	hasResult := false
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if !isReminder(b.Text) {
				text = joinText(text, b.Text)
			}
		case "tool_result":
			hasResult = true
			if s := contentText(b.Content); s != "" {
				results = append(results, s)
			}
		}
	}
	if hasResult {
		t.Role, t.Text = "tool", toolinput.Bound(strings.Join(results, "\n"), MaxToolText)
		t.Tool, t.Files = toolOfResult(r.ToolUseResult)
		return t, true
	}
	text, ok := userText(text)
	if !ok {
		return t, false
	}
	t.Role, t.Text = "user", text
	if r.IsCompactSummary {
		t.Role = "system"
	}
	return t, true
}

func assistantTurn(t adapters.Turn, r *transcriptRecord) (adapters.Turn, bool) {
	text, blocks := splitContent(r.Message.Content)
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text = joinText(text, b.Text)
		case "tool_use":
			if t.Tool == "" {
				t.Tool = b.Name
			}
			t.Files = toolinput.AppendFiles(t.Files, b.Input)
		}
	}
	if strings.TrimSpace(text) == "" && t.Tool == "" {
		return t, false
	}
	t.Role, t.Text = "assistant", text
	return t, true
}

// splitContent returns message content as a string, or as blocks. Blocks of an unexpected shape
// keep their zero fields.
func splitContent(raw json.RawMessage) (string, []transcriptBlock) {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "", nil
	}
	switch raw[0] {
	case '"':
		return contentText(raw), nil
	case '[':
		var blocks []transcriptBlock
		_ = json.Unmarshal(raw, &blocks)
		return "", blocks
	}
	return "", nil
}

// userText cleans a user record's text. Local-command caveats and output and system reminders
// yield nothing; a slash command becomes "/name args".
func userText(s string) (string, bool) {
	s = strings.TrimSpace(s)
	switch {
	case s == "", isReminder(s), strings.HasPrefix(s, "<local-command-"):
		return "", false
	case strings.HasPrefix(s, "<command-name>"):
		cmd := strings.TrimSpace(between(s, "<command-name>", "</command-name>") + " " +
			between(s, "<command-args>", "</command-args>"))
		return cmd, cmd != ""
	}
	return s, true
}

func isReminder(s string) bool {
	return strings.HasPrefix(strings.TrimSpace(s), "<system-reminder>")
}

// between returns the text of s between the first open and the end after it, or "".
func between(s, open, end string) string {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return ""
	}
	inner, _, ok := strings.Cut(rest, end)
	if !ok {
		return ""
	}
	return strings.TrimSpace(inner)
}

func joinText(a, b string) string {
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return a + "\n" + b
}

// toolOfResult names the tool of a tool_result record from its toolUseResult, when the shape
// tells (Agent/Task results carry agentId), and the file it touched.
func toolOfResult(raw json.RawMessage) (tool string, files []string) {
	if !adapters.IsObject(raw) {
		return "", nil
	}
	var res toolUseResult
	_ = json.Unmarshal(raw, &res)
	if res.AgentID != "" {
		tool = ToolAgent
	}
	for _, p := range []string{res.FilePath, res.File.FilePath} {
		if toolinput.LooksLikePath(p) && (len(files) == 0 || files[0] != p) {
			files = append(files, p)
		}
	}
	return tool, files
}
