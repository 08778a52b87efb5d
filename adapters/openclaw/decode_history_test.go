package openclaw_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
)

// The chat.history recording of OpenClaw 2026.9.6 in testdata/live: session clawHistKey ran
// three turns (a reply, a read tool call and its reply, then, after sessions.compact, another
// reply); chat.history.res.json is the Gateway's answer to chat.history {sessionKey, limit: 200}
// afterwards, chat.history.stream.events.json the session.message and session.tool events a
// subscribed client received for the session while it ran.
const (
	clawHistKey     = "agent:main:hist"
	clawHistRes     = "testdata/live/chat.history.res.json"
	clawHistStream  = "testdata/live/chat.history.stream.events.json"
	clawHistCompact = "bfa42c02-66d6-4eb1-97b9-de4d5ddcac89" // the compaction boundary row's id
)

func clawHistory(t *testing.T) []adapters.Turn {
	t.Helper()
	f := clawReadFrame(t, clawHistRes)
	evs, err := openclaw.DecodeChatHistory(clawHistKey, f.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("got %d events, want 1: %+v", len(evs), evs)
	}
	ev := evs[0]
	if ev.Kind != adapters.KindTurns || ev.Name != openclaw.NameChatHistory || ev.SessionID != clawHistKey ||
		ev.Harness != openclaw.Harness || ev.Scope != "main" || ev.At.IsZero() {
		t.Errorf("event: got %+v", ev)
	}
	return ev.Turns
}

func TestDecodeChatHistory_Live(t *testing.T) {
	turns := clawHistory(t)
	var got []string
	for _, tr := range turns {
		got = append(got, tr.Role+" "+tr.Tool+" "+strings.SplitN(tr.Text, "\n", 2)[0])
		if tr.ID == clawHistCompact {
			t.Errorf("the compaction boundary made a turn: %+v", tr)
		}
		if tr.At.IsZero() {
			t.Errorf("turn %s without a time", tr.ID)
		}
	}
	want := []string{
		"user  FIRST-PROMPT",
		"assistant  REPLY-TO-[Sun 2026-11-22 07:11 UTC] FIRST-PROMPT",
		"user  TOOL-PROMPT read the file",
		`assistant read [tool call] read {"path":"AGENTS.md"}`,
		"tool read # AGENTS.md - Your Workspace",
		"assistant  REPLY-TO-[Sun 2026-11-22 07:12 UTC] TOOL-PROMPT read the file",
		"user  AFTER-COMPACT",
		"assistant  REPLY-TO-[Sun 2026-11-22 07:12 UTC] AFTER-COMPACT",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("turns:\n got %q\nwant %q", got, want)
	}
}

// TestDecodeChatHistory_MatchesStream: every turn of the history is the turn the stream gave the
// same record live (same id, role, tool and text), so a replay of the history upserts in place;
// the stream's only turn the history has no counterpart for is the tool call's start.
func TestDecodeChatHistory_MatchesStream(t *testing.T) {
	b, err := os.ReadFile(clawHistStream)
	if err != nil {
		t.Fatal(err)
	}
	var frames []openclaw.Frame
	if err := json.Unmarshal(b, &frames); err != nil {
		t.Fatal(err)
	}
	live := map[string]adapters.Turn{}
	var starts int
	for i, f := range frames {
		evs, err := openclaw.DecodeEvent(f.Event, f.Payload)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		for _, ev := range evs {
			for _, tr := range ev.Turns {
				if strings.HasSuffix(tr.ID, ":start") {
					starts++
					continue
				}
				live[tr.ID] = tr
			}
		}
	}
	if starts != 1 || len(live) != 8 {
		t.Fatalf("stream: %d start turns and %d others, want 1 and 8", starts, len(live))
	}
	hist := clawHistory(t)
	if len(hist) != len(live) {
		t.Errorf("history has %d turns, the stream %d", len(hist), len(live))
	}
	for _, h := range hist {
		l, ok := live[h.ID]
		if !ok {
			t.Errorf("history turn %s (%s %q) not in the stream", h.ID, h.Role, h.Text)
			continue
		}
		if h.Role != l.Role || h.Tool != l.Tool || h.Text != l.Text || !reflect.DeepEqual(h.Files, l.Files) {
			t.Errorf("turn %s:\nhistory %+v\n stream %+v", h.ID, h, l)
		}
	}
}

