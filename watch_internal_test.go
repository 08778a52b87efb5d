package main

import (
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/engine"
)

// TestFormatEvent: one line per event, the time, type and session in columns, then what
// happened, most telling first.
func TestFormatEvent(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 12, 5, 0, time.UTC)
	const root = "49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7"
	for _, tt := range []struct {
		name string
		ev   engine.Event
		want string
	}{
		{"SessionStarted", engine.Event{Type: engine.EventSessionStarted, Time: at, Scope: "default", Session: root,
			Data: map[string]any{"harness": "claude-code", "project": "/home/you/my app"}},
			`09:12:05  session.started     49bc4f7b           harness=claude-code project="/home/you/my app"`},
		{"RunStarted", engine.Event{Type: engine.EventRunStarted, Time: at, Scope: "default", Session: root, Run: "toolu_01ABCDEFGHIJKLMNOP",
			Data: map[string]any{"child": root + ":a02df2ef9ee472336", "type": "general-purpose", "depth": 1.0}},
			`09:12:05  run.started         49bc4f7b           run=toolu_01ABCDEF child=49bc4f7b:a02df2ef type=general-purpose depth=1`},
		{"RunEnded", engine.Event{Type: engine.EventRunEnded, Time: at, Scope: "default", Session: root, Run: "toolu_1",
			Data: map[string]any{"status": "completed", "end_reason": "completed", "child": root + ":a02df2ef9ee472336"}},
			`09:12:05  run.ended           49bc4f7b           run=toolu_1 end_reason=completed child=49bc4f7b:a02df2ef`},
		{"RunEndedOtherStatus", engine.Event{Type: engine.EventRunEnded, Time: at, Session: "s", Run: "r",
			Data: map[string]any{"status": "failed", "end_reason": "watchdog_timeout"}},
			`09:12:05  run.ended           s                  run=r end_reason=watchdog_timeout status=failed`},
		{"SpawnRefused", engine.Event{Type: engine.EventSpawnRefused, Time: at, Scope: "default", Session: root, Run: "toolu_2",
			Data: map[string]any{"reason": "depth 2 exceeds spawn.max_depth 1", "depth": 2.0, "type": "Explore", "enforced": true}},
			`09:12:05  spawn.refused       49bc4f7b           run=toolu_2 reason="depth 2 exceeds spawn.max_depth 1" enforced=true type=Explore depth=2`},
		{"BlockInjected", engine.Event{Type: engine.EventBlockInjected, Time: at, Scope: "default", Session: root + ":a02df2ef9ee472336",
			Data: map[string]any{"block": "## Inherited from Parent Session", "chars": 2310.0, "via": "subagent_start"}},
			`09:12:05  block.injected      49bc4f7b:a02df2ef  block="Inherited from Parent Session" chars=2310 via=subagent_start`},
		{"Objective", engine.Event{Type: engine.EventBlockInjected, Time: at, Session: "s",
			Data: map[string]any{"block": "[Objective Reinforcement]", "chars": 800.0, "via": "session_start"}},
			`09:12:05  block.injected      s                  block="Objective Reinforcement" chars=800 via=session_start`},
		{"OtherScopeUnknownFields", engine.Event{Type: engine.EventCheckpointWritten, Time: at, Scope: "main", Session: "agent:main:main",
			Data: map[string]any{"zeta": []any{1.0}, "trigger": "spawn", "id": "cp1", "alpha": "x\ty"}},
			`09:12:05  checkpoint.written  agent:main:main    trigger=spawn id=cp1 alpha="x\ty" zeta=[1] scope=main`},
		{"NoTimeNoData", engine.Event{Type: "something.new", Session: "s"}, `--:--:--  something.new       s`},
		{"ControlCharacters", engine.Event{Type: engine.EventSessionEnded, Time: at, Session: "s\x1b[2J", Data: map[string]any{"status": "ended"}},
			`09:12:05  session.ended       s [2J              status=ended`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatEvent(tt.ev, time.UTC); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestJitter(t *testing.T) {
	for range 100 {
		if d := jitter(time.Second); d < 800*time.Millisecond || d > 1200*time.Millisecond {
			t.Fatalf("jitter(1s) = %v, want within 20%%", d)
		}
	}
}
