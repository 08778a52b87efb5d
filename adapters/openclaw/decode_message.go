package openclaw

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/toolinput"
)

// decodeSessionMessage maps a session.message payload; see DecodeEvent.
func decodeSessionMessage(payload json.RawMessage) ([]adapters.Event, error) {
	var p SessionMessage
	if err := adapters.DecodeObject(eventSessionMessage+" payload", payload, &p); err != nil {
		return nil, err
	}
	if p.SessionKey == "" {
		return nil, adapters.Malformed("%s: sessionKey missing, empty or not a string", eventSessionMessage)
	}
	var evs []adapters.Event
	if t, ok := messageTurn(p.MessageID, p.Message); ok {
		ev := newEvent(adapters.KindTurns, eventSessionMessage, p.SessionKey, t.At)
		ev.Turns = []adapters.Turn{t}
		evs = append(evs, ev)
	}
	return append(evs, messageSpawns(p.SessionKey, p.Message)...), nil
}

// decodeSessionTool maps a session.tool payload; see DecodeEvent.
func decodeSessionTool(payload json.RawMessage) ([]adapters.Event, error) {
	var p SessionTool
	if err := adapters.DecodeObject(eventSessionTool+" payload", payload, &p); err != nil {
		return nil, err
	}
	d := p.Data
	if p.SessionKey == "" || d.ToolCallID == "" {
		return nil, adapters.Malformed("%s: sessionKey or data.toolCallId missing, empty or not a string", eventSessionTool)
	}
	if d.Phase != "start" && d.Phase != "result" {
		return nil, nil
	}
	name := eventSessionTool + ":" + d.Phase
	tool, args := resolveCall(d.Name, d.Args)
	t := adapters.Turn{ID: d.ToolCallID + ":" + d.Phase, Role: "tool", Tool: tool, At: p.Ts.Time()}
	if d.Phase == "start" {
		t.Text, t.Files = toolinput.Summary(args), toolinput.Files(args)
	} else {
		var r ToolResult
		adapters.UnmarshalObject(d.Result, &r)
		t.Tool = resolveResultName(d.Name, r.Details)
		t.Text = toolResultText(d.Result, d.IsError)
	}
	var evs []adapters.Event
	if d.ParentToolCallID == "" {
		ev := newEvent(adapters.KindTurns, name, p.SessionKey, t.At)
		ev.Turns = []adapters.Turn{t}
		evs = append(evs, ev)
	}
	if d.Phase == "result" && t.Tool == toolSessionsSpawn {
		if r, ok := findReceipt(d.Result, 0); ok {
			evs = append(evs, spawnEvents(name, p.SessionKey, r, SpawnArgs{}, t.At)...)
		}
	}
	return evs, nil
}

// messageTurn returns the transcript turn of a message; ok is false for a message that makes
// none (no id, a role it does not know, hidden, blank, or heirloom's own text).
func messageTurn(id string, m TranscriptMessage) (t adapters.Turn, ok bool) {
	t = adapters.Turn{ID: cmp.Or(id, m.OpenClaw.ID, m.IdempotencyKey), At: m.Timestamp.Time()}
	if t.ID == "" {
		return t, false
	}
	r := renderContent(m.Content)
	switch m.Role {
	case "user":
		t.Role, t.Text = "user", r.text()
	case "assistant":
		t.Role, t.Text, t.Tool, t.Files = "assistant", r.text(), r.tool, r.files
		if t.Text == "" && m.ErrorMessage != "" {
			t.Text = "error: " + m.ErrorMessage
		}
	case "toolResult":
		t.Role, t.Tool = "tool", resolveResultName(m.ToolName, m.Details)
		t.Text = resultSummary(contentText(m.Content), m.IsError)
	case "custom":
		if m.Display != nil && !*m.Display {
			return t, false
		}
		t.Role, t.Text, t.Tool, t.Files = "system", r.text(), r.tool, r.files
		if r.tool != "" {
			t.Role = "tool"
		}
	case "compactionSummary", "branchSummary":
		t.Role, t.Text = "system", m.Summary
	case "bashExecution":
		t.Role, t.Tool = "tool", toolBash
		t.Text = toolinput.Bound(strings.TrimSpace(joinLines("$ "+m.Command, m.Output)), MaxToolText)
	default:
		return t, false
	}
	if strings.TrimSpace(t.Text) == "" && t.Tool == "" || injected(t.Text) {
		return t, false
	}
	return t, true
}

// injected reports whether text opens with one of heirloom's own block headings.
func injected(text string) bool {
	text = strings.TrimLeft(text, " \t\r\n")
	for _, h := range injectedHeadings {
		if strings.HasPrefix(text, h) {
			return true
		}
	}
	return false
}

