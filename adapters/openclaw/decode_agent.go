package openclaw

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
)

// decodeAgent maps an agent payload; see DecodeEvent.
func decodeAgent(payload json.RawMessage) ([]adapters.Event, error) {
	var p AgentEvent
	if err := adapters.DecodeObject(eventAgent+" payload", payload, &p); err != nil {
		return nil, err
	}
	if p.SessionKey == "" {
		return nil, nil
	}
	switch p.Stream {
	case "lifecycle":
		return lifecycleEvents(p), nil
	case "compaction":
		return compactionEvents(p), nil
	}
	return nil, nil
}

// lifecycleEvents returns the events of a run's terminal lifecycle event: its sub-agent result
// and the session's idleness.
func lifecycleEvents(p AgentEvent) []adapters.Event {
	d := p.Data
	terminal := d.Phase == "end" || d.Phase == "error" && d.ExecutionSettled
	waiting := d.Yielded && d.LivenessState == "paused"
	if !terminal || waiting || d.StopReason == "restart" {
		return nil
	}
	name := eventAgent + ":lifecycle." + d.Phase
	at := cmp.Or(d.EndedAt, p.Ts).Time()
	var evs []adapters.Event
	if parent, child := p.SpawnedBy, p.SessionKey; parent != "" && parent != child {
		ev := newEvent(adapters.KindSpawnResult, name, parent, at)
		ev.Spawn = &adapters.Spawn{ToolUseID: child, ChildSessionID: child}
		ev.Result = &adapters.Result{AgentID: child, Status: lifecycleStatus(d), DurationMs: duration(d.StartedAt, d.EndedAt)}
		if d.TerminalReply.Disposition == "" || d.TerminalReply.Disposition == "visible" {
			ev.Result.Text = d.TerminalReply.Text
		}
		if ev.Result.Text == "" && ev.Result.Status != "completed" {
			ev.Result.Text = d.Error
		}
		evs = append(evs, ev)
	}
	return append(evs, newEvent(adapters.KindIdle, name, p.SessionKey, at))
}

// lifecycleStatus classifies a terminal lifecycle event as OpenClaw does: a timeout or failure
// is adapters.StatusFailed, a cancellation adapters.StatusInterrupted, anything else
// "completed".
func lifecycleStatus(d AgentData) string {
	status := strings.ToLower(d.Status)
	liveness := strings.ToLower(d.LivenessState)
	switch {
	case d.StopReason == "timeout" || d.TimeoutPhase != "" || status == "timeout" || status == "timed_out":
		return adapters.StatusFailed
	case liveness == "blocked":
		return adapters.StatusFailed
	case d.Aborted || d.StopReason == "superseded" || slices.Contains([]string{"cancelled", "canceled", "aborted", "superseded"}, status):
		return adapters.StatusInterrupted
	case d.Phase == "error" || d.StopReason == "error" || status == "error" || status == "failed" || liveness == "abandoned":
		return adapters.StatusFailed
	}
	return "completed"
}

// compactionEvents returns the events of a compaction inside a run.
func compactionEvents(p AgentEvent) []adapters.Event {
	name := eventAgent + ":compaction." + p.Data.Phase
	switch {
	case p.Data.Phase == "start":
		ev := newEvent(adapters.KindPreCompact, name, p.SessionKey, p.Ts.Time())
		ev.Trigger = "auto"
		return []adapters.Event{ev}
	case p.Data.Phase == "end" && p.Data.Completed:
		return []adapters.Event{newEvent(adapters.KindCompacted, name, p.SessionKey, p.Ts.Time())}
	}
	return nil
}
