package opencode_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

// The /event recording: a parent whose prompt made the model call task, the child session it
// started, then a compaction of the parent.
func TestDecodeFrame_ParentChildCompact(t *testing.T) {
	evs := MustDecodeStream(t, parentChildCompact)
	for i, ev := range evs {
		if ev.Harness != "opencode" || ev.Name == "" || ev.SessionID == "" {
			t.Errorf("event %d: Harness %q, Name %q, SessionID %q", i, ev.Harness, ev.Name, ev.SessionID)
		}
	}

	const (
		start   = adapters.KindSessionStart
		update  = adapters.KindSessionUpdate
		turns   = adapters.KindTurns
		spawn   = adapters.KindSpawn
		result  = adapters.KindSpawnResult
		idle    = adapters.KindIdle
		compact = adapters.KindCompacted
	)
	type step struct {
		kind    adapters.Kind
		session string
	}
	p, c := compactParent, compactChild
	want := []step{
		{start, p}, {update, p}, {turns, p}, {update, p}, {update, p},
		{turns, p}, {spawn, p}, // task pending
		{start, c},
		{turns, p}, {spawn, p}, // task running, child named
		{update, c}, {turns, c}, {update, c},
		{turns, p}, {spawn, p}, // running again
		{update, c}, {turns, c}, {idle, c}, {idle, c},
		{turns, p}, {result, p}, // task completed
		{update, c}, {update, p}, {turns, p}, {idle, p}, {idle, p}, {update, p},
		{turns, p}, {compact, p}, {idle, p}, {idle, p}, {update, p},
	}
	var got []step
	for _, ev := range evs {
		got = append(got, step{ev.Kind, ev.SessionID})
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}

	t.Run("Sessions", func(t *testing.T) {
		starts := eventsOfKind(evs, start)
		wantStarts := []adapters.Event{
			{Harness: "opencode", Kind: start, Name: "session.created", SessionID: p, Cwd: projectDir,
				Title: "parser refactor", At: msTime(1795314629960)},
			{Harness: "opencode", Kind: start, Name: "session.created", SessionID: c, Cwd: projectDir,
				ParentSessionID: p, Title: "child research task (@general subagent)", AgentName: "general",
				At: msTime(1795314630132)},
		}
		if !reflect.DeepEqual(starts, wantStarts) {
			t.Fatalf("session starts:\n got %+v\nwant %+v", starts, wantStarts)
		}
		up := eventsOfKind(evs, update)[0]
		if up.AgentName != "build" || up.Title != "parser refactor" || !up.At.Equal(msTime(1795314630066)) {
			t.Errorf("first session.updated = %+v", up)
		}
	})

	t.Run("Turns", func(t *testing.T) {
		tr := finalTurns(evs)
		wantParent := []adapters.Turn{
			{ID: "prt_201173db5001qw286AXccaeyWq", Role: "user",
				Text: "We are refactoring the parser; keep the public API stable. SPAWN-PLEASE research the lexer"},
			{ID: "prt_201173df1001zq2K1jGVBLdxrC", Role: "tool", Tool: "task", At: msTime(1795314630135),
				Text: "child research task\n" +
					`{"description":"child research task","prompt":"CHILD-TASK: find the answer and report it.","subagent_type":"general"}` + "\n" +
					"<task id=\"ses_dfee8c20bffe2ObghB2h3tjcX3\" state=\"completed\">\n<task_result>\nChild result: the answer is 42.\n</task_result>\n</task>"},
			{ID: "prt_201173ee7001LHHFtGlZkWwiZV", Role: "assistant", Text: "Parent finished after the sub-agent reported back.",
				At: msTime(1795314630375)},
			// The compaction summary: the assistant's text in compaction mode.
			{ID: "prt_201173f79001bOC83LDzd6yBIL", Role: "assistant", Text: "Child result: the answer is 42.",
				At: msTime(1795314630521)},
		}
		wantChild := []adapters.Turn{
			{ID: "prt_201173dfd001J37R3uHNwHYX31", Role: "user", Text: "CHILD-TASK: find the answer and report it."},
			{ID: "prt_201173e4b001d7GxPP3Q47WaJc", Role: "assistant", Text: "Child result: the answer is 42.",
				At: msTime(1795314630219)},
		}
		if !reflect.DeepEqual(tr[p], wantParent) {
			t.Errorf("parent turns:\n got %+v\nwant %+v", tr[p], wantParent)
		}
		if !reflect.DeepEqual(tr[c], wantChild) {
			t.Errorf("child turns:\n got %+v\nwant %+v", tr[c], wantChild)
		}
		if len(tr) != 2 {
			t.Errorf("turns of %d sessions, want 2", len(tr))
		}
		// A user prompt has no time of its own: its event carries the update's.
		if ev := evs[2]; !ev.At.Equal(msTime(1795314630070)) || !ev.Turns[0].At.IsZero() {
			t.Errorf("user prompt event At %v, turn At %v", ev.At, ev.Turns[0].At)
		}
	})

	t.Run("Spawn", func(t *testing.T) {
		spawns := eventsOfKind(evs, spawn)
		if got := *spawns[0].Spawn; got != (adapters.Spawn{ToolUseID: "call_c67485020b"}) {
			t.Errorf("pending spawn = %+v, want only the call id", got)
		}
		wantSpawn := adapters.Spawn{
			ToolUseID:      "call_c67485020b",
			ChildSessionID: c,
			Description:    "child research task",
			Prompt:         "CHILD-TASK: find the answer and report it.",
			Type:           "general",
		}
		for _, ev := range spawns[1:] {
			if *ev.Spawn != wantSpawn || !ev.At.Equal(msTime(1795314630135)) {
				t.Errorf("running spawn = %+v at %v, want %+v", *ev.Spawn, ev.At, wantSpawn)
			}
		}
		res := eventsOfKind(evs, result)[0]
		wantResult := adapters.Result{AgentID: c, Status: "completed", Text: "Child result: the answer is 42.", DurationMs: 130}
		if *res.Spawn != wantSpawn || *res.Result != wantResult || !res.At.Equal(msTime(1795314630265)) {
			t.Errorf("result = %+v %+v at %v, want %+v %+v", *res.Spawn, *res.Result, res.At, wantSpawn, wantResult)
		}
	})

	t.Run("Compaction", func(t *testing.T) {
		got := eventsOfKind(evs, compact)
		want := []adapters.Event{{Harness: "opencode", Kind: compact, Name: "session.compacted", SessionID: p}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("compactions = %+v, want %+v", got, want)
		}
	})
}

