package openclaw_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
)

// The recording of OpenClaw 2026.9.6 in testdata/live: parenta runs without spawning; parentb's
// model calls sessions_spawn through tool search ("tool_call"), OpenClaw starts the child,
// the child answers, and OpenClaw announces the answer back to parentb.
const (
	clawLive       = "testdata/live"
	clawRecording  = "testdata/live/spawn.all-frames.json"
	clawParentA    = "agent:main:parenta"
	clawParentB    = "agent:main:parentb"
	clawChild      = "agent:main:subagent:030f5da4-ab00-499e-b6af-e63e2b24b61c"
	clawTask       = "CHILD-TASK: find the answer and report it."
	clawLabel      = "child-research"
	clawAnswer     = "Child result: the answer is 42."
	clawWorkspace  = "/home/dev/.openclaw/workspace"
	clawSpawnArgs  = `{"label":"child-research","task":"CHILD-TASK: find the answer and report it."}`
	clawChildInput = "[Subagent Context] You are running as a subagent (depth 1/5). Complete the current [Subagent Task]; " +
		"inherited conversation is background context, not your assignment.\n\n[Subagent Task]\n\n" + clawTask +
		"\n\nBegin. Execute the assigned task to completion."
)

// clawRecorded is one element of spawn.all-frames.json.
type clawRecorded struct {
	Dir   string         `json:"dir"` // "in" (from the Gateway) or "out"
	T     int64          `json:"t"`
	Frame openclaw.Frame `json:"frame"`
}

func clawReadRecording(tb testing.TB) []clawRecorded {
	tb.Helper()
	b, err := os.ReadFile(clawRecording)
	if err != nil {
		tb.Fatal(err)
	}
	var frames []clawRecorded
	if err := json.Unmarshal(b, &frames); err != nil {
		tb.Fatal(err)
	}
	return frames
}

func clawReadFrame(tb testing.TB, path string) openclaw.Frame {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var f openclaw.Frame
	if err := json.Unmarshal(b, &f); err != nil {
		tb.Fatal(err)
	}
	return f
}

// clawDecodeRecording decodes every event frame of the recording, in order.
func clawDecodeRecording(t *testing.T) []adapters.Event {
	t.Helper()
	var evs []adapters.Event
	for i, r := range clawReadRecording(t) {
		if r.Frame.Type != "event" {
			continue
		}
		got, err := openclaw.DecodeEvent(r.Frame.Event, r.Frame.Payload)
		if err != nil {
			t.Fatalf("frame %d (%s): %v", i, r.Frame.Event, err)
		}
		evs = append(evs, got...)
	}
	return evs
}

