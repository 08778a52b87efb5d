package claudecode

import "encoding/json"

// Hook event names, as Claude Code sends them in hook_event_name.
const (
	EventSessionStart       = "SessionStart"
	EventUserPromptSubmit   = "UserPromptSubmit"
	EventPreToolUse         = "PreToolUse"
	EventPostToolUse        = "PostToolUse"
	EventPostToolUseFailure = "PostToolUseFailure"
	EventSubagentStart      = "SubagentStart"
	EventSubagentStop       = "SubagentStop"
	EventPreCompact         = "PreCompact"
	EventStop               = "Stop"
	EventSessionEnd         = "SessionEnd"
)

// Names of the tool that spawns a sub-agent: "Agent" since Claude Code 2.1, "Task" before.
const (
	ToolAgent = "Agent"
	ToolTask  = "Task"
)

// HookInput holds the fields Claude Code sends with every hook call. Fields Claude Code leaves
// out are empty; fields it adds that are not listed here are ignored.
type HookInput struct {
	// SessionID is the top-level session's id, also for events a sub-agent caused.
	SessionID string `json:"session_id"`
	// TranscriptPath is the top-level session's transcript file.
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`             // the session's working directory
	PermissionMode string `json:"permission_mode"` // "default", "plan", …; absent on some events
	HookEventName  string `json:"hook_event_name"` // one of the Event* constants, or a newer event
	PromptID       string `json:"prompt_id"`       // the user prompt being served; absent before the first
	// AgentID is the sub-agent the hook fired inside, or is about (SubagentStart/Stop). Empty on
	// the main thread.
	AgentID string `json:"agent_id"`
	// AgentType is the sub-agent's type. On SubagentStop an empty AgentType with a non-empty
	// AgentID is the internal compaction agent. A main thread started with --agent also carries
	// it, without AgentID.
	AgentType string `json:"agent_type"`
}

// SessionStartInput is the SessionStart hook's input. Claude Code sends it only to command hooks.
type SessionStartInput struct {
	HookInput
	Source string `json:"source"` // "startup", "resume", "clear" or "compact"
	Model  string `json:"model"`  // the model in use; sometimes absent
}

// UserPromptSubmitInput is the UserPromptSubmit hook's input.
type UserPromptSubmitInput struct {
	HookInput
	Prompt string `json:"prompt"` // the prompt as the user submitted it
}

// PreToolUseInput is the PreToolUse hook's input.
type PreToolUseInput struct {
	HookInput
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"` // the tool's arguments; AgentInput for Agent/Task
	ToolUseID string          `json:"tool_use_id"`
}

// PostToolUseInput is the PostToolUse hook's input; it fires only after a tool succeeded.
type PostToolUseInput struct {
	HookInput
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	// ToolResponse is what the tool returned: AgentResponse for Agent/Task, any JSON otherwise.
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`
	DurationMs   int64           `json:"duration_ms"` // how long the tool ran
}

// PostToolUseFailureInput is the PostToolUseFailure hook's input: a tool call that failed or
// was interrupted.
type PostToolUseFailureInput struct {
	HookInput
	ToolName    string          `json:"tool_name"`
	ToolInput   json.RawMessage `json:"tool_input"`
	ToolUseID   string          `json:"tool_use_id"`
	Error       string          `json:"error"`        // what went wrong
	IsInterrupt bool            `json:"is_interrupt"` // the user interrupted the call
}

// SubagentStartInput is the SubagentStart hook's input. HookInput.SessionID names the session
// that owns the sub-agent; AgentID and AgentType name the sub-agent.
type SubagentStartInput struct {
	HookInput
}

// SubagentStopInput is the SubagentStop hook's input.
type SubagentStopInput struct {
	HookInput
	AgentTranscriptPath  string `json:"agent_transcript_path"`  // the sub-agent's own transcript
	LastAssistantMessage string `json:"last_assistant_message"` // the sub-agent's final message
	StopHookActive       bool   `json:"stop_hook_active"`       // a stop hook already kept it going
}

// PreCompactInput is the PreCompact hook's input.
type PreCompactInput struct {
	HookInput
	Trigger            string `json:"trigger"`             // "manual" (/compact) or "auto"
	CustomInstructions string `json:"custom_instructions"` // the user's /compact arguments; empty for auto
}

// StopInput is the Stop hook's input: the main thread finished a turn.
type StopInput struct {
	HookInput
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`
}

// SessionEndInput is the SessionEnd hook's input.
type SessionEndInput struct {
	HookInput
	Reason string `json:"reason"` // "clear", "logout", "prompt_input_exit", "other", …
}

// AgentInput is the tool_input of the Agent (formerly Task) tool.
type AgentInput struct {
	Description  string `json:"description"`   // the short description the parent gave
	Prompt       string `json:"prompt"`        // the task: the sub-agent's first user message
	SubagentType string `json:"subagent_type"` // the sub-agent type asked for
}

// AgentResponse is the tool_response of a successful Agent (formerly Task) call.
type AgentResponse struct {
	Status    string `json:"status"`    // "completed", or another word for a run that did not finish
	Prompt    string `json:"prompt"`    // the task prompt
	AgentID   string `json:"agentId"`   // the sub-agent that ran
	AgentType string `json:"agentType"` // its type
	// Content is the sub-agent's answer: an array of content blocks, or a string.
	Content           json.RawMessage `json:"content"`
	TotalDurationMs   int64           `json:"totalDurationMs"`
	TotalTokens       int64           `json:"totalTokens"`
	TotalToolUseCount int64           `json:"totalToolUseCount"`
}

// ContentBlock is one block of message or tool-result content. Only text blocks carry Text.
type ContentBlock struct {
	Type string `json:"type"` // "text", "image", …
	Text string `json:"text"`
}