func TestDecodeChatHistory_Rows(t *testing.T) {
	const key = "agent:main:main"
	res := `{"sessionKey":"agent:main:main","messages":[
		{"role":"user","content":"hello","timestamp":1000,"__openclaw":{"id":"u1","seq":1}},
		{"role":"assistant","content":[{"type":"text","text":"part one"}],"timestamp":2000,"__openclaw":{"id":"a1","seq":2}},
		{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"/w/a.go"}}],"timestamp":2001,"__openclaw":{"id":"a1","seq":2}},
		{"role":"system","content":[{"type":"text","text":"Compaction"}],"__openclaw":{"kind":"compaction","id":"k1","seq":3}},
		{"role":"system","content":[{"type":"text","text":"Reset"}],"__openclaw":{"kind":"reset","id":"r1","seq":4}},
		{"role":"assistant","content":[{"type":"text","text":"[chat.history omitted: message too large]"}],"__openclaw":{"id":"big","seq":5,"truncated":true,"reason":"oversized"}},
		{"role":"assistant","content":[{"type":"text","text":"no id"}]},
		{"role":"user","content":"by key","idempotencyKey":"idem:user"},
		"not an object",
		{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"file body"}],"__openclaw":{"id":"t1","seq":6}},
		{"role":"custom","display":false,"content":"hidden","__openclaw":{"id":"h1","seq":7}}
	],"hasMore":true,"nextOffset":11}`
	evs, err := openclaw.DecodeChatHistory(key, json.RawMessage(res))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("got %d events", len(evs))
	}
	var got []string
	for _, tr := range evs[0].Turns {
		got = append(got, tr.ID+"|"+tr.Role+"|"+tr.Tool+"|"+tr.Text+"|"+strings.Join(tr.Files, ","))
	}
	want := []string{
		"u1|user||hello|",
		// Siblings of one record make one turn: the first's role, their texts joined.
		"a1|assistant|read|part one\n[tool call] read {\"path\":\"/w/a.go\"}|/w/a.go",
		"idem:user|user||by key|",
		"c1:result|tool|read|file body|",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("turns:\n got %q\nwant %q", got, want)
	}
	if at := evs[0].Turns[1].At.UnixMilli(); at != 2000 {
		t.Errorf("merged turn's time: got %d, want the first sibling's 2000", at)
	}
}

func TestDecodeChatHistory_Empty(t *testing.T) {
	for _, res := range []string{
		`{"sessionKey":"agent:main:nope","messages":[],"hasMore":false,"totalMessages":0}`,
		`{"messages":[{"role":"system","content":"Compaction","__openclaw":{"kind":"compaction","id":"k"}}]}`,
	} {
		evs, err := openclaw.DecodeChatHistory("agent:main:nope", json.RawMessage(res))
		if err != nil || len(evs) != 0 {
			t.Errorf("%s: got %+v, %v; want nothing", res, evs, err)
		}
	}
}

func TestDecodeChatHistory_Malformed(t *testing.T) {
	for _, tc := range []struct{ key, res string }{
		{"agent:main:main", `[]`},
		{"agent:main:main", `{"messages":{}}`},
		{"agent:main:main", `{"sessionKey":"agent:main:main"}`},
		{"agent:main:main", `{"messages":null}`},
		{"", `{"messages":[]}`},
	} {
		if _, err := openclaw.DecodeChatHistory(tc.key, json.RawMessage(tc.res)); !errors.Is(err, adapters.ErrMalformed) {
			t.Errorf("%q %s: got %v, want ErrMalformed", tc.key, tc.res, err)
		}
	}
}