// message.part.delta yields nothing because the part update after it carries the whole text.
func TestDecodeFrame_DeltasAreRepeated(t *testing.T) {
	for _, path := range []string{parentChildCompact, globalStream} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			acc := map[string]string{}
			deltas := 0
			for _, f := range MustReadSSE(t, path) {
				var frame struct {
					opencode.Frame
					Payload *opencode.Frame `json:"payload"`
				}
				if err := json.Unmarshal(f, &frame); err != nil {
					t.Fatal(err)
				}
				if frame.Payload != nil {
					frame.Frame = *frame.Payload
				}
				switch frame.Type {
				case opencode.EventPartDelta:
					var d struct{ PartID, Field, Delta string }
					if err := json.Unmarshal(frame.Properties, &d); err != nil {
						t.Fatal(err)
					}
					if d.Field != "text" {
						t.Fatalf("delta of field %q", d.Field)
					}
					acc[d.PartID] += d.Delta
					deltas++
					if evs, err := opencode.DecodeFrame(f); err != nil || len(evs) != 0 {
						t.Fatalf("delta decoded to %v, %v; want nothing", evs, err)
					}
				case opencode.EventPartUpdated:
					var p opencode.PartProps
					if err := json.Unmarshal(frame.Properties, &p); err != nil {
						t.Fatal(err)
					}
					if want, ok := acc[p.Part.ID]; ok && p.Part.Time.End != 0 {
						if p.Part.Text != want {
							t.Errorf("part %s: text %q after deltas %q", p.Part.ID, p.Part.Text, want)
						}
						delete(acc, p.Part.ID)
					}
				}
			}
			if deltas == 0 || len(acc) != 0 {
				t.Fatalf("%d deltas; parts never completed by an update: %v", deltas, acc)
			}
		})
	}
}

