package claudecode_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
)

func FuzzDecode(f *testing.F) {
	for _, path := range hookStreams {
		for _, c := range MustReadHookStream(f, path) {
			f.Add([]byte(c.Payload))
		}
	}
	for _, s := range []string{
		"", "null", "[]", "42", `"x"`, `{}`, `{"hook_event_name":5}`, `{"hook_event_name":"Stop"}`,
		`{"hook_event_name":"PostToolUse","session_id":"5e550000-0000-4000-8000-000000000001","tool_name":"Agent","tool_response":"oops"}`,
		`{"hook_event_name":"PostToolUseFailure","session_id":"5e550000-0000-4000-8000-000000000001","tool_name":"Task","error":"e","is_interrupt":true}`,
		`{"hook_event_name":"PreToolUse","session_id":"5e550000-0000-4000-8000-000000000001","tool_name":"Read","tool_input":{"file_path":"/a","path":"b"}}`,
		"{\"hook_event_name\":\"SubagentStart\",\"session_id\":\"s\xff\",\"agent_id\":\"a\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a := claudecode.Adapter{}
		ev, err := a.Decode(body)
		if err != nil {
			if !errors.Is(err, adapters.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if ev.Harness != "claude-code" || ev.Name == "" || ev.Kind == "" {
			t.Fatalf("decoded %+v: Harness, Name and Kind must be set", ev)
		}
		// A SubagentStart may come without its session: the engine infers the top-level
		// session then (the fuzzer's find: encoding/json also takes "hook_event_nAme").
		if err := adapters.CheckIDs(ev); err != nil {
			t.Fatalf("decoded an id no record may have: %v", err)
		}
		if ev.SessionID != "" && !claudecode.IsSessionID(ev.SessionID) {
			t.Fatalf("decoded a session_id that is no UUID: %q", ev.SessionID)
		}
		if ev.Kind != adapters.KindUnknown && ev.Kind != adapters.KindSubagentStart && ev.SessionID == "" {
			t.Fatalf("kind %s without SessionID", ev.Kind)
		}
		for _, c := range []string{"ctx", "bad \xff \"q\"\n<x>", ""} {
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
	for _, path := range transcriptFiles(f) {
		raw := mustReadFile(f, path)
		f.Add(raw, true, uint16(len(raw)/2))
		for line := range bytes.Lines(raw) {
			f.Add(line, false, uint16(len(line)/3))
		}
	}
	f.Add([]byte("\n\n{\"type\":\"user\"\r\nnot json\n{}"), true, uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, atEOF bool, split uint16) {
		a := claudecode.Adapter{}
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
			if tr.Role == "tool" && len(tr.Text) > claudecode.MaxToolText+64 {
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
