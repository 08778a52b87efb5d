package claudecode_test

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
)

func parseAll(t testing.TB, b []byte) []adapters.Turn {
	t.Helper()
	turns, n := claudecode.Adapter{}.ParseTranscript(b, true)
	if n != len(b) {
		t.Fatalf("consumed %d of %d bytes at EOF", n, len(b))
	}
	return turns
}

func roleCounts(turns []adapters.Turn) map[string]int {
	m := map[string]int{}
	for _, t := range turns {
		m[t.Role]++
	}
	return m
}

func TestParseTranscript_Fixtures(t *testing.T) {
	want := map[string]map[string]int{
		"testdata/transcripts/f50b1ca6-1b5a-49ea-8f83-7a6785e3b132.jsonl":                                   {"user": 2, "assistant": 2, "tool": 1, "system": 1},
		"testdata/transcripts/f50b1ca6-1b5a-49ea-8f83-7a6785e3b132/subagents/agent-a1ba2876fa63b44e9.jsonl": {"user": 1, "assistant": 1},
		"testdata/transcripts/49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7.jsonl":                                   {"user": 1, "assistant": 3, "tool": 2},
		"testdata/transcripts/49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7/subagents/agent-a02df2ef9ee472336.jsonl": {"user": 1, "assistant": 1},
		"testdata/transcripts/49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7/subagents/agent-a73685d8901dc53f2.jsonl": {"user": 1, "assistant": 1},
	}
	files := transcriptFiles(t)
	if len(files) != len(want) {
		t.Fatalf("%d transcripts, want %d: %v", len(files), len(want), files)
	}
	for _, path := range files {
		raw := mustReadFile(t, path)
		if !strings.Contains(string(raw), "PROBE-") {
			t.Fatalf("%s: no PROBE- marker in the recording; the check below would prove nothing", path)
		}
		turns := parseAll(t, raw)
		if got := roleCounts(turns); !reflect.DeepEqual(got, want[path]) {
			t.Errorf("%s: roles %v, want %v", path, got, want[path])
		}
		seen := map[string]bool{}
		for _, tr := range turns {
			if strings.Contains(tr.Text, "PROBE-") {
				t.Errorf("%s: turn %s carries injected hook context: %q", path, tr.ID, tr.Text)
			}
			if tr.ID == "" || seen[tr.ID] {
				t.Errorf("%s: turn ID %q empty or repeated", path, tr.ID)
			}
			seen[tr.ID] = true
			if tr.At.IsZero() {
				t.Errorf("%s: turn %s has no time", path, tr.ID)
			}
		}
	}
}

func TestParseTranscript_CompactedSession(t *testing.T) {
	turns := parseAll(t, mustReadFile(t, "testdata/transcripts/f50b1ca6-1b5a-49ea-8f83-7a6785e3b132.jsonl"))
	type brief struct{ Role, Text, Tool string }
	var got []brief
	for _, tr := range turns {
		text := tr.Text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		}
		got = append(got, brief{tr.Role, text, tr.Tool})
	}
	want := []brief{
		{"user", "SPAWN-PLEASE do the research", ""},
		{"assistant", "", "Agent"},
		{"tool", "Child result: the answer is 42.", "Agent"},
		{"assistant", "Parent finished after the sub-agent reported back.", ""},
		{"system", "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.", ""},
		{"user", "/compact keep the parser objective", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("turns\n got %q\nwant %q", got, want)
	}
	if turns[0].ID != "a52104bb-73bb-4fee-9680-f3701b2eed26" {
		t.Errorf("first ID = %q", turns[0].ID)
	}
	if want := time.Date(2026, 11, 22, 2, 27, 30, 491e6, time.UTC); !turns[0].At.Equal(want) {
		t.Errorf("first At = %v, want %v", turns[0].At, want)
	}
}