// Every single-event recording, decoded to exactly what it means.
func TestDecodeFrame_Events(t *testing.T) {
	const (
		childTitle = "Research meaning of life (@general subagent)"
		taskPart   = "prt_201168128001A5dOj8or5ngC1H"
		taskInput  = `{"description":"Research meaning of life","prompt":"Find the meaning of life and report a one-line answer.","subagent_type":"general"}`
	)
	childStart := adapters.Event{Harness: "opencode", Kind: adapters.KindSessionStart, Name: "session.created",
		SessionID: globalChild, ParentSessionID: globalParent, Title: childTitle, AgentName: "general",
		Cwd: projectDir, At: msTime(1795314582007)}
	taskSpawn := &adapters.Spawn{ToolUseID: "call_mock2", ChildSessionID: globalChild, Description: "Research meaning of life",
		Prompt: "Find the meaning of life and report a one-line answer.", Type: "general"}
	partEvent := func(kind adapters.Kind, at int64) adapters.Event {
		return adapters.Event{Harness: "opencode", Kind: kind, Name: "message.part.updated", SessionID: globalParent, At: msTime(at)}
	}
	running, runningSpawn := partEvent(adapters.KindTurns, 1795314582011), partEvent(adapters.KindSpawn, 1795314582011)
	running.Turns = []adapters.Turn{{ID: taskPart, Role: "tool", Tool: "task", Text: "Research meaning of life\n" + taskInput, At: msTime(1795314582011)}}
	runningSpawn.Spawn = taskSpawn
	completed, result := partEvent(adapters.KindTurns, 1795314582011), partEvent(adapters.KindSpawnResult, 1795314585557)
	completed.Turns = []adapters.Turn{{ID: taskPart, Role: "tool", Tool: "task", At: msTime(1795314582011),
		Text: "Research meaning of life\n" + taskInput + "\n" +
			"<task id=\"ses_dfee97e08ffeozwpJ3spjswo4c\" state=\"completed\">\n<task_result>\nNothing left to do; the answer remains 42.\n</task_result>\n</task>"}}
	result.Spawn = taskSpawn
	result.Result = &adapters.Result{AgentID: globalChild, Status: "completed", Text: "Nothing left to do; the answer remains 42.", DurationMs: 3546}

	tests := map[string][]adapters.Event{
		"global-event.server-connected.json":                nil,
		"global-event.session-created-child.json":           {childStart},
		"global-event.sync-session-created-child.json":      {childStart},
		"message-part-updated.compaction-part.json":         nil,
		"message-part-updated.task-tool-running.json":       {running, runningSpawn},
		"message-part-updated.task-tool-completed.json":     {completed, result},
		"message-updated.assistant-compaction-summary.json": nil,
		"message-updated.user.json":                         nil,
		"server-heartbeat.json":                             nil,
		"session-compacted.json": {{Harness: "opencode", Kind: adapters.KindCompacted, Name: "session.compacted",
			SessionID: globalChild}},
		"session-created.child-task.json": {childStart},
		"session-created.root.json": {{Harness: "opencode", Kind: adapters.KindSessionStart, Name: "session.created",
			SessionID: globalParent, Title: "New session - 2026-11-22T02:29:39.124Z", Cwd: projectDir, At: msTime(1795314579124)}},
		"session-deleted.child.v1.18.34.json": {{Harness: "opencode", Kind: adapters.KindSessionDeleted, Name: "session.deleted",
			SessionID: "ses_dfee56a5effekLKyi65JoSphHT", ParentSessionID: "ses_dfee56ad9ffef3jbl2ewhmJTYa", Title: "manual child",
			Cwd: projectDir}},
		"session-idle.json":        {{Harness: "opencode", Kind: adapters.KindIdle, Name: "session.idle", SessionID: globalChild}},
		"session-status.busy.json": nil,
		"session-updated.child-task.json": {{Harness: "opencode", Kind: adapters.KindSessionUpdate, Name: "session.updated",
			SessionID: globalChild, ParentSessionID: globalParent, Title: childTitle, AgentName: "general", Cwd: projectDir,
			At: msTime(1795314582017)}},
	}
	for _, path := range MustGlob(t, "testdata/events/*.json") {
		name := filepath.Base(path)
		if strings.HasPrefix(name, "http.") {
			continue // REST replies: rest_test.go
		}
		want, ok := tests[name]
		if !ok {
			t.Errorf("%s: no expectation; add one", name)
			continue
		}
		delete(tests, name)
		t.Run(name, func(t *testing.T) {
			got, err := opencode.DecodeFrame(mustReadFile(t, path))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("events:\n got %s\nwant %s", dump(got), dump(want))
			}
		})
	}
	for name := range tests {
		t.Errorf("%s: expected but not in testdata/events", name)
	}
}

