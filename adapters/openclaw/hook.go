package openclaw

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
)

// The OpenClaw plugin hooks heirloom's plugin reports to POST /hooks/openclaw (OpenClaw's
// PluginHookName values). before_prompt_build is not reported: the plugin answers it by asking
// GET /api/inject.
const (
	HookSubagentSpawned  = "subagent_spawned"
	HookBeforeCompaction = "before_compaction"
	HookAfterCompaction  = "after_compaction"
)

// HookRequest is the body heirloom's OpenClaw plugin POSTs to /hooks/openclaw: the hook's name
// and its two arguments, copied as JSON with transcripts (messages) and host capabilities left
// out, strings cut at 4096 characters and lists at 64 items.
type HookRequest struct {
	Hook  string          `json:"hook"`
	Event json.RawMessage `json:"event"` // the hook's first argument
	Ctx   json.RawMessage `json:"ctx"`   // the hook's second argument
}

// HookSubagentSpawnedEvent is the event of subagent_spawned (OpenClaw 2026.9.6
// PluginHookSubagentSpawnedEvent), the fields heirloom reads. The hook fires once the child
// session exists, possibly after its first prompt build. OpenClaw also sends mode ("run" or
// "session"), threadRequested, requester {channel, accountId, to, threadId} and, when the child's
// model is resolved, resolvedModel and resolvedProvider.
type HookSubagentSpawnedEvent struct {
	RunID           string `json:"runId"`
	ChildSessionKey string `json:"childSessionKey"` // agent:<agentId>:subagent:<uuid>
	AgentID         string `json:"agentId"`         // the agent the child runs as
	Label           string `json:"label"`           // the spawn's label, when given
}

// HookSubagentContext is the ctx of subagent_spawned (PluginHookSubagentContext): the only hook
// argument that names the parent.
type HookSubagentContext struct {
	RunID               string `json:"runId"`
	ChildSessionKey     string `json:"childSessionKey"`
	RequesterSessionKey string `json:"requesterSessionKey"` // the parent session
}

// HookCompactionEvent is the event of before_compaction and after_compaction
// (PluginHookBeforeCompactionEvent, PluginHookAfterCompactionEvent). Neither carries a
// compaction id or a per-session compaction number: messageCount is the transcript's length (-1
// when the runner does not know it), tokenCount the tokens after compaction when known,
// compactingCount (before) how many messages are to be compacted when known, and compactedCount
// (after) how many were, or, from the built-in runner, how many compactions this run has made;
// -1 means "compacted, count unknown" and 0 "nothing changed". They are all informational.
type HookCompactionEvent struct {
	MessageCount    *float64 `json:"messageCount"`
	CompactingCount *float64 `json:"compactingCount"`
	CompactedCount  *float64 `json:"compactedCount"`
	TokenCount      *float64 `json:"tokenCount"`
	SessionFile     string   `json:"sessionFile"` // the transcript file (after: the new one)
	// PreviousSessionID (after) is the transcript generation the compaction replaced, when it
	// rotated to a new one.
	PreviousSessionID string `json:"previousSessionId"`
}

// HookAgentContext is the ctx of the agent hooks, before_compaction and after_compaction among
// them (PluginHookAgentContext), the fields heirloom reads. Every field is optional: the
// built-in runner passes only sessionKey to the compaction hooks.
type HookAgentContext struct {
	RunID        string `json:"runId"`
	AgentID      string `json:"agentId"`
	SessionKey   string `json:"sessionKey"`
	SessionID    string `json:"sessionId"` // the transcript generation, not the session key
	WorkspaceDir string `json:"workspaceDir"`
}

