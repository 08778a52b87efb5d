package codex_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/codex"
)

func FuzzDecode(f *testing.F) {
	for _, s := range scenarios {
		for _, c := range MustReadHookStream(f, s) {
			f.Add([]byte(c.Payload))
		}
	}
	for _, body := range mustReadSamples(f) {
		f.Add([]byte(body))
	}
	for _, s := range []string{
		"", "null", "[]", "42", `"x"`, `{}`, `{"hook_event_name":5}`, `{"hook_event_name":"Stop"}`,
		`{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"spawn_agent","tool_response":"oops"}`,
		`{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"multi_agent_v1.spawn_agent","tool_response":{"agent_id":"a"}}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"spawn_agent","tool_input":{"items":[{"type":"text","text":"t"}]}}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"apply_patch","tool_input":{"input":"*** Add File: a.go\n*** Move to: b.go"}}`,
		`{"hook_event_name":"SubagentStop","session_id":"s","agent_id":"a","agent_transcript_path":"/t","last_assistant_message":"m"}`,
		`{"hook_event_name":"Notification","agent_id":"a"}`,
		"{\"hook_event_name\":\"SubagentStart\",\"session_id\":\"s\xff\",\"agent_id\":\"a\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a := codex.Adapter{}
		ev, err := a.Decode(body)
		if err != nil {
			if !errors.Is(err, adapters.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if ev.Harness != "codex" || ev.Name == "" || ev.Kind == "" {
			t.Fatalf("decoded %+v: Harness, Name and Kind must be set", ev)
		}
		ids := []string{ev.SessionID, ev.AgentID, ev.ParentSessionID}
		if ev.Spawn != nil {
			ids = append(ids, ev.Spawn.ToolUseID, ev.Spawn.ChildSessionID)
		}
		if ev.Result != nil {
			ids = append(ids, ev.Result.AgentID)
		}
		for _, id := range ids {
			if why := adapters.IDProblem(id); why != "" {
				t.Fatalf("decoded id %q: %s", id, why)
			}
		}
		if ev.Kind != adapters.KindUnknown && ev.SessionID == "" {
			t.Fatalf("kind %s without SessionID", ev.Kind)
		}
		if ev.AgentID != "" && ev.TranscriptPath != "" {
			t.Fatalf("agent %q's event names a TranscriptPath %q", ev.AgentID, ev.TranscriptPath)
		}
		if (ev.Kind == adapters.KindSpawn || ev.Kind == adapters.KindSpawnResult) != (ev.Spawn != nil) {
			t.Fatalf("kind %s with Spawn %+v", ev.Kind, ev.Spawn)
		}
		if ev.Spawn != nil && utf8.RuneCountInString(ev.Spawn.Description) > 81 {
			t.Fatalf("Description of %d runes", utf8.RuneCountInString(ev.Spawn.Description))
		}
		for _, c := range []string{"ctx", "bad \xff \"q\"\n<x>&", string(body), ""} {
			b := a.Reply(ev, adapters.Answer{Context: c, Deny: c})
			if !json.Valid(b) {
				t.Fatalf("Reply(%+v, %q) = %q: not valid JSON", ev, c, b)
			}
			if c == "" && string(b) != "{}" {
				t.Fatalf("Reply with an empty answer = %s, want {}", b)
			}
		}
	})
}

func FuzzParseTranscript(f *testing.F) {
	for _, path := range rolloutFiles(f) {
		raw := mustReadFile(f, path)
		f.Add(raw, true, uint16(len(raw)/2))
		for line := range bytes.Lines(raw) {
			f.Add(line, false, uint16(len(line)/3))
		}
	}
	f.Add([]byte("\n\n{\"type\":\"response_item\"\r\nnot json\n{}"), true, uint16(3))
	f.Add([]byte(`{"ordinal":1,"type":"compacted","payload":{"message":"s"}}`), true, uint16(9))
	f.Fuzz(func(t *testing.T, data []byte, atEOF bool, split uint16) {
		a := codex.Adapter{}
		turns, n := a.ParseTranscript(data, atEOF)
		if n < 0 || n > len(data) {
			t.Fatalf("consumed %d of %d", n, len(data))
		}
		if atEOF && n != len(data) {
			t.Fatalf("at EOF consumed %d of %d", n, len(data))
		}
		if !atEOF {
			if n > 0 && data[n-1] != '\n' {
				t.Fatalf("consumed %d: not at a line end", n)
			}
			if bytes.IndexByte(data[n:], '\n') >= 0 {
				t.Fatalf("left a complete line unconsumed")
			}
		}
		for _, tr := range turns {
			if tr.ID == "" || !slices.Contains([]string{"user", "assistant", "tool", "system"}, tr.Role) {
				t.Fatalf("bad turn %+v", tr)
			}
			if !utf8.ValidString(tr.Text) {
				t.Fatalf("turn text is not valid UTF-8: %q", tr.Text)
			}
			if tr.Role == "tool" && len(tr.Text) > codex.MaxToolText+64 {
				t.Fatalf("tool text of %d bytes exceeds the bound", len(tr.Text))
			}
		}
		// Two calls, split anywhere, yield the same turns as one.
		whole, _ := a.ParseTranscript(data, true)
		cut := int(split) % (len(data) + 1)
		first, m := a.ParseTranscript(data[:cut], false)
		rest, _ := a.ParseTranscript(data[m:], true)
		if got := append(first, rest...); !(len(got) == 0 && len(whole) == 0) && !reflect.DeepEqual(got, whole) {
			t.Fatalf("split at %d: %+v, want %+v", cut, got, whole)
		}
	})
}

func FuzzParseSubagentMeta(f *testing.F) {
	for _, path := range rolloutFiles(f) {
		line := firstLine(mustReadFile(f, path))
		f.Add(line)
		f.Add(line[:len(line)/2])
	}
	for _, s := range []string{
		"", "null", "[]", `{"type":"session_meta"}`, `{"type":"session_meta","payload":{"parent_thread_id":"p\u0001"}}`,
		`{"type":"session_meta","payload":{"source":{"subagent":{"thread_spawn":{"parent_thread_id":"p","depth":-1}}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := codex.Adapter{}.ParseSubagentMeta(b)
		if err != nil {
			if !errors.Is(err, adapters.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if why := adapters.IDProblem(m.ParentID); why != "" {
			t.Fatalf("ParentID %q: %s", m.ParentID, why)
		}
		if m.AgentType == "" {
			t.Fatalf("no AgentType in %+v", m)
		}
		// Only the first line counts.
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			if again, err := (codex.Adapter{}).ParseSubagentMeta(b[:i]); err != nil || again != m {
				t.Fatalf("first line alone: %+v, %v; want %+v", again, err, m)
			}
		}
	})
}