// Parsing a file in random pieces, keeping the unconsumed rest for the next call, yields the
// same turns as one parse of the whole file.
func TestParseTranscript_Chunked(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, path := range transcriptFiles(t) {
		raw := mustReadFile(t, path)
		// Also a copy whose last line has no newline, to exercise the atEOF tail.
		for _, data := range [][]byte{raw, []byte(strings.TrimSuffix(string(raw), "\n"))} {
			whole := parseAll(t, data)
			for range 20 {
				got := parseChunked(t, data, rng)
				if !reflect.DeepEqual(got, whole) {
					t.Fatalf("%s: chunked parse differs from whole parse\n got %+v\nwant %+v", path, got, whole)
				}
			}
		}
	}
}

func parseChunked(t *testing.T, data []byte, rng *rand.Rand) []adapters.Turn {
	t.Helper()
	var turns []adapters.Turn
	var buf []byte
	for off := 0; off < len(data); {
		n := min(1+rng.IntN(2048), len(data)-off)
		buf = append(buf, data[off:off+n]...)
		off += n
		got, consumed := claudecode.Adapter{}.ParseTranscript(buf, false)
		if consumed < 0 || consumed > len(buf) {
			t.Fatalf("consumed %d of %d", consumed, len(buf))
		}
		turns = append(turns, got...)
		buf = slices.Clone(buf[consumed:])
	}
	got, consumed := claudecode.Adapter{}.ParseTranscript(buf, true)
	if consumed != len(buf) {
		t.Fatalf("at EOF consumed %d of %d", consumed, len(buf))
	}
	return append(turns, got...)
}

func TestParseTranscript_PartialLine(t *testing.T) {
	line := `{"type":"user","uuid":"u1","timestamp":"2026-01-02T03:04:05Z","message":{"role":"user","content":"hi"}}`
	turns, n := claudecode.Adapter{}.ParseTranscript([]byte(line), false)
	if len(turns) != 0 || n != 0 {
		t.Fatalf("partial line: %d turns, consumed %d; want 0, 0", len(turns), n)
	}
	turns, n = claudecode.Adapter{}.ParseTranscript([]byte(line+"\n"+line[:20]), false)
	if len(turns) != 1 || n != len(line)+1 {
		t.Fatalf("line + partial: %d turns, consumed %d; want 1, %d", len(turns), n, len(line)+1)
	}
	turns, n = claudecode.Adapter{}.ParseTranscript([]byte(line), true)
	if len(turns) != 1 || n != len(line) || turns[0].Text != "hi" {
		t.Fatalf("at EOF: %+v, consumed %d", turns, n)
	}
	if turns, n := (claudecode.Adapter{}).ParseTranscript(nil, true); len(turns) != 0 || n != 0 {
		t.Fatalf("empty: %d turns, consumed %d", len(turns), n)
	}
}

