package opencode_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

func TestDecodeSessionList(t *testing.T) {
	t.Run("Children", func(t *testing.T) {
		got, err := opencode.DecodeSessionList(mustReadFile(t, childrenList))
		if err != nil {
			t.Fatal(err)
		}
		want := []adapters.Event{{Harness: "opencode", Kind: adapters.KindSessionStart, Name: opencode.NameSessionList,
			SessionID: globalChild, ParentSessionID: globalParent, Title: "Research meaning of life (@general subagent)",
			AgentName: "general", Cwd: projectDir, At: msTime(1795314582007)}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %s, want %s", dump(got), dump(want))
		}
	})
	// A session listed from REST is the session the stream's session.created described.
	t.Run("SameAsStream", func(t *testing.T) {
		got, err := opencode.DecodeSessionList(mustReadFile(t, childrenList))
		if err != nil {
			t.Fatal(err)
		}
		created, err := opencode.DecodeFrame(mustReadFile(t, "testdata/events/session-created.child-task.json"))
		if err != nil {
			t.Fatal(err)
		}
		got[0].Name = created[0].Name
		if !reflect.DeepEqual(got, created) {
			t.Fatalf("listed %s, created %s", dump(got), dump(created))
		}
	})
	t.Run("ParentsFirst", func(t *testing.T) {
		list := `[
			{"id":"grandchild","parentID":"child","time":{"created":3}},
			{"id":"other","time":{"created":9}},
			{"id":"child","parentID":"root","time":{"created":2}},
			{"id":"orphan","parentID":"gone"},
			{"id":"root","time":{"created":1}},
			{"id":"loop1","parentID":"loop2"},
			{"id":"loop2","parentID":"loop1"}
		]`
		got, err := opencode.DecodeSessionList([]byte(list))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, ev := range got {
			ids = append(ids, ev.SessionID)
		}
		if want := []string{"other", "orphan", "root", "child", "grandchild", "loop1", "loop2"}; !slices.Equal(ids, want) {
			t.Fatalf("order %v, want %v", ids, want)
		}
	})
	t.Run("SkipsOddElements", func(t *testing.T) {
		got, err := opencode.DecodeSessionList([]byte(`[1, null, "x", {}, {"id":7}, {"id":"a","title":["t"]}]`))
		if err != nil || len(got) != 1 || got[0].SessionID != "a" || got[0].Title != "" {
			t.Fatalf("got %s, %v; want only session a", dump(got), err)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		got, err := opencode.DecodeSessionList([]byte(" [ ] "))
		if err != nil || len(got) != 0 {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	for _, body := range []string{"", "null", "{}", `{"sessions":[]}`, "[", `[{"id":"a"},]`, `"[]"`} {
		t.Run("Malformed", func(t *testing.T) {
			if got, err := opencode.DecodeSessionList([]byte(body)); !errors.Is(err, adapters.ErrMalformed) || got != nil {
				t.Fatalf("%q: got %v, %v; want an error wrapping ErrMalformed", body, got, err)
			}
		})
	}
}

func TestDecodeMessages(t *testing.T) {
	got, err := opencode.DecodeMessages(globalChild, mustReadFile(t, childMessages))
	if err != nil {
		t.Fatal(err)
	}
	want := []adapters.Event{{Harness: "opencode", Kind: adapters.KindTurns, Name: opencode.NameMessages,
		SessionID: globalChild, At: msTime(1795314582017), Turns: []adapters.Turn{
			{ID: "prt_201168205001ac0uX6uCPpjdFX", Role: "user", Text: "Find the meaning of life and report a one-line answer."},
			{ID: "prt_20116827b001VE0YlmDj8533Ke", Role: "assistant", Text: "The meaning of life is 42.", At: msTime(1795314582139)},
			// The compaction summary; the compaction part and the synthetic "Continue…" are no turns.
			{ID: "prt_20116849c001cvEDivhUqyPouh", Role: "assistant", At: msTime(1795314582684),
				Text: "## Goal\n- Research the meaning of life for the parent task\n\n## Constraints & Preferences\n- (none)\n\n## Progress\n### Done\n- Found the answer: 42\n\n### In Progress\n- (none)\n\n### Blocked\n- (none)\n\n## Key Decisions\n- (none)\n\n## Next Steps\n- Report back to parent\n\n## Critical Context\n- (none)\n\n## Relevant Files\n- (none)"},
			{ID: "prt_201168db00017GCEhGGPTB5NuV", Role: "assistant", Text: "Nothing left to do; the answer remains 42.", At: msTime(1795314585008)},
		}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %s\nwant %s", dump(got), dump(want))
	}
}

// messagesOf rebuilds what GET /session/{id}/message would answer for each session at the end of
// a recorded stream: every message in first-seen order with its latest info and its parts at
// their latest version.
func messagesOf(t *testing.T, frames [][]byte) map[string][]byte {
	t.Helper()
	type message struct {
		Info  json.RawMessage   `json:"info"`
		Parts []json.RawMessage `json:"parts"`
	}
	var order []string
	msgs := map[string]*message{}
	session := map[string]string{}
	partAt := map[string]int{}
	get := func(id string) *message {
		if m, ok := msgs[id]; ok {
			return m
		}
		msgs[id] = &message{}
		order = append(order, id)
		return msgs[id]
	}
	for _, f := range frames {
		var fr struct {
			opencode.Frame
			Payload *opencode.Frame `json:"payload"`
		}
		if err := json.Unmarshal(f, &fr); err != nil {
			t.Fatal(err)
		}
		if fr.Payload != nil {
			fr.Frame = *fr.Payload
		}
		var p struct {
			Info json.RawMessage `json:"info"`
			Part json.RawMessage `json:"part"`
		}
		switch fr.Type {
		case opencode.EventMessageUpdated:
			var info opencode.MessageInfo
			if err := json.Unmarshal(fr.Properties, &p); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(p.Info, &info); err != nil {
				t.Fatal(err)
			}
			get(info.ID).Info, session[info.ID] = p.Info, info.SessionID
		case opencode.EventPartUpdated:
			if err := json.Unmarshal(fr.Properties, &p); err != nil {
				t.Fatal(err)
			}
			var part struct{ ID, MessageID string }
			if err := json.Unmarshal(p.Part, &part); err != nil {
				t.Fatal(err)
			}
			m := get(part.MessageID)
			if i, ok := partAt[part.ID]; ok {
				m.Parts[i] = p.Part
				continue
			}
			partAt[part.ID] = len(m.Parts)
			m.Parts = append(m.Parts, p.Part)
		}
	}
	bySession := map[string][]message{}
	for _, id := range order {
		if msgs[id].Info == nil {
			t.Fatalf("message %s: parts without message.updated", id)
		}
		bySession[session[id]] = append(bySession[session[id]], *msgs[id])
	}
	out := map[string][]byte{}
	for s, ms := range bySession {
		b, err := json.Marshal(ms)
		if err != nil {
			t.Fatal(err)
		}
		out[s] = b
	}
	return out
}

// A resync over REST yields the turns the stream gave, with the same ids, roles, text and
// times, and the spawn state the stream ended with: replaying one over the other changes
// nothing. Here the role comes from each message, there it was inferred from each part.
func TestDecodeMessages_MatchesStream(t *testing.T) {
	for _, path := range []string{parentChildCompact, globalStream} {
		t.Run(path, func(t *testing.T) {
			frames := MustReadSSE(t, path)
			stream := MustDecodeStream(t, path)
			streamTurns := finalTurns(stream)
			replies := messagesOf(t, frames)
			if len(replies) != 2 {
				t.Fatalf("messages of %d sessions, want 2", len(replies))
			}
			for session, reply := range replies {
				evs, err := opencode.DecodeMessages(session, reply)
				if err != nil {
					t.Fatal(err)
				}
				checkEvents(t, evs)
				if got := finalTurns(evs)[session]; !reflect.DeepEqual(got, streamTurns[session]) {
					t.Errorf("%s: resync turns\n%+v\nstream turns\n%+v", session, got, streamTurns[session])
				}
				if evs[0].Kind != adapters.KindTurns || evs[0].Name != opencode.NameMessages {
					t.Errorf("%s: first event %s %s, want the turns", session, evs[0].Kind, evs[0].Name)
				}
				// The spawn events: the stream's last one per call, modulo the name and the
				// directory a /global/event frame adds.
				last := map[string]adapters.Event{}
				for _, ev := range stream {
					if ev.SessionID == session && ev.Spawn != nil {
						ev.Name, ev.Cwd = opencode.NameMessages, ""
						last[ev.Spawn.ToolUseID] = ev
					}
				}
				var spawns []adapters.Event
				for _, ev := range evs[1:] {
					spawns = append(spawns, ev)
					if want := last[ev.Spawn.ToolUseID]; !reflect.DeepEqual(ev, want) {
						t.Errorf("%s: resync spawn %s\nstream's last %s", session, dump([]adapters.Event{ev}), dump([]adapters.Event{want}))
					}
				}
				if len(spawns) != len(last) {
					t.Errorf("%s: %d spawn events, want %d", session, len(spawns), len(last))
				}
			}
		})
	}
}

func TestDecodeMessages_Roles(t *testing.T) {
	// The message says the role, whatever the part's shape.
	body := `[
		{"info":{"id":"m1","role":"assistant","time":{"created":100}},"parts":[{"id":"a","type":"text","text":"untimed answer"}]},
		{"info":{"id":"m2","role":"user"},"parts":[{"id":"b","type":"text","text":"timed prompt","time":{"start":5}}]},
		{"info":{"id":"m3","role":"system"},"parts":[{"id":"c","type":"text","text":"odd role, inferred"}]},
		{"info":"x","parts":[{"id":"d","type":"text","text":"no info"}]},
		{"parts":[{"type":"text","text":"no id"},7,{"id":"e","type":"step-start"}]},
		3
	]`
	got, err := opencode.DecodeMessages("s", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []adapters.Event{{Harness: "opencode", Kind: adapters.KindTurns, Name: opencode.NameMessages, SessionID: "s",
		At: msTime(100), Turns: []adapters.Turn{
			{ID: "a", Role: "assistant", Text: "untimed answer"},
			{ID: "b", Role: "user", Text: "timed prompt", At: msTime(5)},
			{ID: "c", Role: "user", Text: "odd role, inferred"},
			{ID: "d", Role: "user", Text: "no info"},
		}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %s\nwant %s", dump(got), dump(want))
	}
}

func TestDecodeMessages_OnlySpawns(t *testing.T) {
	body := `[{"info":{"id":"m","role":"assistant","time":{"created":100}},"parts":[
		{"id":"p","type":"tool","tool":"task","callID":"c1","state":{"status":"pending","input":{}}}]}]`
	got, err := opencode.DecodeMessages("s", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Kind != adapters.KindTurns || got[1].Kind != adapters.KindSpawn || !got[1].At.Equal(msTime(100)) {
		t.Fatalf("got %s", dump(got))
	}
	got, err = opencode.DecodeMessages("s", []byte(`[{"info":{"id":"m","role":"user"},"parts":[{"id":"p","type":"compaction"}]}]`))
	if err != nil || len(got) != 0 {
		t.Fatalf("got %s, %v; want no events", dump(got), err)
	}
}

func TestDecodeMessages_Malformed(t *testing.T) {
	tests := []struct{ name, session, body string }{
		{"NoSession", "", `[]`},
		{"Empty", "s", ""},
		{"Null", "s", "null"},
		{"Object", "s", `{"info":{},"parts":[]}`},
		{"Truncated", "s", `[{"info":{}`},
		{"Trailing", "s", `[] []`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := opencode.DecodeMessages(tt.session, []byte(tt.body)); !errors.Is(err, adapters.ErrMalformed) || got != nil {
				t.Fatalf("got %v, %v; want an error wrapping ErrMalformed", got, err)
			}
		})
	}
}

func FuzzDecodeMessages(f *testing.F) {
	f.Add(globalChild, mustReadFile(f, childMessages))
	f.Add("s", mustReadFile(f, childrenList))
	f.Add("s", []byte(`[{"info":{"role":"assistant"},"parts":[{"id":"p","type":"tool","tool":"task","callID":"c","state":{"status":"completed","output":"<task id=\"x\"><task_result>r</task_result></task>"}}]}]`))
	f.Add("", []byte(`[]`))
	f.Add("s", []byte(`[{"info":null,"parts":null},{"parts":[{"id":"p","type":"text","text":"\u0000"}]}]`))
	f.Fuzz(func(t *testing.T, session string, body []byte) {
		evs, err := opencode.DecodeMessages(session, body)
		if err != nil {
			if !errors.Is(err, adapters.ErrMalformed) || evs != nil {
				t.Fatalf("got %v, %v: an error must wrap ErrMalformed and come alone", evs, err)
			}
			return
		}
		checkEvents(t, evs)
		for i, ev := range evs {
			if ev.SessionID != session || ev.Name != opencode.NameMessages || (i > 0 && ev.Kind == adapters.KindTurns) {
				t.Fatalf("event %d: %+v", i, ev)
			}
		}
		if list, err := opencode.DecodeSessionList(body); err == nil {
			checkEvents(t, list)
		}
	})
}