// The /global/event recording: every frame wrapped, session and message events repeated as
// "sync" copies with the same id, which decode to the same events.
func TestDecodeFrame_GlobalStream(t *testing.T) {
	byID := map[string][]adapters.Event{}
	var evs []adapters.Event
	syncs := 0
	for i, f := range MustReadSSE(t, globalStream) {
		h, err := opencode.DecodeHeader(f)
		if err != nil {
			t.Fatalf("frame %d: header: %v", i, err)
		}
		got, err := opencode.DecodeFrame(f)
		if err != nil {
			t.Fatalf("frame %d (%s): %v", i, h.Type, err)
		}
		if h.ID == "" || strings.HasSuffix(h.Type, ".1") {
			t.Errorf("frame %d: header %+v", i, h)
		}
		if h.Sync {
			syncs++
			orig, ok := byID[h.ID]
			if !ok {
				t.Fatalf("frame %d: sync copy of %s before the event", i, h.ID)
			}
			if !reflect.DeepEqual(got, orig) {
				t.Errorf("frame %d: sync copy of %s (%s) decodes to\n%s\nthe event to\n%s", i, h.ID, h.Type, dump(got), dump(orig))
			}
			continue
		}
		byID[h.ID] = got
		for _, ev := range got {
			if ev.Cwd != projectDir {
				t.Errorf("frame %d: %s of %s: Cwd %q, want the frame's directory", i, ev.Kind, ev.SessionID, ev.Cwd)
			}
		}
		evs = append(evs, got...)
	}
	if syncs != 66 {
		t.Errorf("%d sync copies, want 66", syncs)
	}

	tr := finalTurns(evs)
	if got := tr[globalParent][0]; got.Role != "user" || got.Text != "DELEGATE: use a subagent to find the meaning of life." {
		t.Errorf("parent's first turn = %+v, want the user's prompt", got)
	}
	if got := tr[globalChild][0]; got.Role != "user" || got.Text != "Find the meaning of life and report a one-line answer." {
		t.Errorf("child's first turn = %+v, want the task prompt", got)
	}
	for _, tr := range tr[globalChild] {
		if strings.HasPrefix(tr.Text, "Continue if you have next steps") {
			t.Errorf("synthetic continuation became a turn: %+v", tr)
		}
	}
	res := eventsOfKind(evs, adapters.KindSpawnResult)
	if len(res) != 1 || res[0].Spawn.ChildSessionID != globalChild || res[0].Result.Text != "Nothing left to do; the answer remains 42." {
		t.Fatalf("spawn results = %s", dump(res))
	}
	comp := eventsOfKind(evs, adapters.KindCompacted)
	if len(comp) != 1 || comp[0].SessionID != globalChild {
		t.Fatalf("compactions = %s, want one of the child", dump(comp))
	}
	starts := eventsOfKind(evs, adapters.KindSessionStart)
	if len(starts) != 2 || starts[0].ParentSessionID != "" || starts[1].ParentSessionID != globalParent {
		t.Fatalf("session starts = %s", dump(starts))
	}
}

