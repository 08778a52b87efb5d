package claudecode

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/toolinput"
)

// Result statuses Decode sets on a failed spawn (PostToolUseFailure of Agent/Task). A successful
// spawn carries Claude Code's own status word ("completed", …).
const (
	StatusFailed      = adapters.StatusFailed
	StatusInterrupted = adapters.StatusInterrupted
)

// Decode turns one hook call's body into an adapters.Event with Harness "claude-code" and Name
// set to hook_event_name. Event.At is left zero for the caller to stamp.
//
// It returns an error wrapping adapters.ErrMalformed when body is not a JSON object, when
// hook_event_name is missing, empty or not a string, when session_id is given and no Claude Code
// session id (see IsSessionID), when a known event other than SubagentStart has no session_id,
// when SubagentStart or SubagentStop has no agent_id, and when an id it names is no id a
// record may have (see adapters.CheckIDs). An event it does not know decodes to
// adapters.KindUnknown without error. Fields of an unexpected JSON type are left zero rather
// than failing the call, so a harness that grows or reshapes a field we do not need still works.
//
// A spawn is a PreToolUse of the Agent or Task tool; its PostToolUse is a KindSpawnResult, and
// so is its PostToolUseFailure (Result.Status StatusFailed or StatusInterrupted, Result.Text the
// error) so that a spawn which never started can be closed.
func (Adapter) Decode(body []byte) (adapters.Event, error) {
	var in HookInput
	if err := adapters.DecodeObject("hook call", body, &in); err != nil {
		return adapters.Event{}, err
	}
	if in.HookEventName == "" {
		return adapters.Event{}, adapters.Malformed("hook call: hook_event_name missing, empty or not a string")
	}
	for field, id := range map[string]string{"session_id": in.SessionID, "agent_id": in.AgentID} {
		if err := adapters.CheckID(in.HookEventName+": "+field, id); err != nil {
			return adapters.Event{}, err // a stray or broken call is stored as no session
		}
	}
	if in.SessionID != "" && !IsSessionID(in.SessionID) {
		return adapters.Event{}, adapters.Malformed("%s: session_id %q is no Claude Code session id: want a UUID, 8-4-4-4-12 hex digits (49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7)",
			in.HookEventName, clip(in.SessionID))
	}
	ev := adapters.Event{
		Harness:        Harness,
		Kind:           adapters.KindUnknown,
		Name:           in.HookEventName,
		SessionID:      in.SessionID,
		Cwd:            in.Cwd,
		TranscriptPath: in.TranscriptPath,
	}
	// agent_type without agent_id is a main thread started with --agent: not a sub-agent.
	if in.AgentID != "" {
		ev.AgentID, ev.AgentType = in.AgentID, in.AgentType
	}
	if !knownEvent(in.HookEventName) {
		return ev, nil
	}
	// Older Claude Code sent SubagentStart without the parent's session_id; heirloom then infers
	// the parent, so only that event may lack it.
	if in.SessionID == "" && in.HookEventName != EventSubagentStart {
		return adapters.Event{}, adapters.Malformed("%s: session_id missing, empty or not a string", in.HookEventName)
	}

	switch in.HookEventName {
	case EventSessionStart:
		var p SessionStartInput
		_ = adapters.DecodeObject("hook call", body, &p) // body was checked above: only field type mismatches remain
		ev.Kind, ev.Source = adapters.KindSessionStart, p.Source
	case EventUserPromptSubmit:
		var p UserPromptSubmitInput
		_ = adapters.DecodeObject("hook call", body, &p)
		ev.Kind, ev.Prompt = adapters.KindPrompt, p.Prompt
	case EventPreToolUse:
		var p PreToolUseInput
		_ = adapters.DecodeObject("hook call", body, &p)
		if isSpawnTool(p.ToolName) {
			ev.Kind, ev.Spawn = adapters.KindSpawn, spawnOf(p.ToolUseID, p.ToolInput)
		} else {
			ev.Kind, ev.Tool = adapters.KindToolUse, toolOf(p.ToolName, p.ToolUseID, p.ToolInput)
		}
	case EventPostToolUse:
		var p PostToolUseInput
		_ = adapters.DecodeObject("hook call", body, &p)
		if isSpawnTool(p.ToolName) {
			ev.Kind, ev.Spawn = adapters.KindSpawnResult, spawnOf(p.ToolUseID, p.ToolInput)
			ev.Result = agentResult(p.ToolResponse)
		} else {
			ev.Kind, ev.Tool = adapters.KindToolResult, toolOf(p.ToolName, p.ToolUseID, p.ToolInput)
		}
	case EventPostToolUseFailure:
		var p PostToolUseFailureInput
		_ = adapters.DecodeObject("hook call", body, &p)
		if isSpawnTool(p.ToolName) {
			status := StatusFailed
			if p.IsInterrupt {
				status = StatusInterrupted
			}
			ev.Kind, ev.Spawn = adapters.KindSpawnResult, spawnOf(p.ToolUseID, p.ToolInput)
			ev.Result = &adapters.Result{Status: status, Text: p.Error}
		} else {
			ev.Kind, ev.Tool = adapters.KindToolResult, toolOf(p.ToolName, p.ToolUseID, p.ToolInput)
		}
	case EventSubagentStart:
		if in.AgentID == "" {
			return adapters.Event{}, adapters.Malformed("SubagentStart: agent_id missing, empty or not a string")
		}
		ev.Kind = adapters.KindSubagentStart
	case EventSubagentStop:
		if in.AgentID == "" {
			return adapters.Event{}, adapters.Malformed("SubagentStop: agent_id missing, empty or not a string")
		}
		var p SubagentStopInput
		_ = adapters.DecodeObject("hook call", body, &p)
		ev.Kind, ev.AgentTranscriptPath = adapters.KindSubagentStop, p.AgentTranscriptPath
		ev.Result = &adapters.Result{AgentID: in.AgentID, Text: p.LastAssistantMessage}
	case EventPreCompact:
		var p PreCompactInput
		_ = adapters.DecodeObject("hook call", body, &p)
		ev.Kind, ev.Trigger, ev.Instructions = adapters.KindPreCompact, p.Trigger, p.CustomInstructions
	case EventStop:
		ev.Kind = adapters.KindStop
	case EventSessionEnd:
		ev.Kind = adapters.KindSessionEnd
	}
	if err := adapters.CheckIDs(ev); err != nil {
		return adapters.Event{}, err // a tool_use_id or agentId no run or session may have
	}
	return ev, nil
}

