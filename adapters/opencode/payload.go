package opencode

import (
	"encoding/json"
	"strings"
)

// Event types, as OpenCode names them in a frame's "type". Only the ones DecodeFrame maps, or
// deliberately ignores, are listed; others decode to no events.
const (
	EventServerConnected  = "server.connected"         // first frame of every stream
	EventServerHeartbeat  = "server.heartbeat"         // about every 10 s
	EventInstanceDisposed = "server.instance.disposed" // precedes a clean close of the stream
	EventSessionCreated   = "session.created"
	EventSessionUpdated   = "session.updated"
	EventSessionDeleted   = "session.deleted"
	EventSessionStatus    = "session.status"    // busy, retry or idle
	EventSessionIdle      = "session.idle"      // the session's run loop finished
	EventSessionCompacted = "session.compacted" // a compaction summary was written
	EventSessionError     = "session.error"
	EventMessageUpdated   = "message.updated"
	EventPartUpdated      = "message.part.updated"
	EventPartDelta        = "message.part.delta" // a text fragment; the next part update has it all
	// EventSync is the type of the payload /global/event uses to repeat a session or message
	// event: its syncEvent holds the same id and, as data, the same properties, under a
	// versioned type ("session.created.1").
	EventSync = "sync"
)

// Names DecodeSessionList and DecodeMessages give their events, which come from REST reads
// rather than from an event type.
const (
	NameSessionList = "session.list"     // GET /session, GET /session/{id}/children
	NameMessages    = "session.messages" // GET /session/{id}/message
)

// Part types, as OpenCode names them in a part's "type".
const (
	PartText       = "text"
	PartTool       = "tool"
	PartReasoning  = "reasoning"
	PartFile       = "file"
	PartStepStart  = "step-start"
	PartStepFinish = "step-finish"
	PartSnapshot   = "snapshot"
	PartPatch      = "patch"
	PartAgent      = "agent"
	PartSubtask    = "subtask"
	PartRetry      = "retry"
	PartCompaction = "compaction"
)

// Tool states, as OpenCode names them in a tool part's state.status.
const (
	ToolPending   = "pending"   // the model started the call; input still streaming
	ToolRunning   = "running"   // input complete, the tool runs
	ToolCompleted = "completed" // state.output holds the result
	ToolError     = "error"     // state.error says why
)

// ToolTask is the tool that starts a child session (a sub-agent).
const ToolTask = "task"

// Frame is one SSE data payload of GET /event, or the payload inside a /global/event frame.
type Frame struct {
	ID         string          `json:"id"`         // "evt_…"; the same for a "sync" copy
	Type       string          `json:"type"`       // one of the Event* constants, or another
	Properties json.RawMessage `json:"properties"` // the event's fields; shape depends on Type
	// SyncEvent is set only on a payload of type "sync" (/global/event).
	SyncEvent *SyncEvent `json:"syncEvent"`
}

// GlobalFrame is one SSE data payload of GET /global/event.
type GlobalFrame struct {
	// Directory is the project instance the event comes from; "global" for events of no
	// instance, absent on server.connected and heartbeats.
	Directory string          `json:"directory"`
	Project   string          `json:"project"` // the project id
	Payload   json.RawMessage `json:"payload"` // a Frame
}

// SyncEvent is the body of a "sync" payload: a session or message event repeated.
type SyncEvent struct {
	ID          string          `json:"id"`          // the repeated event's id
	Type        string          `json:"type"`        // the event type plus a version: "message.updated.1"
	Seq         int64           `json:"seq"`         // position in the aggregate's history
	AggregateID string          `json:"aggregateID"` // the session the event belongs to
	Data        json.RawMessage `json:"data"`        // the repeated event's properties
}

// Time is a pair of OpenCode timestamps, in milliseconds since the Unix epoch; zero when absent.
// Sessions and messages use Created/Updated/Completed, parts and tool states Start/End.
type Time struct {
	Created   int64 `json:"created"`
	Updated   int64 `json:"updated"`
	Completed int64 `json:"completed"`
	Start     int64 `json:"start"`
	End       int64 `json:"end"`
}

// SessionInfo is a session as OpenCode describes it in session events and GET /session.
type SessionInfo struct {
	ID        string `json:"id"` // "ses_…"
	Slug      string `json:"slug"`
	ProjectID string `json:"projectID"`
	Directory string `json:"directory"` // the session's working directory
	// ParentID is the session that started this one with the task tool; empty for a top-level
	// session.
	ParentID string `json:"parentID"`
	Title    string `json:"title"`
	Agent    string `json:"agent"` // the agent the session runs as ("build", "general", …); may be absent
	Version  string `json:"version"`
	Time     Time   `json:"time"` // Created, Updated
}

// SessionProps are the properties of session.created, session.updated and session.deleted.
type SessionProps struct {
	SessionID string      `json:"sessionID"`
	Info      SessionInfo `json:"info"`
}

// SessionIDProps are the properties of session.idle and session.compacted.
type SessionIDProps struct {
	SessionID string `json:"sessionID"`
}

// StatusProps are the properties of session.status.
type StatusProps struct {
	SessionID string `json:"sessionID"`
	Status    struct {
		Type string `json:"type"` // "busy", "retry" or "idle"
	} `json:"status"`
}