func TestParseTranscript_Records(t *testing.T) {
	const ts = `"timestamp":"2026-01-02T03:04:05.5Z"`
	tests := []struct {
		name string
		line string
		want *adapters.Turn // nil: no turn
	}{
		{"UserString", `{"type":"user","uuid":"u",` + ts + `,"message":{"role":"user","content":"fix the lexer"}}`,
			&adapters.Turn{ID: "u", Role: "user", Text: "fix the lexer"}},
		{"UserBlocks", `{"type":"user","uuid":"u","message":{"content":[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"<system-reminder>injected</system-reminder>"},{"type":"text","text":"b"}]}}`,
			&adapters.Turn{ID: "u", Role: "user", Text: "a\nb"}},
		{"SlashCommand", `{"type":"user","uuid":"u","message":{"content":"<command-name>/review</command-name>\n<command-message>review</command-message>\n<command-args></command-args>"}}`,
			&adapters.Turn{ID: "u", Role: "user", Text: "/review"}},
		{"ToolResultString", `{"type":"user","uuid":"u","toolUseResult":{"type":"text","file":{"filePath":"/src/a.go","content":"x"}},"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"package a"}]}}`,
			&adapters.Turn{ID: "u", Role: "tool", Text: "package a", Files: []string{"/src/a.go"}}},
		{"ToolResultError", `{"type":"user","uuid":"u","toolUseResult":"Error: boom","message":{"content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":"boom"},{"type":"text","text":"also"}]}}`,
			&adapters.Turn{ID: "u", Role: "tool", Text: "boom"}},
		{"AssistantMixed", `{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"thinking","thinking":"secret"},{"type":"text","text":"Reading."},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a"}},{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"/b","old_string":"x"}}]}}`,
			&adapters.Turn{ID: "a", Role: "assistant", Text: "Reading.", Tool: "Read", Files: []string{"/a", "/b"}}},
		{"AssistantThinkingOnly", `{"type":"assistant","uuid":"a","message":{"content":[{"type":"thinking","thinking":"hm"}]}}`, nil},
		{"AssistantAPIError", `{"type":"assistant","uuid":"a","isApiErrorMessage":true,"message":{"content":[{"type":"text","text":"API Error: 500"}]}}`, nil},
		{"Meta", `{"type":"user","uuid":"u","isMeta":true,"message":{"content":"<local-command-caveat>x</local-command-caveat>"}}`, nil},
		{"LocalCommandOutput", `{"type":"user","uuid":"u","message":{"content":"<local-command-stdout>Compacted</local-command-stdout>"}}`, nil},
		{"Reminder", `{"type":"user","uuid":"u","message":{"content":"<system-reminder>PROBE-x</system-reminder>"}}`, nil},
		{"Attachment", `{"type":"attachment","uuid":"x","attachment":{"type":"hook_additional_context","content":["PROBE-SubagentStart"]}}`, nil},
		{"System", `{"type":"system","uuid":"x","subtype":"compact_boundary","content":"Conversation compacted"}`, nil},
		{"Summary", `{"type":"summary","summary":"Parser work","leafUuid":"x"}`, nil},
		{"QueueOperation", `{"type":"queue-operation","operation":"enqueue","content":"PROBE"}`, nil},
		{"NoUUID", `{"type":"user","message":{"content":"hi"}}`, nil},
		{"NoMessage", `{"type":"user","uuid":"u"}`, nil},
		{"MessageNotObject", `{"type":"user","uuid":"u","message":"hi"}`, nil},
		{"ContentNumber", `{"type":"user","uuid":"u","message":{"content":5}}`, nil},
		{"FieldTypeOff", `{"type":"user","uuid":"u","isMeta":"yes","message":{"content":"hi"}}`, nil},
		{"UnknownType", `{"type":"future-thing","uuid":"u","message":{"content":"hi"}}`, nil},
		{"Blank", `   `, nil},
		{"NotJSON", `hello`, nil},
		{"Array", `[{"type":"user"}]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns, n := claudecode.Adapter{}.ParseTranscript([]byte(tt.line+"\r\n"), false)
			if n != len(tt.line)+2 {
				t.Fatalf("consumed %d, want %d", n, len(tt.line)+2)
			}
			if tt.want == nil {
				if len(turns) != 0 {
					t.Fatalf("got %+v, want no turn", turns)
				}
				return
			}
			if len(turns) != 1 {
				t.Fatalf("got %d turns, want 1", len(turns))
			}
			got := turns[0]
			got.At = time.Time{}
			if !reflect.DeepEqual(got, *tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, *tt.want)
			}
		})
	}
}

func TestParseTranscript_BoundsToolText(t *testing.T) {
	long := strings.Repeat("é", 5000) // 10,000 bytes of two-byte runes
	line := `{"type":"user","uuid":"u","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"` + long + `"}]}]}}` + "\n"
	turns := parseAll(t, []byte(line))
	if len(turns) != 1 {
		t.Fatalf("got %d turns", len(turns))
	}
	text := turns[0].Text
	body, marker, ok := strings.Cut(text, "\n…[")
	if !ok || !strings.HasSuffix(marker, "bytes truncated]") {
		t.Fatalf("no truncation marker in %q", text[len(text)-40:])
	}
	if len(body) > claudecode.MaxToolText || len(body) < claudecode.MaxToolText-3 || !utf8.ValidString(text) {
		t.Fatalf("kept %d bytes (valid UTF-8: %v), want about %d", len(body), utf8.ValidString(text), claudecode.MaxToolText)
	}
}
