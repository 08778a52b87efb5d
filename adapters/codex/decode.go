package codex

import (
	"encoding/json"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/toolinput"
)

// Adapter decodes Codex hook calls, rollout files and the session_meta that opens a
// sub-agent's rollout. The zero value is ready to use and safe for concurrent use.
type Adapter struct{}

var (
	_ adapters.Hooks         = Adapter{}
	_ adapters.Transcripts   = Adapter{}
	_ adapters.SubagentMetas = Adapter{}
)

// Harness returns "codex".
func (Adapter) Harness() string { return Harness }

// Decode turns one hook call's body into an adapters.Event with Harness "codex" and Name set to
// hook_event_name. Event.At is left zero for the caller to stamp.
//
// It returns an error wrapping adapters.ErrMalformed when body is not a JSON object, when
// hook_event_name is missing or empty, when a known event has no session_id, when SubagentStart
// or SubagentStop has no agent_id, and when an id is no id a record may have
// (adapters.CheckIDs). An event it does not know decodes to adapters.KindUnknown without error;
// a field of an unexpected JSON type is left zero.
//
// How Codex's events map:
//   - A sub-agent's own hooks carry its agent_id with the ROOT's session_id: Event.AgentID
//     names the issuer, and TranscriptPath is left empty so the root's rollout is never
//     confused with the sub-agent's (the sub-agent's own path is AgentTranscriptPath).
//   - PreToolUse of spawn_agent is a KindSpawn; its PostToolUse a KindSpawnResult whose Result
//     names the new sub-agent (AgentID) with Status "launched": spawn_agent returns at once, the
//     sub-agent's SubagentStop ends its run.
//   - SubagentStart carries the child's rollout as AgentTranscriptPath (its session_meta names
//     the exact parent thread); SubagentStop the child's last message as its Result.
//   - PostCompact is a KindCompacted; the SessionStart(compact) that follows it answers the
//     objective reinforcement.
func (Adapter) Decode(body []byte) (adapters.Event, error) {
	var in HookInput
	if err := adapters.DecodeObject("hook call", body, &in); err != nil {
		return adapters.Event{}, err
	}
	if in.HookEventName == "" {
		return adapters.Event{}, adapters.Malformed("hook call: hook_event_name missing, empty or not a string")
	}
	ev := adapters.Event{
		Harness:        Harness,
		Kind:           adapters.KindUnknown,
		Name:           in.HookEventName,
		SessionID:      in.SessionID,
		Cwd:            in.Cwd,
		TranscriptPath: in.TranscriptPath,
	}
	if in.AgentID != "" {
		ev.AgentID, ev.AgentType = in.AgentID, agentType(in.AgentType)
		// A sub-agent's hook names the root's session but the sub-agent's rollout.
		ev.TranscriptPath, ev.AgentTranscriptPath = "", in.TranscriptPath
	}
	if !knownEvent(in.HookEventName) {
		return ev, adapters.CheckIDs(ev)
	}
	if in.SessionID == "" {
		return adapters.Event{}, adapters.Malformed("%s: session_id missing, empty or not a string", in.HookEventName)
	}
	switch in.HookEventName {
	case EventSessionStart:
		var p SessionStartInput
		_ = adapters.DecodeObject("hook call", body, &p)
		ev.Kind, ev.Source = adapters.KindSessionStart, p.Source
	case EventUserPromptSubmit:
		var p UserPromptSubmitInput
		_ = adapters.DecodeObject("hook call", body, &p)
		ev.Kind, ev.Prompt = adapters.KindPrompt, p.Prompt
	case EventPreToolUse, EventPostToolUse:
		var p ToolInput
		_ = adapters.DecodeObject("hook call", body, &p)
		decodeTool(&ev, in.HookEventName == EventPreToolUse, p)
	case EventSubagentStart:
		if in.AgentID == "" {
			return adapters.Event{}, adapters.Malformed("SubagentStart: agent_id missing, empty or not a string")
		}
		ev.Kind = adapters.KindSubagentStart
	case EventSubagentStop:
		if in.AgentID == "" {
			return adapters.Event{}, adapters.Malformed("SubagentStop: agent_id missing, empty or not a string")
		}
		var p StopInput
		_ = adapters.DecodeObject("hook call", body, &p)
		// transcript_path is the rollout of the thread that spawned the sub-agent, which for a
		// nested one is no root's: heirloom keeps the root's from the root's own hooks.
		ev.Kind, ev.TranscriptPath, ev.AgentTranscriptPath = adapters.KindSubagentStop, "", p.AgentTranscriptPath
		ev.Result = &adapters.Result{AgentID: in.AgentID, Text: p.LastAssistantMessage}
	case EventPreCompact:
		var p CompactInput
		_ = adapters.DecodeObject("hook call", body, &p)
		ev.Kind, ev.Trigger = adapters.KindPreCompact, p.Trigger
	case EventPostCompact:
		var p CompactInput
		_ = adapters.DecodeObject("hook call", body, &p)
		ev.Kind, ev.Trigger = adapters.KindCompacted, p.Trigger
	case EventStop:
		ev.Kind = adapters.KindStop
	case EventSessionEnd:
		ev.Kind = adapters.KindSessionEnd
	}
	if err := adapters.CheckIDs(ev); err != nil {
		return adapters.Event{}, err
	}
	return ev, nil
}