// IsSessionID reports whether id has the shape of a Claude Code session id: a UUID, 36
// characters, hex digits (either case) in groups of 8-4-4-4-12 joined by dashes. Every session
// id Claude Code has sent heirloom is one (its transcripts are named by it, and --session-id
// takes nothing else); the version and variant digits are not checked. A sub-agent's agent_id
// is not a UUID ("a" and hex digits, with a label in some versions) and has no fixed shape.
// (A hand-written check, not a regexp: the hook process links this package.)
func IsSessionID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// clip cuts an id for an error message at 64 bytes, on a rune boundary.
func clip(id string) string {
	if len(id) <= 64 {
		return id
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return id[:cut] + "…"
}

// knownEvent reports whether Decode maps name to a kind other than KindUnknown.
func knownEvent(name string) bool {
	switch name {
	case EventSessionStart, EventUserPromptSubmit, EventPreToolUse, EventPostToolUse,
		EventPostToolUseFailure, EventSubagentStart, EventSubagentStop, EventPreCompact,
		EventStop, EventSessionEnd:
		return true
	}
	return false
}

func isSpawnTool(name string) bool { return name == ToolAgent || name == ToolTask }

// spawnOf reads an Agent/Task tool_input. An input of another shape yields only the id.
func spawnOf(toolUseID string, input json.RawMessage) *adapters.Spawn {
	var in AgentInput
	if adapters.IsObject(input) {
		_ = json.Unmarshal(input, &in)
	}
	return &adapters.Spawn{
		ToolUseID:   toolUseID,
		Description: in.Description,
		Prompt:      in.Prompt,
		Type:        in.SubagentType,
	}
}

func toolOf(name, useID string, input json.RawMessage) *adapters.ToolCall {
	return &adapters.ToolCall{Name: name, UseID: useID, Files: toolinput.Files(input)}
}

// agentResult reads an Agent/Task tool_response: normally an AgentResponse object; a bare
// string or content array is taken as the text.
func agentResult(raw json.RawMessage) *adapters.Result {
	r := &adapters.Result{}
	if !adapters.IsObject(raw) {
		r.Text = contentText(raw)
		return r
	}
	var resp AgentResponse
	_ = json.Unmarshal(raw, &resp)
	r.AgentID, r.Status, r.Text = resp.AgentID, resp.Status, contentText(resp.Content)
	r.Tokens, r.DurationMs, r.Steps = resp.TotalTokens, resp.TotalDurationMs, int(resp.TotalToolUseCount)
	return r
}

// contentText returns the text of message or tool-result content: a JSON string as is, or the
// text blocks of an array joined by newlines. Anything else yields "".
func contentText(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	case '[':
		var blocks []ContentBlock
		_ = json.Unmarshal(raw, &blocks)
		var texts []string
		for _, b := range blocks {
			if b.Type == "text" && b.Text != "" {
				texts = append(texts, b.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return ""
}

// HookEventName returns the hook_event_name of a hook call's body, or "" when the body is not a
// JSON object or the field is missing or not a string. Unlike Decode it checks nothing else, for
// callers that only relay the call (the hook shim).
func HookEventName(body []byte) string {
	var in struct {
		HookEventName string `json:"hook_event_name"`
	}
	_ = json.Unmarshal(body, &in)
	return in.HookEventName
}
