package openclaw

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
)

// decodeTask maps a task payload; see DecodeEvent.
func decodeTask(payload json.RawMessage) ([]adapters.Event, error) {
	var p TaskEvent
	if err := adapters.DecodeObject(eventTask+" payload", payload, &p); err != nil {
		return nil, err
	}
	if p.Action != "upserted" {
		return nil, nil
	}
	if p.Task == nil {
		return nil, adapters.Malformed("%s: upserted without a task object", eventTask)
	}
	t := *p.Task
	parent, child := cmp.Or(t.SessionKey, t.OwnerKey), t.ChildSessionKey
	if t.Kind != "subagent" && t.Runtime != "subagent" || parent == "" || child == "" || child == parent {
		return nil, nil
	}
	sp := &adapters.Spawn{ToolUseID: child, ChildSessionID: child, Description: t.Title, Prompt: t.Prompt}
	name := eventTask + ":" + t.Status
	var ev adapters.Event
	switch t.Status {
	case "queued", "running":
		ev = newEvent(adapters.KindSpawn, name, parent, cmp.Or(t.StartedAt, t.CreatedAt, t.UpdatedAt).Time())
	case "completed", "failed", "timed_out", "lost", "cancelled":
		ev = newEvent(adapters.KindSpawnResult, name, parent, cmp.Or(t.EndedAt, t.UpdatedAt).Time())
		ev.Result = taskResult(t)
	default:
		return nil, nil
	}
	ev.Spawn = sp
	return []adapters.Event{ev}, nil
}

// taskResult reads what a finished sub-agent task returned.
func taskResult(t TaskSummary) *adapters.Result {
	r := &adapters.Result{AgentID: t.ChildSessionKey, Status: "completed"}
	switch t.Status {
	case "failed", "timed_out", "lost":
		r.Status = adapters.StatusFailed
	case "cancelled":
		r.Status = adapters.StatusInterrupted
	}
	r.Text = t.Result
	if r.Text == "" && !cutSummary(t.ProgressSummary) {
		r.Text = t.ProgressSummary
	}
	if r.Text == "" && r.Status != "completed" {
		r.Text = cmp.Or(t.Error, t.TerminalSummary)
	}
	r.DurationMs = duration(t.StartedAt, t.EndedAt)
	return r
}

// cutSummary reports whether a task summary is one the Gateway cut to 120 characters and marked
// with a trailing "…".
func cutSummary(s string) bool {
	return strings.HasSuffix(s, "…") && utf8.RuneCountInString(s) >= 100
}

// maxReceiptDepth bounds how deep findReceipt looks.
const maxReceiptDepth = 5

// findReceipt looks for a sessions_spawn receipt, an object with a childSessionKey, in a tool
// result: in the object itself, its details, its (tool search) result, and the JSON text of its
// content, where the model's copy of the receipt is.
func findReceipt(raw json.RawMessage, depth int) (SpawnReceipt, bool) {
	if depth > maxReceiptDepth {
		return SpawnReceipt{}, false
	}
	raw = bytes.TrimSpace(raw)
	switch {
	case isString(raw):
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return findReceipt(json.RawMessage(s), depth+1)
		}
	case adapters.IsArray(raw):
		for _, p := range contentParts(raw) {
			if p.Type != "text" {
				continue
			}
			if r, ok := findReceipt(json.RawMessage(p.Text), depth+1); ok {
				return r, true
			}
		}
	case adapters.IsObject(raw):
		var o struct {
			SpawnReceipt
			Details json.RawMessage `json:"details"`
			Result  json.RawMessage `json:"result"`
			Content json.RawMessage `json:"content"`
		}
		adapters.UnmarshalObject(raw, &o)
		if o.ChildSessionKey != "" {
			return o.SpawnReceipt, true
		}
		for _, next := range []json.RawMessage{o.Details, o.Result, o.Content} {
			if r, ok := findReceipt(next, depth+1); ok {
				return r, true
			}
		}
	}
	return SpawnReceipt{}, false
}

// messageSpawns returns the spawns a message reports: a sessions_spawn toolResult message, or
// the tool calls and results of one message (the custom message OpenClaw writes for a nested
// call holds both, so its spawn has the call's task and label).
func messageSpawns(key string, m TranscriptMessage) []adapters.Event {
	at := m.Timestamp.Time()
	if m.Role == "toolResult" {
		if resolveResultName(m.ToolName, m.Details) != toolSessionsSpawn {
			return nil
		}
		r, ok := findReceipt(m.Details, 0)
		if !ok {
			r, ok = findReceipt(m.Content, 0)
		}
		if !ok {
			return nil
		}
		return spawnEvents(eventSessionMessage, key, r, SpawnArgs{}, at)
	}
	parts := contentParts(m.Content)
	calls := map[string]SpawnArgs{}
	for _, p := range parts {
		if p.Type != "toolCall" {
			continue
		}
		if tool, args := resolveCall(p.Name, p.Arguments); tool == toolSessionsSpawn && p.ID != "" {
			var a SpawnArgs
			adapters.UnmarshalObject(args, &a)
			calls[p.ID] = a
		}
	}
	var evs []adapters.Event
	for _, p := range parts {
		if p.Type != "toolResult" {
			continue
		}
		args, called := calls[p.ToolCallID]
		if !called && resolveResultName(p.ToolName, p.Details) != toolSessionsSpawn {
			continue
		}
		r, ok := findReceipt(p.Details, 0)
		if !ok {
			r, ok = findReceipt(p.Content, 0)
		}
		if ok {
			evs = append(evs, spawnEvents(eventSessionMessage, key, r, args, at)...)
		}
	}
	return evs
}

// spawnEvents returns the event of a sessions_spawn receipt in session parent: KindSpawn when
// the child was started, KindSpawnResult (failed) when the call failed after naming a child;
// none without a child.
func spawnEvents(name, parent string, r SpawnReceipt, a SpawnArgs, at time.Time) []adapters.Event {
	child := r.ChildSessionKey
	if child == "" || child == parent {
		return nil
	}
	sp := &adapters.Spawn{ToolUseID: child, ChildSessionID: child, Description: a.Label, Prompt: a.Task, Type: a.AgentID}
	kind := adapters.KindSpawn
	if r.Status != "" && r.Status != spawnAccepted {
		kind = adapters.KindSpawnResult
	}
	ev := newEvent(kind, name, parent, at)
	ev.Spawn = sp
	if kind == adapters.KindSpawnResult {
		ev.Result = &adapters.Result{AgentID: child, Status: adapters.StatusFailed, Text: cmp.Or(r.Error, r.Status)}
	}
	return []adapters.Event{ev}
}

// duration returns end-start in milliseconds; 0 unless both are set and in order.
func duration(start, end Millis) int64 {
	if start <= 0 || end < start {
		return 0
	}
	return int64(end - start)
}
