package openclaw_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
)

// clawSeedPayloads are payloads the recordings lack, as (event, payload).
var clawSeedPayloads = [][2]string{
	{"sessions.changed", `{"sessionKey":"agent:main:p","reason":"compact","compacted":true,"ts":1795314900000}`},
	{"sessions.changed", `{"sessionKey":"agent:main:p","sessionId":"g1","reason":"delete"}`},
	{"sessions.changed", `{"reason":"update"}`},
	{"sessions.changed", "{\"sessionKey\":\"agent:main:\xff\",\"reason\":\"create\"}"},
	{"sessions.changed", `{"sessionKey":"agent:main:c","reason":"create","spawnedBy":"agent:main:\u0007"}`},
	{"session.operation", `{"operationId":"op","operation":"compact","phase":"start","sessionKey":"agent:main:p","ts":1795314900000}`},
	{"agent", `{"sessionKey":"agent:main:p","stream":"compaction","ts":1795314900000,"data":{"phase":"end","completed":true}}`},
	{"agent", `{"sessionKey":"agent:main:subagent:k","spawnedBy":"agent:main:p","stream":"lifecycle","data":{"phase":"error","executionSettled":true,"error":"x"}}`},
	{"session.message", `{"sessionKey":"agent:main:p","messageId":"m","message":{"role":"toolResult","toolName":"tool_call","details":{"tool":{"name":"sessions_spawn"},"result":{"details":{"status":"accepted","childSessionKey":"agent:main:subagent:k"}}}}}`},
	{"session.message", `{"sessionKey":"agent:main:p","messageId":"m","message":{"role":"bashExecution","command":"ls","output":"a"}}`},
	{"session.message", `{"sessionKey":"agent:main:p","messageId":"m","message":{"role":"compactionSummary","summary":"s"}}`},
	{"session.tool", `{"sessionKey":"agent:main:p","data":{"phase":"result","name":"sessions_spawn","toolCallId":"c","result":{"content":[{"type":"text","text":"{\"status\":\"error\",\"childSessionKey\":\"agent:main:subagent:k\"}"}]}}}`},
	{"task", `{"action":"upserted","task":{"kind":"subagent","status":"failed","sessionKey":"agent:main:p","childSessionKey":"agent:main:subagent:k","startedAt":1,"endedAt":2,"error":"e"}}`},
}

// clawSeedFrames adds every event frame of the recordings to f as (event, payload).
func clawSeedFrames(f *testing.F) {
	for _, r := range clawReadRecording(f) {
		if r.Frame.Type == "event" {
			f.Add(r.Frame.Event, []byte(r.Frame.Payload))
		}
	}
	paths, err := filepath.Glob("testdata/live/spawn.*.json")
	if err != nil {
		f.Fatal(err)
	}
	docs, err := filepath.Glob("testdata/*.docs.json")
	if err != nil {
		f.Fatal(err)
	}
	paths = append(paths, docs...)
	paths = append(paths, "testdata/sessions-changed.subagent.event.reconstructed.json")
	for _, path := range paths {
		if path == clawRecording {
			continue
		}
		if fr := clawReadFrame(f, path); fr.Type == "event" {
			f.Add(fr.Event, []byte(fr.Payload))
		}
	}
	for _, s := range clawSeedPayloads {
		f.Add(s[0], []byte(s[1]))
	}
}

func FuzzDecodeEvent(f *testing.F) {
	clawSeedFrames(f)
	f.Fuzz(func(t *testing.T, event string, payload []byte) {
		evs, err := openclaw.DecodeEvent(event, payload)
		if err != nil {
			if !errors.Is(err, adapters.ErrMalformed) || evs != nil {
				t.Fatalf("got %v, %v; want only an error wrapping ErrMalformed", evs, err)
			}
			return
		}
		clawCheckEvents(t, evs)
		again, err := openclaw.DecodeEvent(event, payload)
		if err != nil || !reflect.DeepEqual(again, evs) {
			t.Fatalf("decoding again gave %+v, %v; want %+v", again, err, evs)
		}
	})
}

