package openclaw

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// Frame is one Gateway WebSocket frame: a request {type:"req", id, method, params}, a response
// {type:"res", id, ok, payload|error} or an event {type:"event", event, payload, seq}. Fields a
// frame type does not use are zero.
type Frame struct {
	Type    string          `json:"type"`              // "req", "res" or "event"
	ID      string          `json:"id,omitempty"`      // req: the request's id; res: the id it answers
	Method  string          `json:"method,omitempty"`  // req: the method called ("sessions.list", …)
	Params  json.RawMessage `json:"params,omitempty"`  // req: the method's parameters
	Event   string          `json:"event,omitempty"`   // event: its name ("sessions.changed", …)
	Payload json.RawMessage `json:"payload,omitempty"` // event: its body; res: the result when OK
	OK      *bool           `json:"ok,omitempty"`      // res: whether the call succeeded
	Error   *FrameError     `json:"error,omitempty"`   // res: why the call failed, when not OK
	// Seq numbers the events the Gateway sends one connection; nil on frames without one
	// (connect.challenge, responses).
	Seq *int64 `json:"seq,omitempty"`
}

// FrameError is the error of a failed response: {code, message, details?, retryable?,
// retryAfterMs?}.
type FrameError struct {
	Code    string `json:"code"`    // "INVALID_REQUEST", "UNAVAILABLE", …
	Message string `json:"message"` // human-readable
	// Details is structured detail, e.g. {"reason": "session-changed"} or a missing scope.
	Details      json.RawMessage `json:"details,omitempty"`
	Retryable    bool            `json:"retryable,omitempty"`    // the same call may succeed later
	RetryAfterMs int64           `json:"retryAfterMs,omitempty"` // how long to wait first; 0: unsaid
}

// Millis is a time as OpenClaw writes it: milliseconds since the Unix epoch, a JSON number.
// Anything else (null, a string, a number out of range) decodes to zero rather than failing the
// frame it is in.
type Millis int64

// UnmarshalJSON implements json.Unmarshaler; it never fails.
func (m *Millis) UnmarshalJSON(b []byte) error {
	*m = 0
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 64)
	if err == nil && f > 0 && f < maxMillis {
		*m = Millis(math.Trunc(f))
	}
	return nil
}

// maxMillis bounds the timestamps Millis accepts (the year 33658), far inside time.Time's range.
const maxMillis = 1e15

// Time returns m as a UTC time; zero when m is not positive.
func (m Millis) Time() time.Time {
	if m <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(m)).UTC()
}

// SessionRow is a session as the Gateway presents it: an element of sessions.list's sessions,
// the session of sessions.describe, and the "session" object of sessions.changed. Only the fields
// heirloom reads are listed; all are optional.
type SessionRow struct {
	Key          string `json:"key"`       // the session key, agent:<agentId>:<rest>
	SessionID    string `json:"sessionId"` // the current generation's id; a reset changes it
	AgentID      string `json:"agentId"`
	Label        string `json:"label"`        // a title the user or the spawning call gave
	DisplayName  string `json:"displayName"`  // the title shown when there is no label
	DerivedTitle string `json:"derivedTitle"` // a title derived from the transcript
	// SpawnedBy is the key of the session whose sessions_spawn call created this one; empty for a
	// top-level session. Written once, at creation.
	SpawnedBy string `json:"spawnedBy"`
	// ParentSessionKey is the session this one hangs under (the spawner, or the base session of
	// a :thread: key).
	ParentSessionKey string `json:"parentSessionKey"`
	SpawnDepth       int    `json:"spawnDepth"`   // 1 for a child of a top-level session, 2 for a grandchild, …
	SubagentRole     string `json:"subagentRole"` // "orchestrator" (may spawn) or "leaf"
	// WorkspaceDir is the session's persisted task cwd or spawned workspace: its project.
	WorkspaceDir        string `json:"workspaceDir"`
	SpawnedCwd          string `json:"spawnedCwd"`
	SpawnedWorkspaceDir string `json:"spawnedWorkspaceDir"`
	Status              string `json:"status"` // queued, running, done, failed, killed, timeout
	CreatedAt           Millis `json:"createdAt"`
	UpdatedAt           Millis `json:"updatedAt"`
}

// SessionsChanged is the payload of a sessions.changed event. A keyed change carries the
// affected row in Session; the same facts also appear at the top level as event receipts (the
// only copy when the Gateway could not prepare the row, and on deletes). A change without a
// session key invalidates the whole list.
type SessionsChanged struct {
	SessionRow             // the top-level copies of the row's fields
	SessionKey string      `json:"sessionKey"`
	Reason     string      `json:"reason"` // "create", "send", "patch", "compact", "delete", "reset", …; absent on lifecycle receipts
	Phase      string      `json:"phase"`  // lifecycle receipts: "start", "model", "end", "error"; transcript receipts: "message"
	RunID      string      `json:"runId"`  // lifecycle receipts: the run
	Compacted  bool        `json:"compacted"`
	Ts         Millis      `json:"ts"`
	Session    *SessionRow `json:"session"`
}