func TestDecodeHeader(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		want  opencode.Header
	}{
		{"Event", `{"id":"evt_1","type":"session.idle","properties":{"sessionID":"s"}}`,
			opencode.Header{ID: "evt_1", Type: "session.idle"}},
		{"Global", `{"directory":"/d","project":"p","payload":{"id":"evt_2","type":"server.instance.disposed","properties":{}}}`,
			opencode.Header{ID: "evt_2", Type: "server.instance.disposed", Directory: "/d"}},
		{"GlobalNoDirectory", `{"payload":{"id":"evt_3","type":"server.connected","properties":{}}}`,
			opencode.Header{ID: "evt_3", Type: "server.connected"}},
		{"Sync", `{"directory":"/d","payload":{"type":"sync","syncEvent":{"id":"evt_4","type":"message.part.updated.12","data":{}},"id":"evt_4"}}`,
			opencode.Header{ID: "evt_4", Type: "message.part.updated", Directory: "/d", Sync: true}},
		{"SyncUnversioned", `{"payload":{"type":"sync","syncEvent":{"id":"evt_5","type":"session.created"}}}`,
			opencode.Header{ID: "evt_5", Type: "session.created", Sync: true}},
		{"SyncOddVersion", `{"payload":{"type":"sync","syncEvent":{"type":"x.v1"},"id":"evt_6"}}`,
			opencode.Header{ID: "evt_6", Type: "x.v1", Sync: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := opencode.DecodeHeader([]byte(tt.frame))
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestDecodeFrame_Malformed(t *testing.T) {
	tests := []struct{ name, frame string }{
		{"Empty", ""},
		{"Blank", " \n"},
		{"Null", "null"},
		{"Array", "[]"},
		{"Number", "42"},
		{"String", `"session.idle"`},
		{"Truncated", `{"type":"session.idle"`},
		{"Trailing", `{"type":"server.heartbeat"} {}`},
		{"NoType", `{"id":"evt_1","properties":{}}`},
		{"TypeNotString", `{"type":5}`},
		{"TypeEmpty", `{"type":""}`},
		{"PayloadNull", `{"directory":"/d","payload":null}`},
		{"PayloadString", `{"directory":"/d","payload":"x"}`},
		{"PayloadNoType", `{"directory":"/d","payload":{"id":"evt_1"}}`},
		{"SyncNoEvent", `{"payload":{"type":"sync","id":"evt_1"}}`},
		{"SyncNoType", `{"payload":{"type":"sync","syncEvent":{"id":"evt_1","data":{}}}}`},
		{"SyncNoData", `{"payload":{"type":"sync","syncEvent":{"id":"e","type":"session.idle.1"}}}`},
		{"SessionNoProperties", `{"type":"session.created"}`},
		{"SessionPropertiesArray", `{"type":"session.updated","properties":[]}`},
		{"SessionNoID", `{"type":"session.created","properties":{"info":{"title":"t"}}}`},
		{"DeletedNoID", `{"type":"session.deleted","properties":{"info":null}}`},
		{"IdleNoSession", `{"type":"session.idle","properties":{}}`},
		{"CompactedSessionNotString", `{"type":"session.compacted","properties":{"sessionID":7}}`},
		{"StatusNoSession", `{"type":"session.status","properties":{"status":{"type":"idle"}}}`},
		{"PartNoProperties", `{"type":"message.part.updated"}`},
		{"PartNoSession", `{"type":"message.part.updated","properties":{"part":{"id":"prt_1","type":"text","text":"x"}}}`},
		{"PartNoID", `{"type":"message.part.updated","properties":{"sessionID":"s","part":{"type":"text","text":"x"}}}`},
		{"PartSyntax", `{"type":"message.part.updated","properties":{"sessionID":"s","part":{"id":"p",}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := opencode.DecodeFrame([]byte(tt.frame))
			if !errors.Is(err, adapters.ErrMalformed) || evs != nil {
				t.Fatalf("got %v, %v; want an error wrapping ErrMalformed", evs, err)
			}
		})
	}
}

// Types DecodeFrame does not map, and fields of an unexpected shape, are no error.
func TestDecodeFrame_Tolerated(t *testing.T) {
	tests := []struct {
		name, frame string
		want        []adapters.Event
	}{
		{"UnknownType", `{"type":"session.diff","properties":{"sessionID":"s","diff":[]}}`, nil},
		{"UnknownNoProperties", `{"type":"lsp.updated"}`, nil},
		{"UnknownBadProperties", `{"type":"file.edited","properties":"x"}`, nil},
		{"MessageUpdatedOdd", `{"type":"message.updated","properties":[1]}`, nil},
		{"DeltaOdd", `{"type":"message.part.delta","properties":null}`, nil},
		{"SessionError", `{"type":"session.error","properties":{"sessionID":"s","error":{"name":"APIError"}}}`, nil},
		{"StatusBusy", `{"type":"session.status","properties":{"sessionID":"s","status":{"type":"busy"}}}`, nil},
		{"StatusRetry", `{"type":"session.status","properties":{"sessionID":"s","status":{"type":"retry","attempt":2}}}`, nil},
		{"StatusOdd", `{"type":"session.status","properties":{"sessionID":"s","status":"idle"}}`, nil},
		{"StatusIdle", `{"type":"session.status","properties":{"sessionID":"s","status":{"type":"idle"}}}`,
			[]adapters.Event{{Harness: "opencode", Kind: adapters.KindIdle, Name: "session.status", SessionID: "s"}}},
		{"InfoIDFromSession", `{"type":"session.created","properties":{"sessionID":"s","info":{"id":5,"title":"t","time":{"created":"soon"}}}}`,
			[]adapters.Event{{Harness: "opencode", Kind: adapters.KindSessionStart, Name: "session.created", SessionID: "s", Title: "t"}}},
		{"SelfParent", `{"type":"session.created","properties":{"info":{"id":"s","parentID":"s","time":{"created":-5}}}}`,
			[]adapters.Event{{Harness: "opencode", Kind: adapters.KindSessionStart, Name: "session.created", SessionID: "s"}}},
		{"UpdatedWithoutUpdatedTime", `{"type":"session.updated","properties":{"info":{"id":"s","time":{"created":1000}}}}`,
			[]adapters.Event{{Harness: "opencode", Kind: adapters.KindSessionUpdate, Name: "session.updated", SessionID: "s", At: msTime(1000)}}},
		{"PartSessionFromProperties", `{"type":"message.part.updated","properties":{"sessionID":"s","part":{"id":"p","type":"text","text":"hi"}}}`,
			[]adapters.Event{{Harness: "opencode", Kind: adapters.KindTurns, Name: "message.part.updated", SessionID: "s",
				Turns: []adapters.Turn{{ID: "p", Role: "user", Text: "hi"}}}}},
		{"GlobalDirectoryNotPath", `{"directory":"global","payload":{"type":"session.idle","properties":{"sessionID":"s"}}}`,
			[]adapters.Event{{Harness: "opencode", Kind: adapters.KindIdle, Name: "session.idle", SessionID: "s"}}},
		{"GlobalDirectoryKeepsInfoDirectory", `{"directory":"/other","payload":{"type":"session.created","properties":{"info":{"id":"s","directory":"/d"}}}}`,
			[]adapters.Event{{Harness: "opencode", Kind: adapters.KindSessionStart, Name: "session.created", SessionID: "s", Cwd: "/d"}}},
		{"TypeBesidePayload", `{"type":"session.idle","properties":{"sessionID":"s"},"payload":{"type":"x"}}`,
			[]adapters.Event{{Harness: "opencode", Kind: adapters.KindIdle, Name: "session.idle", SessionID: "s"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := opencode.DecodeFrame([]byte(tt.frame))
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %s, %v; want %s", dump(got), err, dump(tt.want))
			}
		})
	}
}

func FuzzDecodeFrame(f *testing.F) {
	for _, path := range []string{parentChildCompact, globalStream} {
		for _, fr := range MustReadSSE(f, path) {
			f.Add(fr)
		}
	}
	for _, path := range MustGlob(f, "testdata/events/*.json") {
		if !strings.HasPrefix(filepath.Base(path), "http.") {
			f.Add(mustReadFile(f, path))
		}
	}
	for _, s := range []string{
		"", "null", "[]", `{}`, `{"type":5}`, `{"payload":{}}`, `{"payload":{"type":"sync","syncEvent":{"type":"session.idle.1","data":{"sessionID":"s"}}}}`,
		`{"type":"message.part.updated","properties":{"sessionID":"s","part":{"id":"p","type":"tool","tool":"task","callID":"c","state":{"status":"error","error":"Cancelled","output":"<task id=\"x\" state=\"error\"><task_error>e</task_error></task>"}}}}`,
		`{"type":"message.part.updated","properties":{"sessionID":"s","part":{"id":"p","type":"tool","tool":"x","state":{"status":"completed","input":{"filePath":"/a"},"output":"` + strings.Repeat("x", 5000) + `"}}}}`,
		"{\"type\":\"message.part.updated\",\"properties\":{\"sessionID\":\"s\",\"part\":{\"id\":\"p\",\"type\":\"text\",\"text\":\"bad \xff\"}}}",
		"{\"type\":\"session.created\",\"properties\":{\"info\":{\"id\":\"ses_\xff\"}}}",
		`{"type":"session.created","properties":{"info":{"id":"ses_c","parentID":"ses_\u0007"}}}`,
		`{"type":"message.part.updated","properties":{"sessionID":"s","part":{"id":"p","type":"tool","tool":"task","callID":"c\u0000","state":{"status":"running"}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := opencode.DecodeFrame(data)
		if err != nil {
			if !errors.Is(err, adapters.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			if evs != nil {
				t.Fatalf("events %v beside error %v", evs, err)
			}
			return
		}
		if _, err := opencode.DecodeHeader(data); err != nil {
			t.Fatalf("frame decodes but its header does not: %v", err)
		}
		again, _ := opencode.DecodeFrame(data)
		if !reflect.DeepEqual(evs, again) {
			t.Fatalf("not deterministic:\n%s\n%s", dump(evs), dump(again))
		}
		checkEvents(t, evs)
	})
}