func clawMs(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// clawStep is what the sequence tests compare: an event's kind, session and name.
type clawStep struct {
	Kind    adapters.Kind
	Session string
	Name    string
}

func clawSteps(evs []adapters.Event) []clawStep {
	steps := []clawStep{}
	for _, ev := range evs {
		steps = append(steps, clawStep{ev.Kind, ev.SessionID, ev.Name})
	}
	return steps
}

func clawOfKind(evs []adapters.Event, kind adapters.Kind) []adapters.Event {
	var out []adapters.Event
	for _, ev := range evs {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// clawFinalTurns folds turn events the way the engine stores them: per session, by Turn.ID, a
// later version replacing an earlier one in place.
func clawFinalTurns(evs []adapters.Event) map[string][]adapters.Turn {
	out := map[string][]adapters.Turn{}
	for _, ev := range evs {
		for _, t := range ev.Turns {
			ts := out[ev.SessionID]
			if i := slices.IndexFunc(ts, func(x adapters.Turn) bool { return x.ID == t.ID }); i >= 0 {
				ts[i] = t
			} else {
				out[ev.SessionID] = append(ts, t)
			}
		}
	}
	return out
}

// clawRun is a run as the engine folds spawn events into it, keyed by Spawn.ToolUseID.
type clawRun struct {
	Parent, Child, Description, Prompt, Status, Result string
}

func clawRuns(evs []adapters.Event) map[string]clawRun {
	runs := map[string]clawRun{}
	for _, ev := range evs {
		if ev.Kind != adapters.KindSpawn && ev.Kind != adapters.KindSpawnResult {
			continue
		}
		r := runs[ev.Spawn.ToolUseID]
		r.Parent, r.Child = ev.SessionID, ev.Spawn.ChildSessionID
		if ev.Spawn.Prompt != "" {
			r.Prompt = ev.Spawn.Prompt
		}
		if ev.Spawn.Description != "" {
			r.Description = ev.Spawn.Description
		}
		if ev.Result != nil {
			r.Status = ev.Result.Status
			if ev.Result.Text != "" {
				r.Result = ev.Result.Text
			}
		}
		runs[ev.Spawn.ToolUseID] = r
	}
	return runs
}

// The whole recording: every frame decodes, to exactly these events.
func TestDecodeEvent_Replay(t *testing.T) {
	evs := clawDecodeRecording(t)
	for i, ev := range evs {
		if ev.Harness != openclaw.Harness || ev.Scope != "main" || ev.Name == "" || ev.SessionID == "" {
			t.Errorf("event %d: Harness %q, Scope %q, Name %q, SessionID %q", i, ev.Harness, ev.Scope, ev.Name, ev.SessionID)
		}
		if ev.At.IsZero() {
			t.Errorf("event %d (%s %s): no time", i, ev.Kind, ev.Name)
		}
	}

	const (
		start  = adapters.KindSessionStart
		update = adapters.KindSessionUpdate
		turns  = adapters.KindTurns
		spawn  = adapters.KindSpawn
		result = adapters.KindSpawnResult
		idle   = adapters.KindIdle
	)
	a, b, c := clawParentA, clawParentB, clawChild
	want := []clawStep{
		{update, a, "sessions.changed:participants"}, {start, a, "sessions.changed:create"},
		{update, a, "sessions.changed:agent.run.started"}, {turns, a, "session.message"},
		{update, a, "sessions.changed:start"}, {turns, a, "session.message"}, {idle, a, "agent:lifecycle.end"},
		{update, a, "sessions.changed:model"}, {update, a, "sessions.changed:model"}, {update, a, "sessions.changed:end"},
		{update, a, "sessions.changed:agent.input.settled"},

		{update, b, "sessions.changed:participants"}, {start, b, "sessions.changed:create"},
		{update, b, "sessions.changed:agent.run.started"}, {turns, b, "session.message"},
		{update, b, "sessions.changed:start"},
		{turns, b, "session.message"},                                // the model calls tool_call {id: sessions_spawn}
		{turns, b, "session.tool:start"},                             // tool_call starts; its nested sessions_spawn makes no turn
		{spawn, b, "task:running"},                                   // the sub-agent task, queued
		{spawn, b, "task:running"},                                   //   and started
		{spawn, b, "session.tool:result"},                            // the nested sessions_spawn returns the child's key
		{turns, b, "session.message"}, {spawn, b, "session.message"}, // the nested-tool message: call and result
		{turns, b, "session.tool:result"}, {spawn, b, "session.tool:result"}, // tool_call returns
		{update, c, "sessions.changed:send"},
		{turns, b, "session.message"}, {idle, b, "agent:lifecycle.end"},
		{start, c, "sessions.changed:create"}, {update, c, "sessions.changed:agent.run.started"},
		{update, b, "sessions.changed:agent.input.settled"},
		{update, b, "sessions.changed:model"}, {update, b, "sessions.changed:model"}, {update, b, "sessions.changed:model"},
		{update, b, "sessions.changed:end"},
		{turns, c, "session.message"}, {update, c, "sessions.changed:start"}, {turns, c, "session.message"},
		{result, b, "agent:lifecycle.end"}, {idle, c, "agent:lifecycle.end"}, // the child's run ends
		{spawn, b, "task:running"}, {result, b, "task:completed"},
		{update, c, "sessions.changed:agent.input.settled"},
		{update, c, "sessions.changed:model"}, {update, c, "sessions.changed:model"}, {update, c, "sessions.changed:end"},
		{update, b, "sessions.changed:send"}, {update, b, "sessions.changed:agent.run.started"},
		{update, b, "sessions.changed:start"}, {turns, b, "session.message"}, {idle, b, "agent:lifecycle.end"},
		{result, b, "task:completed"}, // delivered
		{update, b, "sessions.changed:model"}, {update, b, "sessions.changed:model"}, {update, b, "sessions.changed:end"},
	}
	if got := clawSteps(evs); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}

	t.Run("Lineage", func(t *testing.T) {
		parent := map[string]string{}
		for _, ev := range evs {
			if ev.Kind != start && ev.Kind != update {
				continue
			}
			parent[ev.SessionID] = ev.ParentSessionID
			if ev.SessionID != c {
				if ev.ParentSessionID != "" || ev.Cwd != "" || ev.AgentName != "" {
					t.Errorf("%s %s: parent %q, cwd %q, agent %q; want none", ev.Name, ev.SessionID, ev.ParentSessionID, ev.Cwd, ev.AgentName)
				}
				continue
			}
			if ev.ParentSessionID != b || ev.Title != clawLabel || ev.Cwd != clawWorkspace || ev.AgentName != "orchestrator" {
				t.Errorf("%s of the child: parent %q, title %q, cwd %q, agent %q", ev.Name, ev.ParentSessionID, ev.Title, ev.Cwd, ev.AgentName)
			}
		}
		depth := 0
		for id := parent[c]; id != ""; id = parent[id] {
			depth++
		}
		var wire openclaw.SessionsChanged
		f := clawReadFrame(t, filepath.Join(clawLive, "spawn.sessions.changed.child.reason-create.event.json"))
		if err := json.Unmarshal(f.Payload, &wire); err != nil {
			t.Fatal(err)
		}
		if depth != 1 || wire.Session == nil || wire.Session.SpawnDepth != depth {
			t.Errorf("child depth %d from the events, spawnDepth %v on the wire; want 1 and 1", depth, wire.Session)
		}
		starts := clawOfKind(evs, start)
		wantStarts := []adapters.Event{
			{Harness: "openclaw", Scope: "main", Kind: start, Name: "sessions.changed:create", SessionID: a, Title: "parenta", At: clawMs(1795314783598)},
			{Harness: "openclaw", Scope: "main", Kind: start, Name: "sessions.changed:create", SessionID: b, Title: "parentb", At: clawMs(1795314814075)},
			{Harness: "openclaw", Scope: "main", Kind: start, Name: "sessions.changed:create", SessionID: c, ParentSessionID: b, Depth: 1,
				Title: clawLabel, AgentName: "orchestrator", Cwd: clawWorkspace, At: clawMs(1795314814784)},
		}
		if !reflect.DeepEqual(starts, wantStarts) {
			t.Errorf("session starts:\n got %+v\nwant %+v", starts, wantStarts)
		}
	})

	t.Run("Turns", func(t *testing.T) {
		receipt := clawSpawnReceiptText(t)
		tr := clawFinalTurns(evs)
		wantA := []adapters.Turn{
			{ID: "d764476c-8303-4765-aa07-3f5b9fef2cfa", Role: "user", Text: "SPAWN-PLEASE: delegate the research to a sub-agent", At: clawMs(1795314783559)},
			{ID: "eb62af1c-05ab-4660-85e8-e3230e200d13", Role: "assistant", Text: "Parser work", At: clawMs(1795314783866)},
		}
		wantB := []adapters.Turn{
			{ID: "d2c31a55-3358-4ffa-add6-d482cfa409ca", Role: "user", Text: "SPAWN-PLEASE: delegate the research to a sub-agent", At: clawMs(1795314813365)},
			{ID: "8c40c56a-3465-4327-9787-952fd4c5aba6", Role: "assistant", Tool: "sessions_spawn",
				Text: "[tool call] sessions_spawn " + clawSpawnArgs, At: clawMs(1795314814181)},
			{ID: "call_7823f8935c:start", Role: "tool", Tool: "sessions_spawn", Text: clawSpawnArgs, At: clawMs(1795314814231)},
			{ID: "5c094c35-1b8e-46f3-843b-45bea29eed56", Role: "tool", Tool: "sessions_spawn",
				Text: "[tool call] sessions_spawn " + clawSpawnArgs + "\n[tool result] sessions_spawn: " + receipt, At: clawMs(1795314814244)},
			{ID: "call_7823f8935c:result", Role: "tool", Tool: "sessions_spawn", Text: receipt, At: clawMs(1795314814441)},
			{ID: "6c77225e-022b-4d3c-ac77-f20e9ccbff26", Role: "assistant", Text: "ok", At: clawMs(1795314814461)},
			{ID: "8dcbc615-62bf-466e-a5d7-d920d73771b3", Role: "assistant", Text: clawAnswer, At: clawMs(1795314815968)},
		}
		wantC := []adapters.Turn{
			// The child's task arrives wrapped; it is kept as OpenClaw wrote it.
			{ID: "15d29ada-e0b3-4d48-8ab8-999bed0daf7e", Role: "user", Text: clawChildInput, At: clawMs(1795314814362)},
			{ID: "5a596574-8068-4b61-a065-2042b642cf94", Role: "assistant", Text: clawAnswer, At: clawMs(1795314815585)},
		}
		for key, want := range map[string][]adapters.Turn{a: wantA, b: wantB, c: wantC} {
			if !reflect.DeepEqual(tr[key], want) {
				t.Errorf("turns of %s:\n got %+v\nwant %+v", key, tr[key], want)
			}
		}
		if len(tr) != 3 {
			t.Errorf("turns of %d sessions, want 3", len(tr))
		}
	})

	t.Run("Run", func(t *testing.T) {
		for _, ev := range evs {
			if ev.Kind != spawn && ev.Kind != result {
				continue
			}
			if ev.SessionID != b || ev.Spawn == nil || ev.Spawn.ToolUseID != c || ev.Spawn.ChildSessionID != c {
				t.Errorf("%s %s: session %q, spawn %+v; want the child's key as run id in %s", ev.Kind, ev.Name, ev.SessionID, ev.Spawn, b)
			}
		}
		// Only the nested-tool message has both the child's key and the call's arguments.
		var full []adapters.Spawn
		for _, ev := range clawOfKind(evs, spawn) {
			if ev.Spawn.Prompt != "" {
				full = append(full, *ev.Spawn)
			}
		}
		if want := []adapters.Spawn{{ToolUseID: c, ChildSessionID: c, Description: clawLabel, Prompt: clawTask}}; !slices.Equal(full, want) {
			t.Errorf("spawns with a prompt: got %+v, want %+v", full, want)
		}
		var results []adapters.Result
		for _, ev := range clawOfKind(evs, result) {
			results = append(results, *ev.Result)
		}
		wantResults := []adapters.Result{
			{AgentID: c, Status: "completed", Text: clawAnswer, DurationMs: 825}, // the child's lifecycle end
			{AgentID: c, Status: "completed", Text: clawAnswer, DurationMs: 85},  // the task, completed
			{AgentID: c, Status: "completed", Text: clawAnswer, DurationMs: 85},  // and delivered
		}
		if !slices.Equal(results, wantResults) {
			t.Errorf("results:\n got %+v\nwant %+v", results, wantResults)
		}
		runs := clawRuns(evs)
		wantRuns := map[string]clawRun{c: {Parent: b, Child: c, Description: clawLabel, Prompt: clawTask, Status: "completed", Result: clawAnswer}}
		if !reflect.DeepEqual(runs, wantRuns) {
			t.Errorf("runs: got %+v, want %+v", runs, wantRuns)
		}
	})

	t.Run("Idle", func(t *testing.T) {
		var got []string
		for _, ev := range clawOfKind(evs, idle) {
			got = append(got, ev.SessionID)
		}
		if want := []string{a, b, c, b}; !slices.Equal(got, want) {
			t.Errorf("idle sessions: got %v, want %v", got, want)
		}
	})
}

// clawSpawnReceiptText is the text sessions_spawn returned to the model in the recording.
func clawSpawnReceiptText(t *testing.T) string {
	t.Helper()
	var p struct {
		Data struct {
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		} `json:"data"`
	}
	f := clawReadRecording(t)[54].Frame
	if err := json.Unmarshal(f.Payload, &p); err != nil || len(p.Data.Result.Content) != 1 {
		t.Fatalf("frame 54: %v, %+v", err, p)
	}
	text := p.Data.Result.Content[0].Text
	if !strings.Contains(text, `"childSessionKey": "`+clawChild+`"`) {
		t.Fatalf("frame 54 is not the spawn receipt: %q", text)
	}
	return text
}

// Every single-frame recording, decoded to exactly what it means.
func TestDecodeEvent_Recordings(t *testing.T) {
	const (
		start  = adapters.KindSessionStart
		update = adapters.KindSessionUpdate
		turns  = adapters.KindTurns
		spawn  = adapters.KindSpawn
		result = adapters.KindSpawnResult
		idle   = adapters.KindIdle
	)
	a, b, c := clawParentA, clawParentB, clawChild
	none := []clawStep{}
	want := map[string][]clawStep{
		"spawn.agent.child.stream-assistant-x.event.json":                     none,
		"spawn.agent.child.stream-lifecycle-end.event.json":                   {{result, b, "agent:lifecycle.end"}, {idle, c, "agent:lifecycle.end"}},
		"spawn.agent.child.stream-lifecycle-finishing.event.json":             none,
		"spawn.agent.child.stream-lifecycle-model.event.json":                 none,
		"spawn.agent.child.stream-lifecycle-start.event.json":                 none,
		"spawn.agent.child.stream-usage-x.event.json":                         none,
		"spawn.agent.parent-announce.stream-assistant-x.event.json":           none,
		"spawn.agent.parent-announce.stream-lifecycle-end.event.json":         {{idle, b, "agent:lifecycle.end"}},
		"spawn.agent.parent-announce.stream-lifecycle-finishing.event.json":   none,
		"spawn.agent.parent-announce.stream-lifecycle-model.event.json":       none,
		"spawn.agent.parent-announce.stream-lifecycle-start.event.json":       none,
		"spawn.agent.parent-announce.stream-usage-x.event.json":               none,
		"spawn.connect-challenge.event.json":                                  none,
		"spawn.connect.req.json":                                              none,
		"spawn.health.event.json":                                             none,
		"spawn.hello-ok.res.json":                                             none,
		"spawn.session.message.child.event.json":                              {{turns, c, "session.message"}},
		"spawn.session.message.parent.event.json":                             {{turns, a, "session.message"}},
		"spawn.session.tool.parent.event.json":                                {{turns, b, "session.tool:start"}},
		"spawn.sessions.changed.child.reason-agent.input.settled.event.json":  {{update, c, "sessions.changed:agent.input.settled"}},
		"spawn.sessions.changed.child.reason-agent.run.started.event.json":    {{update, c, "sessions.changed:agent.run.started"}},
		"spawn.sessions.changed.child.reason-create.event.json":               {{start, c, "sessions.changed:create"}},
		"spawn.sessions.changed.child.reason-none.event.json":                 {{update, c, "sessions.changed:start"}},
		"spawn.sessions.changed.child.reason-send.event.json":                 {{update, c, "sessions.changed:send"}},
		"spawn.sessions.changed.parent.reason-agent.input.settled.event.json": {{update, a, "sessions.changed:agent.input.settled"}},
		"spawn.sessions.changed.parent.reason-agent.run.started.event.json":   {{update, a, "sessions.changed:agent.run.started"}},
		"spawn.sessions.changed.parent.reason-create.event.json":              {{start, a, "sessions.changed:create"}},
		"spawn.sessions.changed.parent.reason-none.event.json":                {{update, a, "sessions.changed:start"}},
		"spawn.sessions.changed.parent.reason-participants.event.json":        {{update, a, "sessions.changed:participants"}},
		"spawn.sessions.changed.parent.reason-send.event.json":                {{update, b, "sessions.changed:send"}},
		"spawn.sessions.subscribe.req.json":                                   none,
		"spawn.sessions.subscribe.res.json":                                   none,
		"spawn.task.subagent.status-completed.event.json":                     {{result, b, "task:completed"}},
		"spawn.task.subagent.status-running.event.json":                       {{spawn, b, "task:running"}},
		"spawn.tick.event.json":                                               none,
	}
	paths, err := filepath.Glob(filepath.Join(clawLive, "spawn.*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		name := filepath.Base(path)
		if path == clawRecording {
			continue
		}
		t.Run(name, func(t *testing.T) {
			steps, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			f := clawReadFrame(t, path)
			evs, err := openclaw.DecodeEvent(f.Event, f.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if got := clawSteps(evs); !slices.Equal(got, steps) {
				t.Errorf("got %v, want %v", got, steps)
			}
		})
	}
	for _, path := range []string{"testdata/tick.event.docs.json", "testdata/connect-challenge.event.docs.json"} {
		f := clawReadFrame(t, path)
		if evs, err := openclaw.DecodeEvent(f.Event, f.Payload); evs != nil || err != nil {
			t.Errorf("%s: got %v, %v; want nothing", path, evs, err)
		}
	}

	t.Run("ChildLifecycleEnd", func(t *testing.T) {
		f := clawReadFrame(t, filepath.Join(clawLive, "spawn.agent.child.stream-lifecycle-end.event.json"))
		evs, _ := openclaw.DecodeEvent(f.Event, f.Payload)
		at := clawMs(1795314815650)
		wantEvs := []adapters.Event{
			{Harness: "openclaw", Scope: "main", Kind: result, Name: "agent:lifecycle.end", SessionID: b, At: at,
				Spawn:  &adapters.Spawn{ToolUseID: c, ChildSessionID: c},
				Result: &adapters.Result{AgentID: c, Status: "completed", Text: clawAnswer, DurationMs: 825}},
			{Harness: "openclaw", Scope: "main", Kind: idle, Name: "agent:lifecycle.end", SessionID: c, At: at},
		}
		if !reflect.DeepEqual(evs, wantEvs) {
			t.Errorf("got %+v\nwant %+v", evs, wantEvs)
		}
	})
	t.Run("TaskRunning", func(t *testing.T) {
		f := clawReadFrame(t, filepath.Join(clawLive, "spawn.task.subagent.status-running.event.json"))
		evs, _ := openclaw.DecodeEvent(f.Event, f.Payload)
		wantEvs := []adapters.Event{{Harness: "openclaw", Scope: "main", Kind: spawn, Name: "task:running", SessionID: b,
			At: clawMs(1795314814365), Spawn: &adapters.Spawn{ToolUseID: c, ChildSessionID: c, Description: clawLabel}}}
		if !reflect.DeepEqual(evs, wantEvs) {
			t.Errorf("got %+v\nwant %+v", evs, wantEvs)
		}
	})
	t.Run("ToolStart", func(t *testing.T) {
		f := clawReadFrame(t, filepath.Join(clawLive, "spawn.session.tool.parent.event.json"))
		evs, _ := openclaw.DecodeEvent(f.Event, f.Payload)
		wantTurns := []adapters.Turn{{ID: "call_7823f8935c:start", Role: "tool", Tool: "sessions_spawn", Text: clawSpawnArgs, At: clawMs(1795314814231)}}
		if len(evs) != 1 || !reflect.DeepEqual(evs[0].Turns, wantTurns) {
			t.Errorf("got %+v, want turns %+v", evs, wantTurns)
		}
	})
}

// sessions.changed rows the live recording does not cover.
func TestDecodeEvent_SessionChanges(t *testing.T) {
	const child = "agent:main:subagent:child"
	at := clawMs(1737264000000)
	tests := []struct {
		name    string
		payload string
		want    []adapters.Event
	}{{
		// OpenClaw's documented shape without the nested row: the top-level fields are the row.
		name:    "TopLevelOnly",
		payload: string(clawReadFrame(t, "testdata/sessions-changed.subagent.event.reconstructed.json").Payload),
		want: []adapters.Event{{Harness: "openclaw", Scope: "main", Kind: adapters.KindSessionUpdate, Name: "sessions.changed:patch",
			SessionID: child, ParentSessionID: "agent:main:main", Depth: 2, Title: "Child", Cwd: clawWorkspace, AgentName: "orchestrator", At: at}},
	}, {
		name: "NestedRowWins",
		payload: `{"sessionKey":"agent:Main:x","reason":"create","ts":1737264000000,"label":"stale","spawnedBy":"agent:main:old",
			"session":{"key":"agent:main:x","displayName":"Shown","derivedTitle":"derived","spawnedBy":"agent:main:p","spawnDepth":1,
			"spawnedCwd":"/w/cwd","spawnedWorkspaceDir":"/w/ws"}}`,
		want: []adapters.Event{{Harness: "openclaw", Scope: "main", Kind: adapters.KindSessionStart, Name: "sessions.changed:create",
			SessionID: "agent:Main:x", ParentSessionID: "agent:main:p", Depth: 1, Title: "Shown", Cwd: "/w/cwd", At: at}},
	}, {
		// A fork or the successor of a /new rollover names a navigation parent only: not lineage.
		name: "NavigationParentIsNotLineage",
		payload: `{"sessionKey":"agent:main:fork","reason":"create","ts":1737264000000,
			"session":{"key":"agent:main:fork","displayName":"Fork","parentSessionKey":"agent:main:p","workspaceDir":"/w"}}`,
		want: []adapters.Event{{Harness: "openclaw", Scope: "main", Kind: adapters.KindSessionStart, Name: "sessions.changed:create",
			SessionID: "agent:main:fork", Title: "Fork", Cwd: "/w", At: at}},
	}, {
		name:    "DerivedTitleLast",
		payload: `{"sessionKey":"agent:ops:x","reason":"chat.title","session":{"key":"agent:ops:x","derivedTitle":"Fix the parser","workspaceDir":"/repo"}}`,
		want: []adapters.Event{{Harness: "openclaw", Scope: "ops", Kind: adapters.KindSessionUpdate, Name: "sessions.changed:chat.title",
			SessionID: "agent:ops:x", Title: "Fix the parser", Cwd: "/repo"}},
	}, {
		name:    "Delete",
		payload: `{"sessionKey":"agent:main:x","agentId":"main","sessionId":"gen-1","reason":"delete","ts":1737264000000}`,
		want: []adapters.Event{{Harness: "openclaw", Scope: "main", Kind: adapters.KindSessionDeleted, Name: "sessions.changed:delete",
			SessionID: "agent:main:x", At: at}},
	}, {
		name:    "Reset",
		payload: `{"sessionKey":"agent:main:x","reason":"new","ts":1737264000000}`,
		want: []adapters.Event{{Harness: "openclaw", Scope: "main", Kind: adapters.KindSessionStart, Name: "sessions.changed:new",
			SessionID: "agent:main:x", Source: adapters.SourceClear, At: at}},
	}, {
		name:    "SelfParentIgnored",
		payload: `{"sessionKey":"agent:main:x","reason":"patch","spawnedBy":"agent:main:x"}`,
		want:    []adapters.Event{{Harness: "openclaw", Scope: "main", Kind: adapters.KindSessionUpdate, Name: "sessions.changed:patch", SessionID: "agent:main:x"}},
	}, {
		name:    "UnparsableKeyHasNoScope",
		payload: `{"sessionKey":"agent::x","reason":"patch"}`,
		want:    []adapters.Event{{Harness: "openclaw", Kind: adapters.KindSessionUpdate, Name: "sessions.changed:patch", SessionID: "agent::x"}},
	}, {
		name:    "KeylessInvalidation",
		payload: `{"reason":"update","ts":1737264000000}`,
	}, {
		name:    "KeylessGroups",
		payload: `{"reason":"groups","catalogChanged":true}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := openclaw.DecodeEvent("sessions.changed", json.RawMessage(tt.payload))
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, %v\nwant %+v", got, err, tt.want)
			}
		})
	}
}

// Compactions: inside a run (agent compaction stream) and through sessions.compact
// (session.operation, then sessions.changed "compact"). Each compaction yields one KindCompacted.
func TestDecodeEvent_Compaction(t *testing.T) {
	const key = "agent:main:p"
	at := clawMs(1795314900000)
	ev := func(kind adapters.Kind, name, trigger string) []adapters.Event {
		return []adapters.Event{{Harness: "openclaw", Scope: "main", Kind: kind, Name: name, SessionID: key, Trigger: trigger, At: at}}
	}
	tests := []struct {
		event, payload string
		want           []adapters.Event
	}{
		{"agent", `{"runId":"r","sessionKey":"agent:main:p","stream":"compaction","ts":1795314900000,"data":{"phase":"start"}}`,
			ev(adapters.KindPreCompact, "agent:compaction.start", "auto")},
		{"agent", `{"runId":"r","sessionKey":"agent:main:p","stream":"compaction","ts":1795314900000,"data":{"phase":"end","completed":true,"willRetry":true,"outcome":"completed"}}`,
			ev(adapters.KindCompacted, "agent:compaction.end", "")},
		{"agent", `{"runId":"r","sessionKey":"agent:main:p","stream":"compaction","ts":1795314900000,"data":{"phase":"end","completed":false,"outcome":"skipped","reason":"below_threshold"}}`,
			nil},
		{"session.operation", `{"operationId":"op","operation":"compact","phase":"start","sessionKey":"agent:main:p","agentId":"main","ts":1795314900000}`,
			ev(adapters.KindPreCompact, "session.operation:compact.start", "manual")},
		{"session.operation", `{"operationId":"op","operation":"compact","phase":"end","sessionKey":"agent:main:p","completed":true,"ts":1795314900000}`,
			nil},
		{"sessions.changed", `{"sessionKey":"agent:main:p","agentId":"main","reason":"compact","compacted":true,"ts":1795314900000}`,
			ev(adapters.KindCompacted, "sessions.changed:compact", "")},
		{"sessions.changed", `{"sessionKey":"agent:main:p","agentId":"main","reason":"compact","compacted":false,"ts":1795314900000}`,
			ev(adapters.KindSessionUpdate, "sessions.changed:compact", "")},
	}
	for _, tt := range tests {
		got, err := openclaw.DecodeEvent(tt.event, json.RawMessage(tt.payload))
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %s:\n got %+v, %v\nwant %+v", tt.event, tt.payload, got, err, tt.want)
		}
	}
}

// Transcript messages of every role OpenClaw writes.
func TestDecodeEvent_Messages(t *testing.T) {
	const key = "agent:main:p"
	at := clawMs(1795314900000)
	msg := func(m string) string {
		return `{"sessionKey":"agent:main:p","messageId":"m1","message":` + m + `}`
	}
	tests := []struct {
		name, payload string
		want          []adapters.Turn // nil: no turn
	}{
		{"UserString", msg(`{"role":"user","content":"hello","timestamp":1795314900000}`),
			[]adapters.Turn{{ID: "m1", Role: "user", Text: "hello", At: at}}},
		{"UserParts", msg(`{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"…"},{"type":"text","text":"here"}]}`),
			[]adapters.Turn{{ID: "m1", Role: "user", Text: "look\n[image]\nhere"}}},
		{"AssistantTextThinkingAndCalls", msg(`{"role":"assistant","timestamp":1795314900000,"content":[
			{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Reading."},
			{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"src/a.go"}},
			{"type":"toolCall","id":"c2","name":"tool_call","arguments":{"id":"edit","args":{"file_path":"src/b.go","paths":["src/a.go","docs/x.md",3]}}}]}`),
			[]adapters.Turn{{ID: "m1", Role: "assistant", Tool: "read", Files: []string{"src/a.go", "src/b.go", "docs/x.md"}, At: at,
				Text: "Reading.\n[tool call] read {\"path\":\"src/a.go\"}\n[tool call] edit {\"file_path\":\"src/b.go\",\"paths\":[\"src/a.go\",\"docs/x.md\",3]}"}}},
		{"AssistantError", msg(`{"role":"assistant","content":[],"stopReason":"error","errorMessage":"rate limited"}`),
			[]adapters.Turn{{ID: "m1", Role: "assistant", Text: "error: rate limited"}}},
		{"ThinkingOnly", msg(`{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"}]}`), nil},
		{"ToolResult", msg(`{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"package a\n"}]}`),
			[]adapters.Turn{{ID: "m1", Role: "tool", Tool: "read", Text: "package a"}}},
		{"ToolResultError", msg(`{"role":"toolResult","toolCallId":"c1","toolName":"exec","isError":true,"content":"exit 1"}`),
			[]adapters.Turn{{ID: "m1", Role: "tool", Tool: "exec", Text: "error: exit 1"}}},
		{"ToolSearchResult", msg(`{"role":"toolResult","toolName":"tool_call","details":{"tool":{"name":"web_search"}},"content":"3 hits"}`),
			[]adapters.Turn{{ID: "m1", Role: "tool", Tool: "web_search", Text: "3 hits"}}},
		{"CompactionSummary", msg(`{"role":"compactionSummary","summary":"We decided X.","tokensBefore":90000,"timestamp":1795314900000}`),
			[]adapters.Turn{{ID: "m1", Role: "system", Text: "We decided X.", At: at}}},
		{"BranchSummary", msg(`{"role":"branchSummary","summary":"Tried Y.","fromId":"e1"}`),
			[]adapters.Turn{{ID: "m1", Role: "system", Text: "Tried Y."}}},
		{"BashExecution", msg(`{"role":"bashExecution","command":"ls","output":"a.go\n","exitCode":0}`),
			[]adapters.Turn{{ID: "m1", Role: "tool", Tool: "bash", Text: "$ ls\na.go"}}},
		{"CustomShown", msg(`{"role":"custom","customType":"note","display":true,"content":"Remember Z."}`),
			[]adapters.Turn{{ID: "m1", Role: "system", Text: "Remember Z."}}},
		{"CustomHidden", msg(`{"role":"custom","customType":"openclaw.runtime-context","display":false,"content":"internal"}`), nil},
		{"UnknownRole", msg(`{"role":"reset","content":"x"}`), nil},
		{"Blank", msg(`{"role":"user","content":"  \n"}`), nil},
		{"Inherited", msg(`{"role":"user","content":"\n## Inherited from Parent Session\nParent: …"}`), nil},
		{"Reinforcement", msg(`{"role":"user","content":[{"type":"text","text":"[Objective Reinforcement]\nKeep going."}]}`), nil},
		{"Recovered", msg(`{"role":"assistant","content":"## Recovered Session Checkpoint\n…"}`), nil},
		{"QuotedHeadingKept", msg(`{"role":"user","content":"What does \"## Inherited from Parent Session\" mean?"}`),
			[]adapters.Turn{{ID: "m1", Role: "user", Text: `What does "## Inherited from Parent Session" mean?`}}},
		{"IDFromBookkeeping", `{"sessionKey":"agent:main:p","message":{"role":"user","content":"hi","__openclaw":{"id":"oc-7"}}}`,
			[]adapters.Turn{{ID: "oc-7", Role: "user", Text: "hi"}}},
		{"NoID", `{"sessionKey":"agent:main:p","message":{"role":"user","content":"hi"}}`, nil},
		{"NoMessage", `{"sessionKey":"agent:main:p","messageId":"m1"}`, nil},
		{"BadTimestamp", msg(`{"role":"user","content":"hi","timestamp":"yesterday"}`),
			[]adapters.Turn{{ID: "m1", Role: "user", Text: "hi"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := openclaw.DecodeEvent("session.message", json.RawMessage(tt.payload))
			if err != nil {
				t.Fatal(err)
			}
			var want []adapters.Event
			if tt.want != nil {
				want = []adapters.Event{{Harness: "openclaw", Scope: "main", Kind: adapters.KindTurns, Name: "session.message",
					SessionID: key, Turns: tt.want, At: tt.want[0].At}}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

// A sessions_spawn receipt, wherever it arrives, names the child as the run id.
func TestDecodeEvent_SpawnReceipts(t *testing.T) {
	const parent, child = "agent:main:p", "agent:main:subagent:k"
	receipt := `{"status":"accepted","childSessionKey":"agent:main:subagent:k","runId":"r1"}`
	quoted, _ := json.Marshal(receipt)
	spawned := func(name string, sp adapters.Spawn) adapters.Event {
		return adapters.Event{Harness: "openclaw", Scope: "main", Kind: adapters.KindSpawn, Name: name, SessionID: parent, Spawn: &sp}
	}
	bare := adapters.Spawn{ToolUseID: child, ChildSessionID: child}
	tests := []struct {
		name, event, payload string
		want                 []adapters.Event // the events other than turns
	}{
		{"ToolResultDetails", "session.tool", `{"sessionKey":"agent:main:p","data":{"phase":"result","name":"sessions_spawn","toolCallId":"c1","result":{"content":[],"details":` + receipt + `}}}`,
			[]adapters.Event{spawned("session.tool:result", bare)}},
		{"ToolResultTextOnly", "session.tool", `{"sessionKey":"agent:main:p","data":{"phase":"result","name":"sessions_spawn","toolCallId":"c1","result":{"content":[{"type":"text","text":` + string(quoted) + `}]}}}`,
			[]adapters.Event{spawned("session.tool:result", bare)}},
		{"ToolSearchResult", "session.tool", `{"sessionKey":"agent:main:p","data":{"phase":"result","name":"tool_call","toolCallId":"c1","result":{"details":{"tool":{"name":"sessions_spawn"},"result":{"details":` + receipt + `}}}}}`,
			[]adapters.Event{spawned("session.tool:result", bare)}},
		{"OtherToolIgnored", "session.tool", `{"sessionKey":"agent:main:p","data":{"phase":"result","name":"sessions_list","toolCallId":"c1","result":{"details":` + receipt + `}}}`,
			nil},
		{"Forbidden", "session.tool", `{"sessionKey":"agent:main:p","data":{"phase":"result","name":"sessions_spawn","toolCallId":"c1","isError":true,"result":{"details":{"status":"error","childSessionKey":"agent:main:subagent:k","error":"placement failed"}}}}`,
			[]adapters.Event{{Harness: "openclaw", Scope: "main", Kind: adapters.KindSpawnResult, Name: "session.tool:result", SessionID: parent,
				Spawn: &bare, Result: &adapters.Result{AgentID: child, Status: adapters.StatusFailed, Text: "placement failed"}}}},
		{"NoChild", "session.tool", `{"sessionKey":"agent:main:p","data":{"phase":"result","name":"sessions_spawn","toolCallId":"c1","result":{"details":{"status":"forbidden","error":"depth"}}}}`,
			nil},
		{"ToolResultMessage", "session.message", `{"sessionKey":"agent:main:p","messageId":"m","message":{"role":"toolResult","toolName":"sessions_spawn","toolCallId":"c1","details":` + receipt + `}}`,
			[]adapters.Event{spawned("session.message", bare)}},
		{"CallAndResultMessage", "session.message", `{"sessionKey":"agent:main:p","messageId":"m","message":{"role":"custom","content":[
			{"type":"toolCall","id":"c1","name":"tool_call","arguments":{"id":"sessions_spawn","args":{"task":"T","label":"L","agentId":"coder"}}},
			{"type":"toolResult","toolCallId":"c1","toolName":"tool_call","content":[{"type":"text","text":` + string(quoted) + `}]}]}}`,
			[]adapters.Event{spawned("session.message", adapters.Spawn{ToolUseID: child, ChildSessionID: child, Description: "L", Prompt: "T", Type: "coder"})}},
		{"SelfSpawnIgnored", "session.tool", `{"sessionKey":"agent:main:subagent:k","data":{"phase":"result","name":"sessions_spawn","toolCallId":"c1","result":{"details":` + receipt + `}}}`,
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := openclaw.DecodeEvent(tt.event, json.RawMessage(tt.payload))
			if err != nil {
				t.Fatal(err)
			}
			var got []adapters.Event
			for _, ev := range evs {
				if ev.Kind != adapters.KindTurns {
					got = append(got, ev)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// session.tool turns: one per start and result, the nested call of tool search left out.
func TestDecodeEvent_ToolTurns(t *testing.T) {
	tests := []struct {
		name, payload string
		want          []adapters.Turn
	}{
		{"Start", `{"sessionKey":"agent:main:p","ts":1795314900000,"data":{"phase":"start","name":"read","toolCallId":"c1","args":{"filePath":"/repo/a.go","path":"https://x.io/a"}}}`,
			[]adapters.Turn{{ID: "c1:start", Role: "tool", Tool: "read", Text: `{"filePath":"/repo/a.go","path":"https://x.io/a"}`, Files: []string{"/repo/a.go"}, At: clawMs(1795314900000)}}},
		{"ResultString", `{"sessionKey":"agent:main:p","data":{"phase":"result","name":"exec","toolCallId":"c1","result":"done"}}`,
			[]adapters.Turn{{ID: "c1:result", Role: "tool", Tool: "exec", Text: "done"}}},
		{"ResultError", `{"sessionKey":"agent:main:p","data":{"phase":"result","name":"exec","toolCallId":"c1","isError":true,"result":{"content":[{"type":"text","text":"boom"}]}}}`,
			[]adapters.Turn{{ID: "c1:result", Role: "tool", Tool: "exec", Text: "error: boom"}}},
		{"ResultLong", `{"sessionKey":"agent:main:p","data":{"phase":"result","name":"read","toolCallId":"c1","result":{"content":"` + strings.Repeat("é", 3000) + `"}}}`,
			[]adapters.Turn{{ID: "c1:result", Role: "tool", Tool: "read", Text: strings.Repeat("é", 2048) + "\n…[1904 bytes truncated]"}}},
		{"Update", `{"sessionKey":"agent:main:p","data":{"phase":"update","name":"exec","toolCallId":"c1","partialResult":"…"}}`, nil},
		{"Nested", `{"sessionKey":"agent:main:p","data":{"phase":"start","name":"read","toolCallId":"ts:c1:read:1","parentToolCallId":"c1","args":{"path":"a"}}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := openclaw.DecodeEvent("session.tool", json.RawMessage(tt.payload))
			if err != nil {
				t.Fatal(err)
			}
			var got []adapters.Turn
			for _, ev := range evs {
				got = append(got, ev.Turns...)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// Sub-agent tasks in every state; tasks of other kinds are not spawns.
func TestDecodeEvent_Tasks(t *testing.T) {
	const parent, child = "agent:main:p", "agent:main:subagent:k"
	task := func(fields string) string {
		return `{"action":"upserted","task":{"kind":"subagent","runtime":"subagent","title":"L","sessionKey":"agent:main:p",
			"childSessionKey":"agent:main:subagent:k","createdAt":1795314800000,"startedAt":1795314801000,` + fields + `}}`
	}
	cut := strings.Repeat("x", 119) + "…"
	result := func(status, text string) *adapters.Result {
		return &adapters.Result{AgentID: child, Status: status, Text: text, DurationMs: 9000}
	}
	tests := []struct {
		name, payload string
		kind          adapters.Kind // "" for no event
		result        *adapters.Result
	}{
		{"Queued", task(`"status":"queued"`), adapters.KindSpawn, nil},
		{"Completed", task(`"status":"completed","endedAt":1795314810000,"progressSummary":"42"`), adapters.KindSpawnResult, result("completed", "42")},
		{"CompletedResultWins", task(`"status":"completed","endedAt":1795314810000,"progressSummary":"4…","result":"42, in full"`), adapters.KindSpawnResult, result("completed", "42, in full")},
		{"CompletedCutSummaryLeftOut", task(`"status":"completed","endedAt":1795314810000,"progressSummary":"` + cut + `"`), adapters.KindSpawnResult, result("completed", "")},
		{"Failed", task(`"status":"failed","endedAt":1795314810000,"error":"model down"`), adapters.KindSpawnResult, result(adapters.StatusFailed, "model down")},
		{"Lost", task(`"status":"lost","endedAt":1795314810000,"terminalSummary":"Backing session disappeared."`), adapters.KindSpawnResult, result(adapters.StatusFailed, "Backing session disappeared.")},
		{"TimedOut", task(`"status":"timed_out","endedAt":1795314810000`), adapters.KindSpawnResult, result(adapters.StatusFailed, "")},
		{"Cancelled", task(`"status":"cancelled","endedAt":1795314810000`), adapters.KindSpawnResult, result(adapters.StatusInterrupted, "")},
		{"UnknownStatus", task(`"status":"paused"`), "", nil},
		{"CLI", `{"action":"upserted","task":{"kind":"cli","runtime":"cli","status":"running","sessionKey":"agent:main:p","childSessionKey":"agent:main:p"}}`, "", nil},
		{"NoChild", `{"action":"upserted","task":{"kind":"subagent","status":"running","sessionKey":"agent:main:p"}}`, "", nil},
		{"Deleted", `{"action":"deleted","taskId":"t1"}`, "", nil},
		{"Restored", `{"action":"restored"}`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := openclaw.DecodeEvent("task", json.RawMessage(tt.payload))
			if err != nil {
				t.Fatal(err)
			}
			if tt.kind == "" {
				if got != nil {
					t.Errorf("got %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("got %+v, want one %s", got, tt.kind)
			}
			ev := got[0]
			wantSpawn := adapters.Spawn{ToolUseID: child, ChildSessionID: child, Description: "L"}
			if ev.Kind != tt.kind || ev.SessionID != parent || ev.Scope != "main" || *ev.Spawn != wantSpawn || !reflect.DeepEqual(ev.Result, tt.result) {
				t.Errorf("got %+v (spawn %+v, result %+v)\nwant %s in %s, spawn %+v, result %+v", ev, ev.Spawn, ev.Result, tt.kind, parent, wantSpawn, tt.result)
			}
			wantAt := clawMs(1795314801000)
			if tt.kind == adapters.KindSpawnResult {
				wantAt = clawMs(1795314810000)
			}
			if !ev.At.Equal(wantAt) {
				t.Errorf("At %v, want %v", ev.At, wantAt)
			}
		})
	}
}

// A run's terminal lifecycle event: idle, and for a sub-agent its outcome.
func TestDecodeEvent_Lifecycle(t *testing.T) {
	const parent, child = "agent:main:p", "agent:main:subagent:k"
	life := func(key, spawnedBy, data string) string {
		return `{"runId":"r","sessionKey":"` + key + `","spawnedBy":"` + spawnedBy + `","stream":"lifecycle","ts":1795314810000,"data":` + data + `}`
	}
	tests := []struct {
		name, payload string
		idle          string           // the session that goes idle; "" for no events at all
		result        *adapters.Result // nil: no spawn result
	}{
		{"TopLevelEnd", life(parent, "", `{"phase":"end","stopReason":"stop","terminalReply":{"disposition":"visible","text":"hi"}}`), parent, nil},
		{"ChildAborted", life(child, parent, `{"phase":"end","aborted":true,"startedAt":1795314800000,"endedAt":1795314810000}`), child,
			&adapters.Result{AgentID: child, Status: adapters.StatusInterrupted, DurationMs: 10000}},
		{"ChildTimeout", life(child, parent, `{"phase":"end","stopReason":"timeout","error":"took too long"}`), child,
			&adapters.Result{AgentID: child, Status: adapters.StatusFailed, Text: "took too long"}},
		{"ChildSettledError", life(child, parent, `{"phase":"error","executionSettled":true,"error":"provider 500"}`), child,
			&adapters.Result{AgentID: child, Status: adapters.StatusFailed, Text: "provider 500"}},
		{"ChildBlocked", life(child, parent, `{"phase":"end","livenessState":"blocked"}`), child,
			&adapters.Result{AgentID: child, Status: adapters.StatusFailed}},
		{"ChildHiddenReply", life(child, parent, `{"phase":"end","terminalReply":{"disposition":"silent","text":"NO_REPLY"}}`), child,
			&adapters.Result{AgentID: child, Status: "completed"}},
		{"ErrorBeforeRetry", life(child, parent, `{"phase":"error","error":"overloaded"}`), "", nil},
		{"YieldedToChildren", life(child, parent, `{"phase":"end","yielded":true,"livenessState":"paused","stopReason":"end_turn"}`), "", nil},
		{"RestartInterrupted", life(child, parent, `{"phase":"end","stopReason":"restart","aborted":true}`), "", nil},
		{"Start", life(child, parent, `{"phase":"start"}`), "", nil},
		{"NoSession", `{"runId":"r","stream":"lifecycle","data":{"phase":"end"}}`, "", nil},
		{"OtherStream", `{"runId":"r","sessionKey":"agent:main:p","stream":"assistant","data":{"text":"x","phase":"end"}}`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := openclaw.DecodeEvent("agent", json.RawMessage(tt.payload))
			if err != nil {
				t.Fatal(err)
			}
			var want []adapters.Event
			name, at := "agent:lifecycle.end", clawMs(1795314810000)
			if strings.Contains(tt.payload, `"phase":"error"`) {
				name = "agent:lifecycle.error"
			}
			if tt.result != nil {
				want = append(want, adapters.Event{Harness: "openclaw", Scope: "main", Kind: adapters.KindSpawnResult, Name: name,
					SessionID: parent, At: at, Spawn: &adapters.Spawn{ToolUseID: child, ChildSessionID: child}, Result: tt.result})
			}
			if tt.idle != "" {
				want = append(want, adapters.Event{Harness: "openclaw", Scope: "main", Kind: adapters.KindIdle, Name: name, SessionID: tt.idle, At: at})
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

// The list sessions.subscribe returned in the recording, and lists the recording lacks.
func TestDecodeSessionList(t *testing.T) {
	f := clawReadFrame(t, filepath.Join(clawLive, "spawn.sessions.subscribe.res.json"))
	evs, err := openclaw.DecodeSessionList(f.Payload)
	want := []adapters.Event{{Harness: "openclaw", Scope: "main", Kind: adapters.KindSessionStart, Name: openclaw.NameSessionsList,
		SessionID: "agent:main:main", At: clawMs(1795314731052)}}
	if err != nil || !reflect.DeepEqual(evs, want) {
		t.Fatalf("subscribe result: got %+v, %v\nwant %+v", evs, err, want)
	}

	t.Run("ParentsFirst", func(t *testing.T) {
		list := `{"ts":1795314900000,"count":4,"sessions":[
			{"key":"agent:main:subagent:g","spawnedBy":"agent:main:subagent:c","spawnDepth":2,"label":"grandchild"},
			"not a row", {"label":"no key"},
			{"key":"agent:main:subagent:c","spawnedBy":"agent:main:p","spawnDepth":1,"subagentRole":"orchestrator","createdAt":1795314800000},
			{"key":"agent:main:p","displayName":"parent","updatedAt":1795314700000},
			{"key":"agent:ops:q"}]}`
		evs, err := openclaw.DecodeSessionList(json.RawMessage(list))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range evs {
			got = append(got, ev.SessionID+"<"+ev.ParentSessionID+"@"+ev.Scope)
		}
		wantOrder := []string{"agent:main:p<@main", "agent:ops:q<@ops", "agent:main:subagent:c<agent:main:p@main", "agent:main:subagent:g<agent:main:subagent:c@main"}
		if !slices.Equal(got, wantOrder) {
			t.Errorf("got %v, want %v", got, wantOrder)
		}
		if !evs[0].At.Equal(clawMs(1795314700000)) || !evs[1].At.Equal(clawMs(1795314900000)) || !evs[2].At.Equal(clawMs(1795314800000)) {
			t.Errorf("times: %v %v %v", evs[0].At, evs[1].At, evs[2].At)
		}
	})
	t.Run("Shapes", func(t *testing.T) {
		for _, tt := range []struct {
			result    string
			n         int
			malformed bool
		}{
			{`{"sessions":[]}`, 0, false},
			{`{"subscribed":true}`, 0, false},
			{`{"subscribed":true,"list":{"sessions":[{"key":"agent:main:a"}]}}`, 1, false},
			{`{"sessions":null,"list":{"sessions":[{"key":"agent:main:a"},{"key":"agent:main:b"}]}}`, 2, false},
			{`{}`, 0, true},
			{`{"sessions":{"key":"agent:main:a"}}`, 0, true},
			{`{"sessions":"agent:main:a"}`, 0, true},
			{`[{"key":"agent:main:a"}]`, 0, true},
			{`null`, 0, true},
			{`{"sessions":[`, 0, true},
		} {
			evs, err := openclaw.DecodeSessionList(json.RawMessage(tt.result))
			if tt.malformed != errors.Is(err, adapters.ErrMalformed) || len(evs) != tt.n {
				t.Errorf("%s: got %d events, %v; want %d, malformed %v", tt.result, len(evs), err, tt.n, tt.malformed)
			}
		}
	})
}

func TestDecodeSessionDescribe(t *testing.T) {
	var changed openclaw.SessionsChanged
	f := clawReadFrame(t, filepath.Join(clawLive, "spawn.sessions.changed.child.reason-create.event.json"))
	if err := json.Unmarshal(f.Payload, &changed); err != nil {
		t.Fatal(err)
	}
	row, _ := json.Marshal(map[string]any{"session": json.RawMessage(clawField(t, f.Payload, "session"))})
	evs, err := openclaw.DecodeSessionDescribe(row)
	want := []adapters.Event{{Harness: "openclaw", Scope: "main", Kind: adapters.KindSessionStart, Name: openclaw.NameSessionsDescribe,
		SessionID: clawChild, ParentSessionID: clawParentB, Depth: 1, Title: clawLabel, Cwd: clawWorkspace, AgentName: "orchestrator",
		At: clawMs(int64(changed.Session.CreatedAt))}}
	if err != nil || !reflect.DeepEqual(evs, want) {
		t.Fatalf("got %+v, %v\nwant %+v", evs, err, want)
	}
	for _, tt := range []struct {
		result    string
		malformed bool
	}{
		{`{"session":null}`, false},
		{`{}`, false},
		{`{"session":{}}`, true},
		{`{"session":{"key":7}}`, true},
		{`{"session":"agent:main:x"}`, true},
		{`[]`, true},
		{``, true},
	} {
		evs, err := openclaw.DecodeSessionDescribe(json.RawMessage(tt.result))
		if tt.malformed != errors.Is(err, adapters.ErrMalformed) || evs != nil {
			t.Errorf("%s: got %v, %v; want nothing, malformed %v", tt.result, evs, err, tt.malformed)
		}
	}
}

func clawField(t *testing.T, obj json.RawMessage, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil || m[name] == nil {
		t.Fatalf("field %s: %v", name, err)
	}
	return m[name]
}

// Bad input is malformed or ignored, never a panic; events nothing decodes are not errors.
func TestDecodeEvent_Malformed(t *testing.T) {
	decoded := []string{"sessions.changed", "session.message", "session.tool", "session.operation", "task", "agent"}
	for _, event := range decoded {
		for _, payload := range []string{``, `null`, `[]`, `"x"`, `42`, `{`, `{"sessionKey":}`, "{\"sessionKey\":\"agent:main:\xff\"", `{"a":1}}`} {
			evs, err := openclaw.DecodeEvent(event, json.RawMessage(payload))
			if !errors.Is(err, adapters.ErrMalformed) || evs != nil {
				t.Errorf("%s %q: got %v, %v; want ErrMalformed", event, payload, evs, err)
			}
		}
	}
	for _, tt := range []struct{ event, payload string }{
		{"session.message", `{"messageId":"m","message":{"role":"user","content":"x"}}`},
		{"session.message", `{"sessionKey":5,"messageId":"m","message":{"role":"user","content":"x"}}`},
		{"session.tool", `{"sessionKey":"agent:main:p","data":{"phase":"start","name":"read"}}`},
		{"session.tool", `{"data":{"phase":"start","name":"read","toolCallId":"c"}}`},
		{"session.operation", `{"operation":"compact","phase":"start"}`},
		{"task", `{"action":"upserted"}`},
	} {
		if evs, err := openclaw.DecodeEvent(tt.event, json.RawMessage(tt.payload)); !errors.Is(err, adapters.ErrMalformed) || evs != nil {
			t.Errorf("%s %s: got %v, %v; want ErrMalformed", tt.event, tt.payload, evs, err)
		}
	}
	// Wrong types inside a well-formed payload are left zero.
	for _, tt := range []struct {
		event, payload string
		n              int
	}{
		{"sessions.changed", `{"sessionKey":"agent:main:p","reason":7,"session":"row","ts":"now","spawnDepth":"1"}`, 1},
		{"sessions.changed", `{"sessionKey":["agent:main:p"]}`, 0},
		{"session.message", `{"sessionKey":"agent:main:p","messageId":"m","message":{"role":"user","content":{"text":"x"}}}`, 0},
		{"session.message", "{\"sessionKey\":\"agent:main:p\",\"messageId\":\"m\",\"message\":{\"role\":\"user\",\"content\":\"caf\xe9\"}}", 1},
		{"session.tool", `{"sessionKey":"agent:main:p","ts":{},"data":{"phase":"start","name":7,"toolCallId":"c","args":[1,2]}}`, 1},
		{"task", `{"action":"upserted","task":{"kind":"subagent","status":"running","sessionKey":"agent:main:p","childSessionKey":"agent:main:subagent:k","startedAt":"soon"}}`, 1},
		{"task", `{"action":"upserted","task":"t1"}`, 0},
		{"agent", `{"sessionKey":"agent:main:p","stream":"lifecycle","data":"end"}`, 0},
		{"agent", `{"sessionKey":"agent:main:p","stream":"lifecycle","ts":-5,"data":{"phase":"end","endedAt":1e300}}`, 1},
		{"chat", `{`, 0},
		{"tick", `not json`, 0},
		{"", ``, 0},
	} {
		evs, err := openclaw.DecodeEvent(tt.event, json.RawMessage(tt.payload))
		if err != nil || len(evs) != tt.n {
			t.Errorf("%s %s: got %+v, %v; want %d events", tt.event, tt.payload, evs, err, tt.n)
		}
		for _, ev := range evs {
			for _, tr := range ev.Turns {
				if !utf8Valid(tr.Text) {
					t.Errorf("%s: turn text %q is not valid UTF-8", tt.event, tr.Text)
				}
			}
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