// SessionMessage is the payload of a session.message event: one transcript message appended
// (or rewritten) in a subscribed session.
type SessionMessage struct {
	SessionKey string            `json:"sessionKey"`
	MessageID  string            `json:"messageId"` // the message's stable id
	Message    TranscriptMessage `json:"message"`
}

// TranscriptMessage is one message of an OpenClaw transcript. Role says which fields it uses.
type TranscriptMessage struct {
	// Role is "user", "assistant", "toolResult", "custom", "compactionSummary",
	// "branchSummary" or "bashExecution".
	Role string `json:"role"`
	// Content is a string or an array of ContentPart (user, assistant, toolResult, custom).
	Content   json.RawMessage `json:"content"`
	Timestamp Millis          `json:"timestamp"`
	// ErrorMessage is why an assistant message failed (stopReason "error").
	ErrorMessage string `json:"errorMessage"`

	// toolResult.
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	IsError    bool            `json:"isError"`
	Details    json.RawMessage `json:"details"` // the tool's structured result

	// custom: a message a plugin or the runtime wrote ("openclaw.nested-tool.v1", …).
	CustomType string `json:"customType"`
	Display    *bool  `json:"display"` // false: not shown to the user

	// compactionSummary, branchSummary.
	Summary string `json:"summary"`

	// bashExecution: a command the user ran with "!".
	Command string `json:"command"`
	Output  string `json:"output"`

	IdempotencyKey string `json:"idempotencyKey"`
	// OpenClaw is the Gateway's bookkeeping: the message's stable id.
	OpenClaw struct {
		ID string `json:"id"`
	} `json:"__openclaw"`
}

