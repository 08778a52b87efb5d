package engine

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// How a run ends: every path that records the end of a run (Claude Code's SubagentStop and the
// spawning tool's result, OpenCode's and OpenClaw's task results and idle sessions, the sweeps)
// sets its end reason, from the harness's own word for how it went or from the sweep that gave
// up waiting. A harness's report wins over a sweep: a run the watchdog or the ghost sweep ended
// whose sub-agent then reports back takes the harness's status, result and end.

// endReason maps a harness's word for how a run finished to heirloom's end reason: completed
// ("completed", "success", "done", … and no word at all), killed (interrupted, cancelled,
// aborted, killed, stopped), else failed (failed, error, timed_out, lost, and any other word).
func endReason(status string) string {
	s := strings.ToLower(strings.TrimSpace(status))
	switch s {
	case "", kv.RunCompleted, "complete", "success", "succeeded", "done", "ok", "finished":
		return kv.EndCompleted
	}
	for _, w := range []string{"interrupt", "cancel", "abort", "kill", "stopped"} {
		if strings.Contains(s, w) {
			return kv.EndKilled
		}
	}
	return kv.EndFailed
}

// launched reports whether a spawning tool's status says the sub-agent was started in the
// background rather than finished (Claude Code "async_launched"): its run stays open.
func launched(status string) bool {
	s := strings.ToLower(status)
	return strings.Contains(s, "launched") || strings.HasPrefix(s, "async")
}

// sweptEnd reports whether r was ended by a sweep rather than by its harness.
func sweptEnd(r *kv.Run) bool {
	return r.EndReason == kv.EndWatchdogTimeout || r.EndReason == kv.EndGhostSweep
}

// finishRun records in r that its harness reported it finished with status (the harness's word;
// "" means completed) at at: its status, end reason and end time. A run a sweep had ended gets
// the harness's account instead, its reason saying so.
func finishRun(r *kv.Run, status string, at time.Time) {
	if status == "" {
		status = kv.RunCompleted
	}
	if sweptEnd(r) {
		r.Reason = "its harness reported the end after heirloom's " + r.EndReason
	}
	r.Status, r.EndReason, r.EndedAt = status, endReason(status), at
}

// endable reports whether the harness's report of r's end is to be recorded: r is open, or a
// sweep ended it. A refused run never ran; a run whose end was reported already keeps it.
func endable(r *kv.Run) bool { return r.Open() || sweptEnd(r) }

// turnsOf is how many turns (steps) a sub-agent took: as its harness says, else the turns
// heirloom stored for its session (childTurns), else what r holds.
func turnsOf(r *kv.Run, harnessSays int, childTurns uint64) int {
	switch {
	case harnessSays > 0:
		return harnessSays
	case childTurns > 0:
		return int(childTurns)
	}
	return r.Turns
}

// childTranscriptSettle is how long after a sub-agent's end heirloom reads its transcript once
// more for its turns: Claude Code 2.1.197 finishes writing a sub-agent's transcript after the
// hooks of its end (measured: some 30 ms after the spawn's PostToolUse).
const childTranscriptSettle = time.Second

// settleTurns reads, in the background after childTranscriptSettle, what was written of
// sub-agent child's transcript after its end, under the lock of root, and records its turns on
// run runID when the run still has none, or, for a harness that counts no steps of its own and
// whose sub-agent's rollout is finished after its end (Codex: h.SpawnReceipts), fewer than its
// transcript holds. Nothing waits for it.
func (e *Engine) settleTurns(h adapters.Registration, runID, child, root string) {
	e.goBackground(func(ctx context.Context) {
		t := time.NewTimer(childTranscriptSettle)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		unlock := e.locks.lock(lockKey(e.Scope, root))
		defer unlock()
		in, err := e.ingestID(ctx, h, child, root)
		if err != nil || in.Session.TurnCount == 0 {
			if err != nil && ctx.Err() == nil {
				e.Logger.Debug("sub-agent transcript not read after its end", "session", child, "error", err)
			}
			return
		}
		_, err = e.Store.UpdateRun(ctx, e.Scope, runID, func(r *kv.Run, exists bool) error {
			if !exists || r.ChildID != child || r.Turns != 0 && !(h.SpawnReceipts && r.Turns < int(in.Session.TurnCount)) {
				return errUnchanged
			}
			r.Turns = int(in.Session.TurnCount)
			return nil
		})
		if err != nil && !errors.Is(err, errUnchanged) && ctx.Err() == nil {
			e.Logger.Debug("run's turns not recorded", "run", runID, "error", err)
		}
	})
}