// decodeTool fills ev from a PreToolUse (pre) or PostToolUse.
func decodeTool(ev *adapters.Event, pre bool, p ToolInput) {
	if !IsSpawnTool(p.ToolName) {
		ev.Kind, ev.Tool = adapters.KindToolResult, toolOf(p)
		if pre {
			ev.Kind = adapters.KindToolUse
		}
		return
	}
	ev.Spawn = spawnOf(RunID(ev.SessionID, p.ToolUseID), p.ToolInput)
	if pre {
		ev.Kind = adapters.KindSpawn
		return
	}
	ev.Kind = adapters.KindSpawnResult
	ev.Result = &adapters.Result{Status: StatusLaunched}
	var r SpawnReceipt
	adapters.UnmarshalObject(stringOrObject(p.ToolResponse), &r)
	if r.AgentID != "" {
		ev.Result.AgentID = r.AgentID
		return
	}
	// No receipt: the spawn failed, and the response is Codex's error text.
	ev.Result.Status, ev.Result.Text = adapters.StatusFailed, textOf(p.ToolResponse)
}

// RunID is heirloom's id for the run of the spawn_agent call callID in root session root:
// "<root>:<call id>". A Responses-API provider names calls as it likes, and one that counts them
// per process ("call_1" in every session) would otherwise give two sessions' spawns one run.
// "" when callID is "".
func RunID(root, callID string) string {
	if callID == "" {
		return ""
	}
	return root + ":" + callID
}

// StatusLaunched is the Result.Status of a spawn_agent that returned its receipt: the
// sub-agent runs on, and its SubagentStop ends the run.
const StatusLaunched = "launched"

// IsSpawnTool reports whether a hook's tool_name is spawn_agent, bare or with its namespace.
func IsSpawnTool(name string) bool { return bareTool(name) == ToolSpawn }

// bareTool returns a tool_name without the AgentNamespace Codex may glue on, with or without a
// separator ("multi_agent_v1wait_agent", "multi_agent_v1.wait_agent": "wait_agent"). Any other
// name, and the namespace alone, comes back as it is.
func bareTool(name string) string {
	rest, ok := strings.CutPrefix(name, AgentNamespace)
	if !ok {
		return name
	}
	if rest = strings.TrimLeft(rest, ".:_/"); rest == "" {
		return name
	}
	return rest
}

// spawnOf reads a spawn_agent tool_input: its task (message, else the text items joined) is
// the sub-agent's objective and its first line the spawn's description.
func spawnOf(toolUseID string, input json.RawMessage) *adapters.Spawn {
	var in SpawnInput
	adapters.UnmarshalObject(input, &in)
	prompt := in.Message
	if prompt == "" {
		var texts []string
		for _, it := range in.Items {
			if it.Type == "text" && it.Text != "" {
				texts = append(texts, it.Text)
			}
		}
		prompt = strings.Join(texts, "\n")
	}
	return &adapters.Spawn{
		ToolUseID:   toolUseID,
		Prompt:      prompt,
		Description: describe(prompt),
		Type:        agentType(in.AgentType),
	}
}

// describe makes a spawn's short description from its task: the first line, at most 80
// characters, cut at a word.
func describe(task string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(task), "\n")
	line = strings.TrimSpace(line)
	if len([]rune(line)) <= 80 {
		return line
	}
	r := []rune(line)[:79] // and "…": 80 in all
	if i := strings.LastIndexByte(string(r), ' '); i > 40 {
		return string(r)[:i] + "…"
	}
	return string(r) + "…"
}

// agentType is a sub-agent's type: the role Codex names, DefaultAgentType when none.
func agentType(t string) string {
	if t == "" {
		return DefaultAgentType
	}
	return t
}

func toolOf(p ToolInput) *adapters.ToolCall {
	return &adapters.ToolCall{Name: bareTool(p.ToolName), UseID: p.ToolUseID, Files: toolFiles(p.ToolInput)}
}

// toolFiles returns the file paths a tool call's input names: the fields toolinput knows, and
// the files an apply_patch patch adds, updates, deletes or moves.
func toolFiles(input json.RawMessage) []string {
	files := toolinput.Files(input)
	var in struct {
		Patch string `json:"patch"`
		Input string `json:"input"`
	}
	adapters.UnmarshalObject(input, &in)
	for _, p := range patchFiles(in.Patch + "\n" + in.Input) {
		files = appendNew(files, p)
	}
	return files
}

// patchFiles returns the paths of an apply_patch patch's "*** Add File: P", "*** Update File:
// P", "*** Delete File: P" and "*** Move to: P" lines.
func patchFiles(patch string) []string {
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSpace(line)
		for _, h := range [...]string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if p, ok := strings.CutPrefix(line, h); ok && toolinput.LooksLikePath(strings.TrimSpace(p)) {
				out = appendNew(out, strings.TrimSpace(p))
			}
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// stringOrObject returns raw's JSON object: raw itself, or the object a JSON string holds
// (Codex sends tool output as a string).
func stringOrObject(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return json.RawMessage(s)
	}
	return raw
}

// textOf returns a tool response as text: a JSON string as is, anything else as its JSON.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// knownEvent reports whether Decode maps name to a kind other than KindUnknown.
func knownEvent(name string) bool {
	switch name {
	case EventSessionStart, EventUserPromptSubmit, EventPreToolUse, EventPostToolUse,
		EventSubagentStart, EventSubagentStop, EventPreCompact, EventPostCompact, EventStop, EventSessionEnd:
		return true
	}
	return false
}

// HookEventName returns the hook_event_name of a hook call's body, or "" when the body is not a
// JSON object or the field is missing or not a string. It checks nothing else.
func HookEventName(body []byte) string {
	var in struct {
		HookEventName string `json:"hook_event_name"`
	}
	_ = json.Unmarshal(body, &in)
	return in.HookEventName
}