// ContentPart is one element of a message's content array.
type ContentPart struct {
	Type string `json:"type"` // "text", "thinking", "image", "toolCall", "toolResult"
	Text string `json:"text"` // text

	// toolCall.
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`

	// toolResult (inside a custom message).
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	IsError    bool            `json:"isError"`
	Content    json.RawMessage `json:"content"`
	Details    json.RawMessage `json:"details"`
}

// SessionTool is the payload of a session.tool event: a tool call of a run starting, progressing
// or returning.
type SessionTool struct {
	SessionKey string   `json:"sessionKey"`
	RunID      string   `json:"runId"`
	Ts         Millis   `json:"ts"`
	Data       ToolData `json:"data"`
}

// ToolData is a session.tool event's data.
type ToolData struct {
	Phase string `json:"phase"` // "start", "update" or "result"
	// Name is the tool. With tool search, the model calls the "tool_call" tool, whose Args name
	// the real tool ({"id": "sessions_spawn", "args": {…}}); the real call then arrives as its
	// own event, with ParentToolCallID set.
	Name             string          `json:"name"`
	ToolCallID       string          `json:"toolCallId"`
	ParentToolCallID string          `json:"parentToolCallId"`
	Args             json.RawMessage `json:"args"`    // start
	IsError          bool            `json:"isError"` // result
	// Result is {content: [parts], details: {…}} (result).
	Result json.RawMessage `json:"result"`
}

// ToolResult is the result of a tool call: what the model sees and the tool's structured
// details.
type ToolResult struct {
	Content json.RawMessage `json:"content"` // a string or an array of ContentPart
	Details json.RawMessage `json:"details"`
}

// SpawnArgs are the arguments of a sessions_spawn call heirloom reads.
type SpawnArgs struct {
	Task    string `json:"task"`    // the child's assignment: its objective
	Label   string `json:"label"`   // a short name for the child
	AgentID string `json:"agentId"` // the configured agent the child runs as; empty: the caller's
}

// SpawnReceipt is what a sessions_spawn call returns: {status, childSessionKey, runId, …}, as
// the result's details and, as JSON text, its content.
type SpawnReceipt struct {
	Status          string `json:"status"` // "accepted", "forbidden" or "error"
	ChildSessionKey string `json:"childSessionKey"`
	RunID           string `json:"runId"`
	Error           string `json:"error"`
}

// TaskEvent is the payload of a task event: {action: "upserted", task} when a background task
// changed, {action: "deleted", taskId}, or {action: "restored"}.
type TaskEvent struct {
	Action string       `json:"action"`
	Task   *TaskSummary `json:"task"`
}

// TaskSummary is a background task as the Gateway publishes it. A sub-agent run is a task of
// kind and runtime "subagent"; a session's own run is one of kind "cli".
type TaskSummary struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Runtime string `json:"runtime"`
	// Status is "queued", "running", "completed", "failed", "timed_out" or "cancelled".
	Status          string `json:"status"`
	Title           string `json:"title"`           // a sub-agent's label, else its task
	SessionKey      string `json:"sessionKey"`      // the requester: the spawning session
	OwnerKey        string `json:"ownerKey"`        // the session that owns the task
	ChildSessionKey string `json:"childSessionKey"` // the sub-agent's session
	RunID           string `json:"runId"`
	CreatedAt       Millis `json:"createdAt"`
	UpdatedAt       Millis `json:"updatedAt"`
	StartedAt       Millis `json:"startedAt"`
	EndedAt         Millis `json:"endedAt"`
	// ProgressSummary is a sub-agent's final reply once it finished, cut to 120 characters
	// (ending in "…" when cut).
	ProgressSummary string `json:"progressSummary"`
	TerminalSummary string `json:"terminalSummary"` // cut to 120 characters likewise
	Error           string `json:"error"`
	// Result and Prompt are the uncut reply and the task; tasks.get sends them, events do not.
	Result string `json:"result"`
	Prompt string `json:"prompt"`
}

// AgentEvent is the payload of an agent event: one item of a run's event stream.
type AgentEvent struct {
	SessionKey string `json:"sessionKey"`
	// SpawnedBy is the spawning session, set on the events of a sub-agent's runs.
	SpawnedBy string    `json:"spawnedBy"`
	RunID     string    `json:"runId"`
	Stream    string    `json:"stream"` // "lifecycle", "compaction", "assistant", "item", "usage", …
	Ts        Millis    `json:"ts"`
	Data      AgentData `json:"data"`
}

// AgentData is the data of the lifecycle and compaction streams of an agent event.
type AgentData struct {
	// Phase is, for lifecycle, "start", "model", "finishing", "end" or "error"; for
	// compaction, "start" or "end".
	Phase            string `json:"phase"`
	StartedAt        Millis `json:"startedAt"`
	EndedAt          Millis `json:"endedAt"`
	Aborted          bool   `json:"aborted"`
	StopReason       string `json:"stopReason"` // "stop", "error", "timeout", "restart", …
	Status           string `json:"status"`
	LivenessState    string `json:"livenessState"` // "working", "paused", "blocked", "abandoned"
	TimeoutPhase     string `json:"timeoutPhase"`
	Yielded          bool   `json:"yielded"`          // the run paused to wait for its children
	ExecutionSettled bool   `json:"executionSettled"` // no retry follows an error
	Error            string `json:"error"`
	// TerminalReply is the run's final reply (lifecycle end).
	TerminalReply struct {
		Disposition string `json:"disposition"` // "visible" when the reply was delivered
		Text        string `json:"text"`
	} `json:"terminalReply"`
	Completed bool `json:"completed"` // compaction end: the compaction was committed
}

// SessionOperation is the payload of a session.operation event, which the Gateway sends around
// a compaction it runs for sessions.compact.
type SessionOperation struct {
	OperationID string `json:"operationId"`
	Operation   string `json:"operation"` // "compact"
	Phase       string `json:"phase"`     // "start" or "end"
	SessionKey  string `json:"sessionKey"`
	Completed   bool   `json:"completed"` // end: the compaction was committed
	Reason      string `json:"reason"`    // end: why it was not, or the compactor's note
	Ts          Millis `json:"ts"`
}

// SessionList is the result of sessions.list, {ts, count, sessions: [SessionRow], …}, or of
// sessions.subscribe with list parameters, {subscribed, list: <the same>}.
type SessionList struct {
	Ts         Millis          `json:"ts"`
	Sessions   json.RawMessage `json:"sessions"`
	Subscribed bool            `json:"subscribed"`
	List       json.RawMessage `json:"list"`
}

// SessionDescription is the result of sessions.describe: {session: SessionRow}, or
// {session: null} for a session the Gateway does not know.
type SessionDescription struct {
	Session json.RawMessage `json:"session"`
}

// ChatHistory is the result of chat.history: {sessionKey, sessionId, messages: [row, …],
// hasMore?, nextOffset?, totalMessages?, deltaCursor?, sessionInfo, …}, the latest messages
// of the session's current transcript, oldest first. Only the fields heirloom reads are listed.
type ChatHistory struct {
	SessionKey string          `json:"sessionKey"`
	SessionID  string          `json:"sessionId"`
	Messages   json.RawMessage `json:"messages"` // an array of HistoryMessage
	HasMore    bool            `json:"hasMore"`  // older rows exist past the page
}

// HistoryMessage is one row of chat.history's messages: a transcript message as
// session.message carries it, display-normalized, with the Gateway's bookkeeping in
// __openclaw: {id, seq, kind?, truncated?, …}.
type HistoryMessage struct {
	TranscriptMessage
	Meta HistoryMeta `json:"__openclaw"`
}

// HistoryMeta is a chat.history row's __openclaw envelope.
type HistoryMeta struct {
	// ID is the transcript entry's id; the rows one record projects into share it.
	ID  string `json:"id"`
	Seq int64  `json:"seq"` // the record's position in the transcript, from 1
	// Kind marks synthetic rows: "compaction" and "reset" boundaries.
	Kind string `json:"kind"`
	// Truncated marks a placeholder the Gateway sent instead of a row too large to send.
	Truncated bool `json:"truncated"`
}
