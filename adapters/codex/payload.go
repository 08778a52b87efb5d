package codex

import "encoding/json"

// Hook event names, as Codex CLI 0.169 sends them in hook_event_name.
const (
	EventSessionStart      = "SessionStart"
	EventUserPromptSubmit  = "UserPromptSubmit"
	EventPreToolUse        = "PreToolUse"
	EventPostToolUse       = "PostToolUse"
	EventPermissionRequest = "PermissionRequest"
	EventSubagentStart     = "SubagentStart"
	EventSubagentStop      = "SubagentStop"
	EventPreCompact        = "PreCompact"
	EventPostCompact       = "PostCompact"
	EventStop              = "Stop"
	EventSessionEnd        = "SessionEnd"
)

// Events lists every hook event heirloom installs, in the order install writes them.
var Events = []string{
	EventSessionStart, EventUserPromptSubmit, EventPreToolUse, EventPostToolUse, EventStop,
	EventSessionEnd, EventSubagentStart, EventSubagentStop, EventPreCompact, EventPostCompact,
}

// ToolSpawn is the tool that starts a sub-agent. Codex 0.169 offers it in the tool namespace
// AgentNamespace and names it bare in PreToolUse and PostToolUse; its sibling tools arrive with
// the namespace glued on ("multi_agent_v1wait_agent"), which IsSpawnTool accepts too.
const (
	ToolSpawn      = "spawn_agent"
	AgentNamespace = "multi_agent_v1"
)

// DefaultAgentType is the agent_type Codex gives a sub-agent spawned without a role.
const DefaultAgentType = "default"

// HookInput holds the fields Codex sends with every hook call. Fields Codex leaves out are
// empty; fields it adds that are not listed here are ignored.
type HookInput struct {
	// SessionID is the ROOT thread's id, also for every hook a sub-agent fires.
	SessionID string `json:"session_id"`
	// TurnID is the turn the event belongs to (turn events only).
	TurnID string `json:"turn_id"`
	// TranscriptPath is the rollout file of the thread the hook fired in, except for
	// SubagentStart, where it is the starting CHILD's rollout. Codex sends null where it keeps none.
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Model          string `json:"model"`
	PermissionMode string `json:"permission_mode"`
	// AgentID is the sub-agent thread the hook fired in, or is about (SubagentStart/Stop). Empty
	// on the root thread.
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"` // the sub-agent's role ("default")
}

// SessionStartInput is the SessionStart hook's input.
type SessionStartInput struct {
	HookInput
	Source string `json:"source"` // "startup", "resume", "clear", "compact" or "fork"
}

// UserPromptSubmitInput is the UserPromptSubmit hook's input; a sub-agent's first one carries
// its task.
type UserPromptSubmitInput struct {
	HookInput
	Prompt string `json:"prompt"`
}

// ToolInput is the PreToolUse, PostToolUse and PermissionRequest hooks' input.
type ToolInput struct {
	HookInput
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	// ToolResponse (PostToolUse) is the tool's output: for spawn_agent a JSON string holding
	// {"agent_id", "nickname"}.
	ToolResponse json.RawMessage `json:"tool_response"`
}

// SpawnInput is spawn_agent's tool_input: the task as message, or as structured items.
type SpawnInput struct {
	Message   string      `json:"message"`
	Items     []SpawnItem `json:"items"`
	AgentType string      `json:"agent_type"` // not offered by 0.169; read should it appear
	Model     string      `json:"model"`
}

// SpawnItem is one structured input item of a spawn (type "text" carries Text).
type SpawnItem struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// SpawnReceipt is spawn_agent's output: the new sub-agent's thread id. It arrives before the
// sub-agent's SubagentStart (spawn_agent returns at once; the sub-agent runs on).
type SpawnReceipt struct {
	AgentID  string `json:"agent_id"`
	Nickname string `json:"nickname"`
}

// StopInput is the Stop and SubagentStop hooks' input.
type StopInput struct {
	HookInput
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`
	// AgentTranscriptPath (SubagentStop) is the stopping sub-agent's rollout; TranscriptPath is
	// then the rollout of the thread that spawned it.
	AgentTranscriptPath string `json:"agent_transcript_path"`
}

// CompactInput is the PreCompact and PostCompact hooks' input.
type CompactInput struct {
	HookInput
	Trigger string `json:"trigger"` // "manual" or "auto"
}