// MessageInfo is a message's header, as in message.updated and GET /session/{id}/message. It
// carries no content: that is in the message's parts.
type MessageInfo struct {
	ID        string `json:"id"` // "msg_…"
	SessionID string `json:"sessionID"`
	Role      string `json:"role"`     // "user" or "assistant"
	ParentID  string `json:"parentID"` // assistant: the user message it answers
	Mode      string `json:"mode"`     // assistant: "compaction" for a compaction summary
	Agent     string `json:"agent"`
	Time      Time   `json:"time"` // Created, Completed
}

// PartProps are the properties of message.part.updated.
type PartProps struct {
	SessionID string `json:"sessionID"`
	Part      Part   `json:"part"`
	Time      int64  `json:"time"` // when OpenCode published the update, in ms
}

// Part is one piece of a message: text, a tool call, a step marker, …. Fields a part type does
// not use are zero.
type Part struct {
	ID        string `json:"id"` // "prt_…"
	SessionID string `json:"sessionID"`
	MessageID string `json:"messageID"`
	Type      string `json:"type"` // one of the Part* constants

	// Text parts (and reasoning).
	Text string `json:"text"`
	// Synthetic marks text OpenCode wrote into a user message itself (a reminder, a file's
	// content, "Continue if you have next steps…"), not the user's words.
	Synthetic bool `json:"synthetic"`
	Ignored   bool `json:"ignored"` // text OpenCode leaves out of the model's context
	// Time is when the text was written (Start, End). OpenCode sets it on every text part
	// of an assistant message, and on no text part of a user prompt.
	Time Time `json:"time"`

	// Tool parts.
	Tool   string    `json:"tool"`   // the tool's name: "task", "read", "bash", …
	CallID string    `json:"callID"` // the model's id for the call
	State  ToolState `json:"state"`

	// Compaction parts: a user message asking for a compaction.
	Auto bool `json:"auto"` // automatic (context overflow), not the user's request

	// Patch parts: files a step changed.
	Files []string `json:"files"`
}

// ToolState is a tool part's state. Input arrives with running; Output with completed; Error
// with error.
type ToolState struct {
	Status string          `json:"status"` // one of the Tool* constants
	Input  json.RawMessage `json:"input"`  // the call's arguments: TaskInput for task
	Title  string          `json:"title"`  // a short human title the tool gives the call
	Output string          `json:"output"`
	Error  string          `json:"error"`
	// Metadata is what the tool reports beside its output: TaskMetadata for task.
	Metadata json.RawMessage `json:"metadata"`
	Time     Time            `json:"time"` // Start, End
}

// TaskInput is the input of the task tool.
type TaskInput struct {
	Description  string `json:"description"`   // a short description of the task
	Prompt       string `json:"prompt"`        // the task: the child session's first user message
	SubagentType string `json:"subagent_type"` // the agent the child runs as
}

// TaskMetadata is the task tool's state.metadata, set once the child session exists.
type TaskMetadata struct {
	SessionID       string `json:"sessionId"`       // the child session
	ParentSessionID string `json:"parentSessionId"` // the session that called the tool
	// Interrupted is set by OpenCode on a call it marked failed because the run was aborted.
	Interrupted bool `json:"interrupted"`
}

// MessageWithParts is one element of GET /session/{id}/message.
type MessageWithParts struct {
	Info  MessageInfo `json:"info"`
	Parts []Part      `json:"parts"`
}

// taskOutput is what the task tool's output says around the child's answer.
type taskOutput struct {
	id    string // the child session, from <task id="…"> or an older "task_id: …" line
	state string // the <task state="…"> attribute
	text  string // the <task_result> (or <task_error>) inner text, else the whole output
}

// parseTaskOutput reads the task tool's output: `<task id="ses_…" state="completed">`, an
// optional <summary>, then `<task_result>…</task_result>` (`<task_error>` on failure) and
// `</task>`. Older OpenCode wrote "task_id: ses_… (…)" and a bare <task_result>.
func parseTaskOutput(s string) taskOutput {
	var out taskOutput
	if open, _, ok := strings.Cut(strings.TrimSpace(s), ">"); ok && strings.HasPrefix(open, "<task ") {
		out.id, out.state = attr(open, "id"), attr(open, "state")
	} else if rest, ok := strings.CutPrefix(strings.TrimSpace(s), "task_id: "); ok {
		if f := strings.Fields(rest); len(f) > 0 {
			out.id = f[0]
		}
	}
	out.text = strings.TrimSpace(s)
	for _, tag := range []string{"task_result", "task_error"} {
		if inner, ok := element(s, tag); ok {
			out.text = inner
			break
		}
	}
	return out
}

// attr returns the value of name="…" in an opening tag, or "".
func attr(tag, name string) string {
	_, rest, ok := strings.Cut(tag, " "+name+`="`)
	if !ok {
		return ""
	}
	v, _, ok := strings.Cut(rest, `"`)
	if !ok {
		return ""
	}
	return v
}

// element returns the trimmed text between the first <tag> and the last </tag> of s.
func element(s, tag string) (string, bool) {
	_, rest, ok := strings.Cut(s, "<"+tag+">")
	if !ok {
		return "", false
	}
	end := strings.LastIndex(rest, "</"+tag+">")
	if end < 0 {
		return "", false
	}
	return strings.TrimSpace(rest[:end]), true
}
