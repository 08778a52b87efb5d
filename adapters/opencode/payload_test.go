package opencode_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

// partFrame is a message.part.updated frame of session "s" carrying part, published at ms 5000.
func partFrame(part string) []byte {
	return []byte(`{"id":"evt_p","type":"message.part.updated","properties":{"sessionID":"s","part":` + part + `,"time":5000}}`)
}

// mustDecodePart decodes partFrame(part).
func mustDecodePart(t *testing.T, part string) []adapters.Event {
	t.Helper()
	evs, err := opencode.DecodeFrame(partFrame(part))
	if err != nil {
		t.Fatalf("%s: %v", part, err)
	}
	return evs
}

func TestDecodeFrame_TextParts(t *testing.T) {
	tests := []struct {
		name string
		part string
		want []adapters.Turn // nil: no event
	}{
		{"UserPrompt", `{"id":"p","type":"text","text":"fix it"}`, []adapters.Turn{{ID: "p", Role: "user", Text: "fix it"}}},
		{"AssistantStarted", `{"id":"p","type":"text","text":"Look","time":{"start":1000}}`,
			[]adapters.Turn{{ID: "p", Role: "assistant", Text: "Look", At: msTime(1000)}}},
		{"AssistantDone", `{"id":"p","type":"text","text":"Looked.","time":{"start":1000,"end":2000}}`,
			[]adapters.Turn{{ID: "p", Role: "assistant", Text: "Looked.", At: msTime(1000)}}},
		{"OnlyEnd", `{"id":"p","type":"text","text":"x","time":{"end":2000}}`,
			[]adapters.Turn{{ID: "p", Role: "assistant", Text: "x", At: msTime(2000)}}},
		{"EmptyTime", `{"id":"p","type":"text","text":"x","time":{}}`, []adapters.Turn{{ID: "p", Role: "user", Text: "x"}}},
		{"Empty", `{"id":"p","type":"text","text":"","time":{"start":1000}}`, nil},
		{"Blank", `{"id":"p","type":"text","text":" \n "}`, nil},
		{"Synthetic", `{"id":"p","type":"text","text":"Continue if you have next steps","synthetic":true,"time":{"start":1}}`, nil},
		{"Ignored", `{"id":"p","type":"text","text":"x","ignored":true}`, nil},
		{"TextNotString", `{"id":"p","type":"text","text":["x"]}`, nil},
		{"Reasoning", `{"id":"p","type":"reasoning","text":"hmm","time":{"start":1}}`, nil},
		{"StepStart", `{"id":"p","type":"step-start","snapshot":"abc"}`, nil},
		{"StepFinish", `{"id":"p","type":"step-finish","reason":"stop"}`, nil},
		{"Patch", `{"id":"p","type":"patch","hash":"h","files":["/d/a.go"]}`, nil},
		{"File", `{"id":"p","type":"file","mime":"text/plain","url":"file:///d/a.go"}`, nil},
		{"Compaction", `{"id":"p","type":"compaction","auto":true}`, nil},
		{"Subtask", `{"id":"p","type":"subtask","prompt":"do","description":"d","agent":"general"}`, nil},
		{"Unknown", `{"id":"p","type":"hologram"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := mustDecodePart(t, tt.part)
			if tt.want == nil {
				if evs != nil {
					t.Fatalf("got %s, want nothing", dump(evs))
				}
				return
			}
			want := adapters.Event{Harness: "opencode", Kind: adapters.KindTurns, Name: "message.part.updated",
				SessionID: "s", Turns: tt.want, At: tt.want[0].At}
			if want.At.IsZero() {
				want.At = msTime(5000)
			}
			if len(evs) != 1 || !reflect.DeepEqual(evs[0], want) {
				t.Fatalf("got %s, want %s", dump(evs), dump([]adapters.Event{want}))
			}
		})
	}
}

func TestDecodeFrame_ToolParts(t *testing.T) {
	long := strings.Repeat("é", opencode.MaxToolText) // 2 bytes a rune
	tests := []struct {
		name  string
		part  string
		text  string
		files []string
	}{
		{"Pending", `{"id":"p","type":"tool","tool":"read","callID":"c","state":{"status":"pending","input":{},"raw":""}}`, "", nil},
		{"Running", `{"id":"p","type":"tool","tool":"read","callID":"c","state":{"status":"running","input":{"filePath":"/d/a.go","limit":20},"title":"a.go","time":{"start":1}}}`,
			"a.go\n" + `{"filePath":"/d/a.go","limit":20}`, []string{"/d/a.go"}},
		{"Completed", `{"id":"p","type":"tool","tool":"grep","callID":"c","state":{"status":"completed","input":{"pattern":"<T>","path":"src"},"output":"  a.go:1: x\n","title":"","time":{"start":1,"end":2}}}`,
			`{"path":"src","pattern":"<T>"}` + "\na.go:1: x", []string{"src"}},
		{"Error", `{"id":"p","type":"tool","tool":"edit","callID":"c","state":{"status":"error","input":{"filePath":"/d/b.go","oldString":"x"},"error":"oldString not found"}}`,
			`{"filePath":"/d/b.go","oldString":"x"}` + "\nerror: oldString not found", []string{"/d/b.go"}},
		{"AllPathFields", `{"id":"p","type":"tool","tool":"mcp_x","state":{"status":"running","input":{"file_path":"c","path":"b","filePath":"a"}}}`,
			`{"filePath":"a","file_path":"c","path":"b"}`, []string{"a", "b", "c"}},
		{"DuplicateAndBadPaths", `{"id":"p","type":"tool","tool":"x","state":{"status":"running","input":{"filePath":"a","path":"a","file_path":"https://e.com/a"}}}`,
			`{"filePath":"a","file_path":"https://e.com/a","path":"a"}`, []string{"a"}},
		{"PathsWrongType", `{"id":"p","type":"tool","tool":"x","state":{"status":"running","input":{"filePath":5,"path":" a","file_path":"a\nb"}}}`,
			`{"filePath":5,"file_path":"a\nb","path":" a"}`, nil},
		{"InputNotObject", `{"id":"p","type":"tool","tool":"bash","state":{"status":"running","input":"ls"}}`, "", nil},
		{"NumbersKept", `{"id":"p","type":"tool","tool":"x","state":{"status":"running","input":{"n":12345678901234567890,"f":1.50}}}`,
			`{"f":1.50,"n":12345678901234567890}`, nil},
		{"StateNotObject", `{"id":"p","type":"tool","tool":"x","state":"running"}`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := mustDecodePart(t, tt.part)
			if len(evs) != 1 || len(evs[0].Turns) != 1 {
				t.Fatalf("got %s, want one turn", dump(evs))
			}
			tr := evs[0].Turns[0]
			if tr.ID != "p" || tr.Role != "tool" || tr.Text != tt.text || !slices.Equal(tr.Files, tt.files) {
				t.Fatalf("turn %+v, want text %q files %q", tr, tt.text, tt.files)
			}
		})
	}
	t.Run("Bounded", func(t *testing.T) {
		for _, field := range []string{"output", "error"} {
			status := map[string]string{"output": "completed", "error": "error"}[field]
			part := `{"id":"p","type":"tool","tool":"bash","state":{"status":"` + status + `","input":{"command":"` + long + `"},"` + field + `":"` + long + `"}}`
			tr := mustDecodePart(t, part)[0].Turns[0]
			if len(tr.Text) > opencode.MaxToolText+64 || !utf8.ValidString(tr.Text) || !strings.Contains(tr.Text, "bytes truncated]") {
				t.Fatalf("%s: text of %d bytes, valid %v: %.80q…", field, len(tr.Text), utf8.ValidString(tr.Text), tr.Text)
			}
			input, _, _ := strings.Cut(tr.Text, "\n…[")
			if len(input) > 512 {
				t.Fatalf("%s: input rendered in %d bytes, want at most 512", field, len(input))
			}
		}
	})
}

func TestDecodeFrame_TaskParts(t *testing.T) {
	task := func(state string) string {
		return `{"id":"p","type":"tool","tool":"task","callID":"call_1","state":` + state + `}`
	}
	const input = `"input":{"description":"d","prompt":"do it","subagent_type":"explore"}`
	spawnOf := func(child string) adapters.Spawn {
		return adapters.Spawn{ToolUseID: "call_1", ChildSessionID: child, Description: "d", Prompt: "do it", Type: "explore"}
	}
	tests := []struct {
		name   string
		state  string
		kind   adapters.Kind
		spawn  adapters.Spawn
		result *adapters.Result
	}{
		{"PendingEmpty", `{"status":"pending","input":{},"raw":""}`, adapters.KindSpawn, adapters.Spawn{ToolUseID: "call_1"}, nil},
		{"RunningNoChildYet", `{"status":"running",` + input + `,"time":{"start":1}}`, adapters.KindSpawn, spawnOf(""), nil},
		{"RunningChild", `{"status":"running",` + input + `,"metadata":{"sessionId":"ses_c"},"time":{"start":1}}`,
			adapters.KindSpawn, spawnOf("ses_c"), nil},
		{"CompletedChildFromOutput", `{"status":"completed",` + input + `,"output":"<task id=\"ses_o\" state=\"completed\">\n<summary>s</summary>\n<task_result>\n  done \n</task_result>\n</task>","time":{"start":10,"end":25}}`,
			adapters.KindSpawnResult, spawnOf("ses_o"), &adapters.Result{AgentID: "ses_o", Status: "completed", Text: "done", DurationMs: 15}},
		{"CompletedMetadataWins", `{"status":"completed",` + input + `,"metadata":{"sessionId":"ses_m"},"output":"<task id=\"ses_o\" state=\"completed\"><task_result>x</task_result></task>"}`,
			adapters.KindSpawnResult, spawnOf("ses_m"), &adapters.Result{AgentID: "ses_m", Status: "completed", Text: "x"}},
		{"CompletedOldFormat", `{"status":"completed",` + input + `,"output":"task_id: ses_old (for resuming to continue this task if needed)\n\n<task_result>\nold answer\n</task_result>"}`,
			adapters.KindSpawnResult, spawnOf("ses_old"), &adapters.Result{AgentID: "ses_old", Status: "completed", Text: "old answer"}},
		{"CompletedUnwrapped", `{"status":"completed",` + input + `,"output":" plain answer\n"}`,
			adapters.KindSpawnResult, spawnOf(""), &adapters.Result{Status: "completed", Text: "plain answer"}},
		{"CompletedTaskError", `{"status":"completed",` + input + `,"output":"<task id=\"ses_e\" state=\"error\">\n<task_error>\nboom\n</task_error>\n</task>"}`,
			adapters.KindSpawnResult, spawnOf("ses_e"), &adapters.Result{AgentID: "ses_e", Status: adapters.StatusFailed, Text: "boom"}},
		{"Failed", `{"status":"error",` + input + `,"error":"Unknown agent type: explore is not a valid agent type","time":{"start":5,"end":4}}`,
			adapters.KindSpawnResult, spawnOf(""), &adapters.Result{Status: adapters.StatusFailed, Text: "Unknown agent type: explore is not a valid agent type"}},
		{"Interrupted", `{"status":"error",` + input + `,"error":"Tool execution aborted","metadata":{"sessionId":"ses_c","interrupted":true}}`,
			adapters.KindSpawnResult, spawnOf("ses_c"), &adapters.Result{AgentID: "ses_c", Status: adapters.StatusInterrupted, Text: "Tool execution aborted"}},
		{"Cancelled", `{"status":"error",` + input + `,"error":"Cancelled","metadata":{"sessionId":"ses_c"}}`,
			adapters.KindSpawnResult, spawnOf("ses_c"), &adapters.Result{AgentID: "ses_c", Status: adapters.StatusInterrupted, Text: "Cancelled"}},
		{"InputWrongTypes", `{"status":"running","input":{"description":7,"prompt":"p"},"metadata":["x"]}`,
			adapters.KindSpawn, adapters.Spawn{ToolUseID: "call_1", Prompt: "p"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := mustDecodePart(t, task(tt.state))
			if len(evs) != 2 || evs[0].Kind != adapters.KindTurns || evs[0].Turns[0].Tool != "task" {
				t.Fatalf("got %s, want a tool turn and a spawn event", dump(evs))
			}
			ev := evs[1]
			if ev.Kind != tt.kind || ev.SessionID != "s" || ev.Spawn == nil || *ev.Spawn != tt.spawn {
				t.Fatalf("got %s, want %s with spawn %+v", dump(evs[1:]), tt.kind, tt.spawn)
			}
			if (ev.Result == nil) != (tt.result == nil) || (ev.Result != nil && *ev.Result != *tt.result) {
				t.Fatalf("result %+v, want %+v", ev.Result, tt.result)
			}
		})
	}
	t.Run("UnknownStatus", func(t *testing.T) {
		if evs := mustDecodePart(t, task(`{"status":"paused"}`)); len(evs) != 1 {
			t.Fatalf("got %s, want only the tool turn", dump(evs))
		}
	})
	t.Run("NoCallID", func(t *testing.T) {
		evs := mustDecodePart(t, `{"id":"p","type":"tool","tool":"task","state":{"status":"running",`+input+`}}`)
		if len(evs) != 1 {
			t.Fatalf("got %s, want only the tool turn", dump(evs))
		}
	})
	t.Run("OtherTool", func(t *testing.T) {
		evs := mustDecodePart(t, `{"id":"p","type":"tool","tool":"Task","callID":"c","state":{"status":"running",`+input+`}}`)
		if len(evs) != 1 {
			t.Fatalf("got %s, want only the tool turn", dump(evs))
		}
	})
	t.Run("AtFallsBackToUpdate", func(t *testing.T) {
		evs := mustDecodePart(t, task(`{"status":"pending","input":{}}`))
		if !evs[0].At.Equal(msTime(5000)) || !evs[1].At.Equal(msTime(5000)) || !evs[0].Turns[0].At.IsZero() {
			t.Fatalf("At %v / %v, turn At %v", evs[0].At, evs[1].At, evs[0].Turns[0].At)
		}
	})
}