func FuzzDecodeSessionList(f *testing.F) {
	for _, r := range clawReadRecording(f) {
		if r.Frame.Type == "res" {
			f.Add([]byte(r.Frame.Payload))
		}
		if r.Frame.Event == "sessions.changed" {
			// A row, as sessions.describe returns it.
			var p struct {
				Session json.RawMessage `json:"session"`
			}
			if json.Unmarshal(r.Frame.Payload, &p) == nil && p.Session != nil {
				f.Add([]byte(r.Frame.Payload))
				f.Add([]byte(`{"sessions":[` + string(p.Session) + `]}`))
			}
		}
	}
	f.Add([]byte(`{"sessions":[{"key":"agent:main:c","spawnedBy":"agent:main:p"},{"key":"agent:main:p","spawnedBy":"agent:main:c"}]}`))
	f.Add([]byte(`{"subscribed":true,"list":{"sessions":[{"key":"agent:main:a"}]}}`))
	f.Add([]byte(`{"session":null}`))
	f.Add([]byte("{\"sessions\":[{\"key\":\"agent:main:\xff\"},{\"key\":\"agent:main:c\",\"spawnedBy\":\"agent:main:\\u0001\"}]}"))
	f.Add([]byte("{\"session\":{\"key\":\"agent:main:\\u0000\"}}"))
	f.Fuzz(func(t *testing.T, result []byte) {
		for name, decode := range map[string]func(json.RawMessage) ([]adapters.Event, error){
			openclaw.NameSessionsList:     openclaw.DecodeSessionList,
			openclaw.NameSessionsDescribe: openclaw.DecodeSessionDescribe,
		} {
			evs, err := decode(result)
			if err != nil {
				if !errors.Is(err, adapters.ErrMalformed) || evs != nil {
					t.Fatalf("%s: got %v, %v; want only an error wrapping ErrMalformed", name, evs, err)
				}
				continue
			}
			clawCheckEvents(t, evs)
			for _, ev := range evs {
				if ev.Kind != adapters.KindSessionStart || ev.Name != name {
					t.Fatalf("%s: event %+v", name, ev)
				}
			}
		}
	})
}

var clawKinds = []adapters.Kind{
	adapters.KindSessionStart, adapters.KindSessionUpdate, adapters.KindSessionDeleted, adapters.KindTurns,
	adapters.KindSpawn, adapters.KindSpawnResult, adapters.KindCompacted, adapters.KindPreCompact, adapters.KindIdle,
}

// clawCheckEvents checks what every decoded event promises.
func clawCheckEvents(t *testing.T, evs []adapters.Event) {
	t.Helper()
	for _, ev := range evs {
		if ev.Harness != openclaw.Harness || ev.SessionID == "" || ev.Name == "" || !slices.Contains(clawKinds, ev.Kind) {
			t.Fatalf("event %+v: want Harness, SessionID, Name and a known Kind", ev)
		}
		if ev.ParentSessionID == ev.SessionID {
			t.Fatalf("event %+v is its own parent", ev)
		}
		if err := adapters.CheckIDs(ev); err != nil {
			t.Fatalf("decoded a key or id no record may have: %v", err)
		}
		switch ev.Kind {
		case adapters.KindTurns:
			if len(ev.Turns) == 0 {
				t.Fatalf("turns event without turns: %+v", ev)
			}
			for _, tr := range ev.Turns {
				if tr.ID == "" || !slices.Contains([]string{"user", "assistant", "tool", "system"}, tr.Role) {
					t.Fatalf("turn %+v", tr)
				}
				if tr.Role == "tool" && len(tr.Text) > openclaw.MaxToolText+64 {
					t.Fatalf("tool turn of %d bytes", len(tr.Text))
				}
			}
		case adapters.KindSpawn, adapters.KindSpawnResult:
			sp := ev.Spawn
			if sp == nil || sp.ToolUseID == "" || sp.ToolUseID != sp.ChildSessionID || sp.ChildSessionID == ev.SessionID {
				t.Fatalf("spawn %+v in %s: want the child's key as run id", sp, ev.SessionID)
			}
			if (ev.Result != nil) != (ev.Kind == adapters.KindSpawnResult) || ev.Result != nil && ev.Result.AgentID != sp.ChildSessionID {
				t.Fatalf("%s with result %+v", ev.Kind, ev.Result)
			}
		default:
			if ev.Spawn != nil || ev.Result != nil || ev.Turns != nil {
				t.Fatalf("%s carries spawn, result or turns: %+v", ev.Kind, ev)
			}
		}
	}
}
