package codex_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/codex"
)

func parseAll(tb testing.TB, b []byte) []adapters.Turn {
	tb.Helper()
	turns, n := codex.Adapter{}.ParseTranscript(b, true)
	if n != len(b) {
		tb.Fatalf("consumed %d of %d bytes at EOF", n, len(b))
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

// Text Codex itself puts in a thread, which no turn may carry: the recorder's hook context
// (PROBE-<event>, in developer messages), the environment and skills blocks, the base
// instructions.
var injected = []string{"PROBE-", "<environment_context>", "<skills_instructions>", "You are a coding agent"}

func TestParseTranscript_Recordings(t *testing.T) {
	want := map[string]map[string]int{
		nestedRoot:       {"user": 1, "assistant": 3, "tool": 2, "system": 1},
		nestedChild:      {"user": 1, "assistant": 3, "tool": 2, "system": 1},
		nestedGrandchild: {"user": 1, "assistant": 1},
		parallelRoot:     {"user": 1, "assistant": 5, "tool": 3, "system": 2},
		parallelA:        {"user": 1, "assistant": 1},
		parallelB:        {"user": 1, "assistant": 1},
		compactRoot:      {"user": 2, "assistant": 2, "system": 1},
	}
	files := rolloutFiles(t)
	if len(files) != len(want) {
		t.Fatalf("%d rollouts, want %d: %v", len(files), len(want), files)
	}
	for _, path := range files {
		id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		id = id[len(id)-len(nestedRoot):]
		raw := mustReadFile(t, path)
		for _, s := range injected {
			if !bytes.Contains(raw, []byte(s)) {
				t.Fatalf("%s: no %q in the recording; the check below would prove nothing", path, s)
			}
		}
		turns := parseAll(t, raw)
		if w, ok := want[id]; !ok {
			t.Errorf("%s: unexpected rollout", path)
		} else if got := roleCounts(turns); !reflect.DeepEqual(got, w) {
			t.Errorf("%s: roles %v, want %v", path, got, w)
		}
		seen := map[string]bool{}
		for _, tr := range turns {
			for _, s := range injected {
				if strings.Contains(tr.Text, s) {
					t.Errorf("%s: turn %s carries %q: %.200q", path, tr.ID, s, tr.Text)
				}
			}
			if tr.ID == "" || seen[tr.ID] {
				t.Errorf("%s: turn ID %q empty or repeated", path, tr.ID)
			}
			seen[tr.ID] = true
			if tr.At.IsZero() {
				t.Errorf("%s: turn %s has no time", path, tr.ID)
			}
			switch {
			case tr.Tool == "spawn_agent" && (tr.Role != "assistant" || tr.Text != ""):
				t.Errorf("%s: spawn_agent call %s is %q with text %q, want a bare assistant turn", path, tr.ID, tr.Role, tr.Text)
			case strings.HasPrefix(tr.ID, "fco_") && tr.Role != "tool":
				t.Errorf("%s: function_call_output %s is a %q turn, want tool", path, tr.ID, tr.Role)
			case strings.HasPrefix(tr.Text, "<subagent_notification>") && tr.Role != "system":
				t.Errorf("%s: sub-agent notification %s is a %q turn, want system", path, tr.ID, tr.Role)
			}
		}
	}
}

// brief is a turn reduced to what a reader sees first.
type brief struct{ ID, Role, Text, Tool string }

func briefs(turns []adapters.Turn) []brief {
	var out []brief
	for _, tr := range turns {
		text, _, _ := strings.Cut(tr.Text, "\n")
		out = append(out, brief{tr.ID, tr.Role, text, tr.Tool})
	}
	return out
}

func TestParseTranscript_NestedChild(t *testing.T) {
	turns := parseAll(t, mustReadFile(t, rolloutOf(t, nested, nestedChild)))
	notification := `<subagent_notification>`
	want := []brief{
		{"msg_01a21df2-f6e2-72f1-9ba1-7cbef059c564", "user", "CHILD-TASK: ask a helper to dig deeper", ""},
		{"fc_call_standin00000003", "assistant", "", "spawn_agent"},
		{"fco_01a21df2-f712-7521-a4f7-17bf4ad959fb", "tool", `{"agent_id":"01a21df2-f6fe-79f0-a693-3aabac41e70c","nickname":"Mencius"}`, ""},
		{"fc_call_standin00000004", "assistant", "", "wait_agent"},
		{"fco_01a21df2-f757-76f1-930a-acbbe02b6f8f", "tool", `{"status":{"01a21df2-f6fe-79f0-a693-3aabac41e70c":{"completed":"GRAND-RESULT"}},"timed_out":false}`, ""},
		{"msg_01a21df2-f75a-70c1-b103-ae30cbca0542", "system", notification, ""},
		{"msg_standin00000006", "assistant", "CHILD-RESULT", ""},
	}
	got := briefs(turns)
	if len(got) == len(want) {
		// The notification's first line goes on with the agent's JSON: compare its opening tag.
		got[5].Text = got[5].Text[:min(len(got[5].Text), len(notification))]
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("turns\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(turns[5].Text, nestedGrandchild) {
		t.Errorf("notification %q does not name the grandchild", turns[5].Text)
	}
	if want := time.Date(2026, 11, 27, 16, 59, 51, 0, time.UTC); turns[0].At.Truncate(time.Second) != want {
		t.Errorf("first At = %v, want within the second %v", turns[0].At, want)
	}
}

func TestParseTranscript_Compacted(t *testing.T) {
	turns := parseAll(t, mustReadFile(t, rolloutOf(t, compactResumed, compactRoot)))
	byRole := map[string][]brief{}
	for _, b := range briefs(turns) {
		byRole[b.Role] = append(byRole[b.Role], b)
	}
	if got, want := byRole["user"], []brief{
		{"msg_01a21df2-fad6-7772-b0a1-e2fab8c72e8a", "user", "COMPACT-ROOT: keep the objective across compaction", ""},
		{"msg_01a21df2-fc1d-74e3-9b4e-0c40c9ecd694", "user", "SECOND-PROMPT: go on", ""},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("user turns\n got %q\nwant %q", got, want)
	}
	var system []adapters.Turn
	for _, tr := range turns {
		if tr.Role == "system" {
			system = append(system, tr)
		}
	}
	if len(system) != 1 || system[0].ID != "compacted-22" || !strings.HasSuffix(system[0].Text, "\nSUMMARY: the work so far") {
		t.Fatalf("system turns = %+v, want compacted-22 ending in the summary", system)
	}
	// The compaction model's reply (msg_standin00000002, "SUMMARY: the work so far", marked
	// compaction_output) is no assistant turn: its summary is the system turn.
	if got, want := byRole["assistant"], []brief{
		{"msg_standin00000001", "assistant", "FIRST-ANSWER", ""},
		{"msg_standin00000003", "assistant", "SECOND-ANSWER", ""},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("assistant turns\n got %q\nwant %q", got, want)
	}
	// The summary comes after the first answer and before the second prompt.
	order := map[string]int{}
	for i, tr := range turns {
		order[tr.Text] = i
	}
	if !(order["FIRST-ANSWER"] < order[system[0].Text] && order[system[0].Text] < order["SECOND-PROMPT: go on"]) {
		t.Errorf("summary at %d, first answer at %d, second prompt at %d", order[system[0].Text], order["FIRST-ANSWER"], order["SECOND-PROMPT: go on"])
	}
}

// Parsing a file in random pieces, keeping the unconsumed rest for the next call, yields the
// same turns as one parse of the whole file.
func TestParseTranscript_Chunked(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, path := range rolloutFiles(t) {
		raw := mustReadFile(t, path)
		// Also a copy whose last line has no newline, to exercise the atEOF tail.
		for _, data := range [][]byte{raw, bytes.TrimSuffix(raw, []byte("\n"))} {
			whole := parseAll(t, data)
			if len(whole) == 0 {
				t.Fatalf("%s: no turns", path)
			}
			for range 20 {
				if got := parseChunked(t, data, rng); !reflect.DeepEqual(got, whole) {
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
		n := min(1+rng.IntN(4096), len(data)-off)
		buf = append(buf, data[off:off+n]...)
		off += n
		got, consumed := codex.Adapter{}.ParseTranscript(buf, false)
		if consumed < 0 || consumed > len(buf) {
			t.Fatalf("consumed %d of %d", consumed, len(buf))
		}
		if consumed > 0 && buf[consumed-1] != '\n' {
			t.Fatalf("consumed %d of %d: not at a line end", consumed, len(buf))
		}
		if bytes.IndexByte(buf[consumed:], '\n') >= 0 {
			t.Fatalf("consumed %d of %d: left a complete line", consumed, len(buf))
		}
		turns = append(turns, got...)
		buf = slices.Clone(buf[consumed:])
	}
	got, consumed := codex.Adapter{}.ParseTranscript(buf, true)
	if consumed != len(buf) {
		t.Fatalf("at EOF consumed %d of %d", consumed, len(buf))
	}
	return append(turns, got...)
}

func TestParseTranscript_PartialLine(t *testing.T) {
	line := `{"timestamp":"2026-01-02T03:04:05Z","type":"response_item","payload":{"type":"message","id":"m1","role":"user","content":[{"type":"input_text","text":"hi"}]}}`
	turns, n := codex.Adapter{}.ParseTranscript([]byte(line), false)
	if len(turns) != 0 || n != 0 {
		t.Fatalf("partial line: %d turns, consumed %d; want 0, 0", len(turns), n)
	}
	turns, n = codex.Adapter{}.ParseTranscript([]byte(line+"\n"+line[:20]), false)
	if len(turns) != 1 || n != len(line)+1 {
		t.Fatalf("line + partial: %d turns, consumed %d; want 1, %d", len(turns), n, len(line)+1)
	}
	turns, n = codex.Adapter{}.ParseTranscript([]byte(line), true)
	if len(turns) != 1 || n != len(line) || turns[0].Text != "hi" {
		t.Fatalf("at EOF: %+v, consumed %d", turns, n)
	}
	// A real rollout cut inside its last line.
	raw := mustReadFile(t, rolloutOf(t, parallel, parallelA))
	cut := raw[:len(raw)-10]
	if _, n := (codex.Adapter{}).ParseTranscript(cut, false); n != bytes.LastIndexByte(cut, '\n')+1 {
		t.Fatalf("cut rollout: consumed %d, want %d", n, bytes.LastIndexByte(cut, '\n')+1)
	}
	for _, empty := range [][]byte{nil, {}} {
		if turns, n := (codex.Adapter{}).ParseTranscript(empty, true); len(turns) != 0 || n != 0 {
			t.Fatalf("empty: %d turns, consumed %d", len(turns), n)
		}
	}
}

func TestParseTranscript_Records(t *testing.T) {
	const ts = `"timestamp":"2026-01-02T03:04:05.5Z"`
	item := func(payload string) string {
		return `{` + ts + `,"ordinal":7,"type":"response_item","payload":` + payload + `}`
	}
	msg := func(role, typ, text string) string {
		return item(`{"type":"message","id":"m","role":"` + role + `","content":[{"type":"` + typ + `","text":"` + text + `"}]}`)
	}
	tests := []struct {
		name string
		line string
		want *adapters.Turn // nil: no turn
	}{
		{"User", msg("user", "input_text", "  fix the lexer \\n"), &adapters.Turn{ID: "m", Role: "user", Text: "fix the lexer"}},
		{"UserParts", item(`{"type":"message","id":"m","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"x"},{"type":"input_text","text":""},{"type":"text","text":"b"}]}`),
			&adapters.Turn{ID: "m", Role: "user", Text: "a\nb"}},
		{"Assistant", msg("assistant", "output_text", "Done."), &adapters.Turn{ID: "m", Role: "assistant", Text: "Done."}},
		{"AssistantBlank", msg("assistant", "output_text", " \\n "), nil},
		{"Developer", msg("developer", "input_text", "PROBE-SessionStart"), nil},
		{"System", msg("system", "input_text", "x"), nil},
		{"EnvironmentContext", msg("user", "input_text", "<environment_context>\\n  <cwd>/src</cwd>"), nil},
		{"UserInstructions", msg("user", "input_text", "<user_instructions>be terse</user_instructions>"), nil},
		{"AgentsMD", msg("user", "input_text", "# AGENTS.md instructions for /src"), nil},
		{"Skills", msg("user", "input_text", "<skills_instructions>x"), nil},
		{"ShellCommand", msg("user", "input_text", "<user_shell_command>ls</user_shell_command>"), nil},
		{"TurnAborted", msg("user", "input_text", "<turn_aborted>"), nil},
		{"Notification", msg("user", "input_text", `<subagent_notification>\n{\"agent_path\":\"a\"}`),
			&adapters.Turn{ID: "m", Role: "system", Text: "<subagent_notification>\n{\"agent_path\":\"a\"}"}},
		{"CompactionOutput", `{"ordinal":19,"type":"response_item","payload":{"type":"message","id":"m","role":"assistant","content":[{"type":"output_text","text":"SUMMARY: s"}]},"metadata":{"history_sequence":7,"compaction_output":true}}`, nil},
		{"NoCompactionOutput", `{"type":"response_item","payload":{"type":"message","id":"m","role":"assistant","content":[{"type":"output_text","text":"a"}]},"metadata":{"compaction_output":false}}`,
			&adapters.Turn{ID: "m", Role: "assistant", Text: "a"}},
		{"MetadataNotObject", `{"type":"response_item","payload":{"type":"message","id":"m","role":"assistant","content":[{"type":"output_text","text":"a"}]},"metadata":"compaction_output"}`,
			&adapters.Turn{ID: "m", Role: "assistant", Text: "a"}},
		{"Reasoning", item(`{"type":"reasoning","id":"r","summary":[{"type":"summary_text","text":"hm"}]}`), nil},
		{"FunctionCall", item(`{"type":"function_call","id":"fc","name":"shell","arguments":"{\"command\":[\"cat\"],\"path\":\"/src/a.go\"}","call_id":"c"}`),
			&adapters.Turn{ID: "fc", Role: "assistant", Tool: "shell", Files: []string{"/src/a.go"}}},
		{"FunctionCallBadArguments", item(`{"type":"function_call","id":"fc","name":"shell","arguments":"not json"}`),
			&adapters.Turn{ID: "fc", Role: "assistant", Tool: "shell"}},
		{"ApplyPatch", item(`{"type":"custom_tool_call","id":"ct","name":"apply_patch","input":"*** Begin Patch\n*** Add File: a/b.go\n+x\n*** Update File: c.go\n*** End Patch"}`),
			&adapters.Turn{ID: "ct", Role: "assistant", Tool: "apply_patch", Files: []string{"a/b.go", "c.go"}}},
		{"LocalShellCall", item(`{"type":"local_shell_call","id":"ls","action":{"command":["ls"]}}`),
			&adapters.Turn{ID: "ls", Role: "assistant", Tool: "local_shell_call"}},
		{"OutputString", item(`{"type":"function_call_output","id":"o","call_id":"c","output":"ok\n"}`),
			&adapters.Turn{ID: "o", Role: "tool", Text: "ok\n"}},
		{"OutputObject", item(`{"type":"function_call_output","id":"o","output":{"content":"ok","success":true}}`),
			&adapters.Turn{ID: "o", Role: "tool", Text: "ok"}},
		{"OutputParts", item(`{"type":"custom_tool_call_output","id":"o","output":{"content":[{"type":"input_text","text":"a"},{"type":"input_image"},{"type":"output_text","text":"b"}]}}`),
			&adapters.Turn{ID: "o", Role: "tool", Text: "a\nb"}},
		{"OutputNone", item(`{"type":"function_call_output","id":"o"}`), &adapters.Turn{ID: "o", Role: "tool"}},
		{"NoIDUsesOrdinal", item(`{"type":"function_call_output","call_id":"c","output":"x"}`), &adapters.Turn{ID: "ordinal-7", Role: "tool", Text: "x"}},
		// A rollout without ordinals: the line's hash names the record, the same on every read.
		{"NoIDNoOrdinal", `{"type":"response_item","payload":{"type":"function_call_output","output":"x"}}`, &adapters.Turn{ID: lineID("line-", `{"type":"response_item","payload":{"type":"function_call_output","output":"x"}}`), Role: "tool", Text: "x"}},
		{"Compacted", `{` + ts + `,"ordinal":22,"type":"compacted","payload":{"message":"SUMMARY: s","replacement_history":[]}}`,
			&adapters.Turn{ID: "compacted-22", Role: "system", Text: "SUMMARY: s"}},
		{"CompactedBlank", `{"ordinal":22,"type":"compacted","payload":{"message":"  "}}`, nil},
		{"CompactedNoOrdinal", `{"type":"compacted","payload":{"message":"SUMMARY"}}`, &adapters.Turn{ID: lineID("compacted-", `{"type":"compacted","payload":{"message":"SUMMARY"}}`), Role: "system", Text: "SUMMARY"}},
		{"OrdinalNotNumber", `{"ordinal":"7","type":"compacted","payload":{"message":"SUMMARY"}}`, &adapters.Turn{ID: lineID("compacted-", `{"ordinal":"7","type":"compacted","payload":{"message":"SUMMARY"}}`), Role: "system", Text: "SUMMARY"}},
		{"SessionMeta", `{"ordinal":0,"type":"session_meta","payload":{"id":"x","base_instructions":{"text":"You are a coding agent"}}}`, nil},
		{"EventMsg", `{"ordinal":1,"type":"event_msg","payload":{"type":"user_message","message":"hi"}}`, nil},
		{"TurnContext", `{"ordinal":2,"type":"turn_context","payload":{"cwd":"/src"}}`, nil},
		{"PayloadNotObject", `{"ordinal":3,"type":"response_item","payload":"message"}`, nil},
		{"UnknownItem", item(`{"type":"web_search_call","id":"w"}`), nil},
		{"TypeNotString", `{"ordinal":3,"type":5,"payload":{}}`, nil},
		{"Blank", `   `, nil},
		{"NotJSON", `hello`, nil},
		{"Truncated", `{"type":"response_item","payload":{"type":"message"`, nil},
		{"Array", `[{"type":"response_item"}]`, nil},
		{"Null", `null`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns, n := codex.Adapter{}.ParseTranscript([]byte(tt.line+"\r\n"), false)
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
			if strings.Contains(tt.line, ts) != !got.At.IsZero() {
				t.Errorf("At = %v for a line with timestamp %v", got.At, strings.Contains(tt.line, ts))
			}
			if !got.At.IsZero() && !got.At.Equal(time.Date(2026, 1, 2, 3, 4, 5, 5e8, time.UTC)) {
				t.Errorf("At = %v", got.At)
			}
			got.At = time.Time{}
			if !reflect.DeepEqual(got, *tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, *tt.want)
			}
		})
	}
}

// Lines that yield nothing are still consumed, and the turns around them are kept.
func TestParseTranscript_SkipsBadLines(t *testing.T) {
	good := `{"type":"response_item","payload":{"type":"message","id":"m1","role":"assistant","content":[{"type":"output_text","text":"a"}]}}`
	data := "\n \r\nnot json\n[1]\n" + good + "\n{\"type\":\n\"x\"\n" + strings.Replace(good, "m1", "m2", 1)
	turns, n := codex.Adapter{}.ParseTranscript([]byte(data), true)
	if n != len(data) || len(turns) != 2 || turns[0].ID != "m1" || turns[1].ID != "m2" {
		t.Fatalf("consumed %d of %d, turns %+v; want m1, m2", n, len(data), turns)
	}
}

func TestParseTranscript_BoundsToolText(t *testing.T) {
	long := strings.Repeat("é", 5000) // 10,000 bytes of two-byte runes
	line := `{"type":"response_item","payload":{"type":"function_call_output","id":"o","output":"` + long + `"}}` + "\n"
	turns := parseAll(t, []byte(line))
	if len(turns) != 1 {
		t.Fatalf("got %d turns", len(turns))
	}
	text := turns[0].Text
	body, marker, ok := strings.Cut(text, "\n…[")
	if !ok || !strings.HasSuffix(marker, "bytes truncated]") {
		t.Fatalf("no truncation marker in %q", text[max(0, len(text)-40):])
	}
	if len(body) > codex.MaxToolText || len(body) < codex.MaxToolText-3 || !utf8.ValidString(text) || !strings.HasPrefix(long, body) {
		t.Fatalf("kept %d bytes (valid UTF-8: %v), want about %d", len(body), utf8.ValidString(text), codex.MaxToolText)
	}
	// Output at the bound is kept whole; user and assistant text is never cut.
	exact := strings.Repeat("x", codex.MaxToolText)
	if got := parseAll(t, []byte(strings.Replace(line, long, exact, 1)))[0].Text; got != exact {
		t.Errorf("output of exactly MaxToolText bytes came back as %d bytes", len(got))
	}
	msg := `{"type":"response_item","payload":{"type":"message","id":"m","role":"assistant","content":[{"type":"output_text","text":"` + long + `"}]}}`
	if got := parseAll(t, []byte(msg))[0].Text; got != long {
		t.Errorf("assistant text of %d bytes came back as %d", len(long), len(got))
	}
}

// lineID is the id a record without id or ordinal gets: prefix and the line's hash.
func lineID(prefix, line string) string {
	sum := sha256.Sum256([]byte(line))
	return prefix + hex.EncodeToString(sum[:8])
}