// DecodeHook turns one body POSTed by heirloom's OpenClaw plugin to /hooks/openclaw into an
// Event with Harness "openclaw" and Name the hook's name:
//
//   - subagent_spawned: KindSessionUpdate for the child (event.childSessionKey, else
//     ctx.childSessionKey) with ParentSessionID ctx.requesterSessionKey and Title event.label;
//   - before_compaction: KindPreCompact for ctx.sessionKey;
//   - after_compaction: KindCompacted for ctx.sessionKey.
//
// Scope is the agentId of the session's key, and TranscriptPath and Cwd come from
// event.sessionFile and ctx.workspaceDir when given.
//
// A hook it does not know decodes to KindUnknown, with SessionID ctx.sessionKey when that is a
// string, and no error. It returns an error wrapping adapters.ErrMalformed when body is not a
// JSON object, hook is missing or not a string, event or ctx is present but neither an object
// nor null, a known hook lacks the session key it is about, or a key it names is no id (see
// adapters.CheckID) or no OpenClaw session key (ParseSessionKey fails: agent:… with a
// malformed agent id or an empty rest). A field of an unexpected JSON type is treated as absent.
func DecodeHook(body []byte) (adapters.Event, error) {
	var req HookRequest
	if err := hookObject("hook body", body, &req); err != nil {
		return adapters.Event{}, err
	}
	if strings.TrimSpace(req.Hook) == "" {
		return adapters.Event{}, adapters.Malformed("hook body: hook missing, empty or not a string")
	}
	ev := adapters.Event{Harness: Harness, Name: req.Hook, Kind: adapters.KindUnknown}

	switch req.Hook {
	case HookSubagentSpawned:
		var e HookSubagentSpawnedEvent
		var c HookSubagentContext
		if err := hookArgs(req, &e, &c); err != nil {
			return adapters.Event{}, err
		}
		child := e.ChildSessionKey
		if hookBlank(child) {
			child = c.ChildSessionKey
		}
		if hookBlank(child) {
			return adapters.Event{}, adapters.Malformed("%s: childSessionKey missing, empty or not a string", req.Hook)
		}
		ev.Kind, ev.SessionID, ev.Scope = adapters.KindSessionUpdate, child, hookScope(child)
		ev.Title = e.Label
		if !hookBlank(c.RequesterSessionKey) && c.RequesterSessionKey != child {
			ev.ParentSessionID = c.RequesterSessionKey
		}
		return checkedIDs(ev)

	case HookBeforeCompaction, HookAfterCompaction:
		var e HookCompactionEvent
		var c HookAgentContext
		if err := hookArgs(req, &e, &c); err != nil {
			return adapters.Event{}, err
		}
		if hookBlank(c.SessionKey) {
			return adapters.Event{}, adapters.Malformed("%s: ctx.sessionKey missing, empty or not a string", req.Hook)
		}
		ev.Kind = adapters.KindPreCompact
		if req.Hook == HookAfterCompaction {
			ev.Kind = adapters.KindCompacted
			if e.CompactedCount != nil && *e.CompactedCount == 0 {
				// The embedded runner reports a compaction that changed nothing as 0 (and one
				// whose size it does not know as -1): no new epoch.
				ev.Kind = adapters.KindUnknown
			}
		}
		ev.SessionID, ev.Scope = c.SessionKey, hookScope(c.SessionKey)
		ev.TranscriptPath, ev.Cwd = e.SessionFile, c.WorkspaceDir
		return checkedIDs(ev)

	default:
		var c HookAgentContext
		if err := hookArgs(req, nil, &c); err != nil {
			return adapters.Event{}, err
		}
		ev.SessionID = c.SessionKey
		return checkedIDs(ev)
	}
}

// checkedIDs returns ev, or an error when a session key it names cannot be an id (see
// adapters.CheckID) or is no OpenClaw session key (see ParseSessionKey: agent:<agentId>:<rest>
// with a well-formed agent id, or a legacy key without the agent: prefix): a stray or broken
// call is stored as no session.
func checkedIDs(ev adapters.Event) (adapters.Event, error) {
	for field, id := range map[string]string{"session key": ev.SessionID, "requester session key": ev.ParentSessionID} {
		if err := adapters.CheckID(ev.Name+": "+field, id); err != nil {
			return adapters.Event{}, err
		}
		if _, err := ParseSessionKey(id); id != "" && err != nil {
			return adapters.Event{}, adapters.Malformed("%s: %s %q is no OpenClaw session key: want agent:<agentId>:<rest>, agentId [a-z0-9][a-z0-9_-]{0,63}",
				ev.Name, field, id)
		}
	}
	return ev, nil
}

// hookArgs decodes req's event into e and ctx into c (nil: not read). An absent or null
// argument leaves its target zero.
func hookArgs(req HookRequest, e, c any) error {
	if e != nil && !hookNull(req.Event) {
		if err := hookObject(req.Hook+" event", req.Event, e); err != nil {
			return err
		}
	}
	if c != nil && !hookNull(req.Ctx) {
		if err := hookObject(req.Hook+" ctx", req.Ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// hookObject unmarshals data, which must be one JSON object, into v. Syntax errors and
// non-objects are malformed; a field of the wrong JSON type is left zero and is not an error.
func hookObject(what string, data []byte, v any) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return adapters.Malformed("%s: missing or not a JSON object", what)
	}
	err := json.Unmarshal(data, v)
	var typeErr *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &typeErr) {
		return adapters.Malformed("%s: %v", what, err)
	}
	return nil
}

// hookNull reports whether an argument is absent or JSON null.
func hookNull(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || string(b) == "null"
}

// hookBlank reports whether a session key is empty or only white space.
func hookBlank(key string) bool { return strings.TrimSpace(key) == "" }

// hookScope returns the memory scope of a session key: its agentId, "" when it does not parse.
func hookScope(key string) string {
	k, err := ParseSessionKey(key)
	if err != nil {
		return ""
	}
	return k.AgentID
}