// rendered is a message's content made readable.
type rendered struct {
	lines []string
	tool  string   // the first tool the content calls or reports on
	files []string // the paths its tool calls name
}

func (r rendered) text() string { return strings.Join(r.lines, "\n") }

// renderContent renders a message's content, a string or an array of parts: text as it is, one
// line per tool call ("[tool call] <tool> <arguments>") and tool result ("[tool result] <tool>:
// <text>"), "[image]" for an image. Thinking is left out.
func renderContent(content json.RawMessage) rendered {
	var r rendered
	var s string
	if isString(content) && json.Unmarshal(content, &s) == nil {
		if strings.TrimSpace(s) != "" {
			r.lines = append(r.lines, s)
		}
		return r
	}
	for _, p := range contentParts(content) {
		switch p.Type {
		case "text":
			if strings.TrimSpace(p.Text) != "" {
				r.lines = append(r.lines, p.Text)
			}
		case "image":
			r.lines = append(r.lines, "[image]")
		case "toolCall":
			tool, args := resolveCall(p.Name, p.Arguments)
			r.tool = cmp.Or(r.tool, tool)
			r.lines = append(r.lines, strings.TrimSpace("[tool call] "+tool+" "+toolinput.Summary(args)))
			r.files = toolinput.AppendFiles(r.files, args)
		case "toolResult":
			tool := resolveResultName(p.ToolName, p.Details)
			r.tool = cmp.Or(r.tool, tool)
			label := "[tool result] "
			if p.IsError {
				label = "[tool error] "
			}
			r.lines = append(r.lines, toolinput.Bound(label+tool+": "+strings.TrimSpace(contentText(p.Content)), MaxToolText))
		}
	}
	return r
}

// contentParts decodes a content array, skipping elements that are not objects; nil for
// anything else.
func contentParts(content json.RawMessage) []ContentPart {
	var elems []json.RawMessage
	if !adapters.IsArray(content) || json.Unmarshal(content, &elems) != nil {
		return nil
	}
	parts := make([]ContentPart, 0, len(elems))
	for _, raw := range elems {
		var p ContentPart
		if adapters.IsObject(raw) {
			adapters.UnmarshalObject(raw, &p)
			parts = append(parts, p)
		}
	}
	return parts
}

// contentText returns the text of a content (a string, or the text parts of an array joined by
// newlines).
func contentText(content json.RawMessage) string {
	var s string
	if isString(content) && json.Unmarshal(content, &s) == nil {
		return s
	}
	var lines []string
	for _, p := range contentParts(content) {
		if p.Type == "text" && p.Text != "" {
			lines = append(lines, p.Text)
		}
	}
	return strings.Join(lines, "\n")
}

// resultSummary renders a tool's result text as a turn's text, bounded to MaxToolText.
func resultSummary(text string, isError bool) string {
	text = strings.TrimSpace(text)
	if isError {
		text = strings.TrimSpace("error: " + text)
	}
	return toolinput.Bound(text, MaxToolText)
}

// toolCallWrapper is the arguments of a tool search "tool_call".
type toolCallWrapper struct {
	ID   string          `json:"id"`   // the tool called
	Args json.RawMessage `json:"args"` // its arguments
}

// wrappedResult is the details of a tool search "tool_call" result: the real tool and its
// result.
type wrappedResult struct {
	Tool struct {
		Name string `json:"name"`
	} `json:"tool"`
	Result json.RawMessage `json:"result"` // a ToolResult
}

// resolveCall looks through a tool search call to the tool it calls and that tool's arguments.
func resolveCall(name string, args json.RawMessage) (string, json.RawMessage) {
	if name == toolSearchCall {
		var w toolCallWrapper
		adapters.UnmarshalObject(args, &w)
		if w.ID != "" {
			return w.ID, w.Args
		}
	}
	return name, args
}

// resolveResultName looks through the result of a tool search call to the tool it called.
func resolveResultName(name string, details json.RawMessage) string {
	if name == toolSearchCall {
		var w wrappedResult
		adapters.UnmarshalObject(details, &w)
		if w.Tool.Name != "" {
			return w.Tool.Name
		}
	}
	return name
}

// toolResultText renders a session.tool result ({content, details}, or a bare string) as the
// text of its turn; for a tool search call, the real tool's result.
func toolResultText(result json.RawMessage, isError bool) string {
	if !adapters.IsObject(result) {
		return resultSummary(contentText(result), isError)
	}
	var r ToolResult
	adapters.UnmarshalObject(result, &r)
	var w wrappedResult
	adapters.UnmarshalObject(r.Details, &w)
	if w.Tool.Name != "" && adapters.IsObject(w.Result) {
		var inner ToolResult
		adapters.UnmarshalObject(w.Result, &inner)
		if contentText(inner.Content) != "" {
			r = inner
		}
	}
	return resultSummary(contentText(r.Content), isError)
}
