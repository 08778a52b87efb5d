package claudecode_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
)

func TestAdapter_Harness(t *testing.T) {
	if got := (claudecode.Adapter{}).Harness(); got != "claude-code" {
		t.Fatalf("Harness() = %q, want claude-code", got)
	}
}

// decodeStream decodes every call of a recorded hook stream, failing on any error.
func decodeStream(t *testing.T, path string) []adapters.Event {
	t.Helper()
	var evs []adapters.Event
	for _, c := range MustReadHookStream(t, path) {
		ev, err := claudecode.Adapter{}.Decode(c.Payload)
		if err != nil {
			t.Fatalf("%s seq %d (%s): %v", path, c.Seq, c.Event, err)
		}
		if ev.Name != c.Event {
			t.Errorf("%s seq %d: Name = %q, want %q", path, c.Seq, ev.Name, c.Event)
		}
		if ev.Harness != "claude-code" {
			t.Errorf("%s seq %d: Harness = %q, want claude-code", path, c.Seq, ev.Harness)
		}
		if ev.SessionID == "" || ev.Cwd != "/home/dev/src/parser" || !strings.HasSuffix(ev.TranscriptPath, ev.SessionID+".jsonl") {
			t.Errorf("%s seq %d: SessionID %q, Cwd %q, TranscriptPath %q", path, c.Seq, ev.SessionID, ev.Cwd, ev.TranscriptPath)
		}
		if !ev.At.IsZero() {
			t.Errorf("%s seq %d: At = %v, want zero", path, c.Seq, ev.At)
		}
		evs = append(evs, ev)
	}
	return evs
}

func kinds(evs []adapters.Event) []adapters.Kind {
	var ks []adapters.Kind
	for _, ev := range evs {
		ks = append(ks, ev.Kind)
	}
	return ks
}

func TestDecode_Fixtures(t *testing.T) {
	const (
		start  = adapters.KindSessionStart
		prompt = adapters.KindPrompt
		spawn  = adapters.KindSpawn
		result = adapters.KindSpawnResult
		sStart = adapters.KindSubagentStart
		sStop  = adapters.KindSubagentStop
		compct = adapters.KindPreCompact
		stop   = adapters.KindStop
		end    = adapters.KindSessionEnd
	)
	tests := []struct {
		path  string
		kinds []adapters.Kind
	}{
		{spawnOne, []adapters.Kind{start, prompt, spawn, sStart, sStop, result, stop, end}},
		{spawnTwo, []adapters.Kind{start, prompt, spawn, spawn, sStart, sStart, sStop, sStop, result, result, stop, end}},
		{compactResumed, []adapters.Kind{start, compct, sStop, start, end}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := kinds(decodeStream(t, tt.path)); !slices.Equal(got, tt.kinds) {
				t.Fatalf("kinds = %v, want %v", got, tt.kinds)
			}
		})
	}
}

func TestDecode_SpawnOne(t *testing.T) {
	evs := decodeStream(t, spawnOne)
	if got := evs[0].Source; got != adapters.SourceStartup {
		t.Errorf("SessionStart Source = %q, want startup", got)
	}
	if got := evs[1].Prompt; got != "SPAWN-PLEASE do the research" {
		t.Errorf("Prompt = %q", got)
	}
	wantSpawn := adapters.Spawn{
		ToolUseID:   "toolu_0374fe1f93f44481",
		Description: "child research task",
		Prompt:      "CHILD-TASK: find the answer and report it.",
		Type:        "general-purpose",
	}
	if got := evs[2].Spawn; got == nil || *got != wantSpawn {
		t.Errorf("Spawn = %+v, want %+v", got, wantSpawn)
	}
	if evs[2].AgentID != "" {
		t.Errorf("top-level spawn AgentID = %q, want empty", evs[2].AgentID)
	}
	if ev := evs[3]; ev.AgentID != "a1ba2876fa63b44e9" || ev.AgentType != "general-purpose" {
		t.Errorf("SubagentStart agent = %q/%q", ev.AgentID, ev.AgentType)
	}
	stop := evs[4]
	if stop.IsCompaction() {
		t.Error("SubagentStop of a real sub-agent: IsCompaction() = true")
	}
	wantPath := "/home/dev/.claude/projects/-home-dev-src-parser/f50b1ca6-1b5a-49ea-8f83-7a6785e3b132/subagents/agent-a1ba2876fa63b44e9.jsonl"
	if stop.AgentTranscriptPath != wantPath {
		t.Errorf("AgentTranscriptPath = %q, want %q", stop.AgentTranscriptPath, wantPath)
	}
	if want := (adapters.Result{AgentID: "a1ba2876fa63b44e9", Text: "Child result: the answer is 42."}); stop.Result == nil || *stop.Result != want {
		t.Errorf("SubagentStop Result = %+v, want %+v", stop.Result, want)
	}
	res := evs[5]
	if res.Spawn == nil || *res.Spawn != wantSpawn {
		t.Errorf("spawn result Spawn = %+v, want %+v", res.Spawn, wantSpawn)
	}
	wantRes := adapters.Result{AgentID: "a1ba2876fa63b44e9", Status: "completed", Text: "Child result: the answer is 42.", Tokens: 15, DurationMs: 240}
	if res.Result == nil || *res.Result != wantRes {
		t.Errorf("spawn Result = %+v, want %+v", res.Result, wantRes)
	}
}

// In spawn-two the sub-agents start in the opposite order of their PreToolUse calls; only the
// types (and later the meta files and PostToolUse) tell them apart.
func TestDecode_SpawnTwo(t *testing.T) {
	evs := decodeStream(t, spawnTwo)
	spawns, starts, results := evs[2:4], evs[4:6], evs[8:10]

	if got := []string{spawns[0].Spawn.ToolUseID, spawns[1].Spawn.ToolUseID}; !slices.Equal(got, []string{"toolu_2af3e4b1742744f7", "toolu_6fbd338f1bd04240"}) {
		t.Errorf("spawn ids = %v", got)
	}
	if got := []string{spawns[0].Spawn.Type, spawns[1].Spawn.Type}; !slices.Equal(got, []string{"general-purpose", "Explore"}) {
		t.Errorf("spawn types = %v, want [general-purpose Explore]", got)
	}
	if got := []string{spawns[0].Spawn.Description, spawns[1].Spawn.Description}; !slices.Equal(got, []string{"child one", "child two"}) {
		t.Errorf("spawn descriptions = %v", got)
	}
	if got := []string{starts[0].AgentType, starts[1].AgentType}; !slices.Equal(got, []string{"Explore", "general-purpose"}) {
		t.Errorf("start types = %v, want [Explore general-purpose] (reversed)", got)
	}
	if got := []string{starts[0].AgentID, starts[1].AgentID}; !slices.Equal(got, []string{"a73685d8901dc53f2", "a02df2ef9ee472336"}) {
		t.Errorf("start agents = %v", got)
	}
	// PostToolUse pairs each tool_use_id with the agent that ran it.
	pairs := map[string]string{}
	for _, r := range results {
		pairs[r.Spawn.ToolUseID] = r.Result.AgentID
	}
	want := map[string]string{"toolu_2af3e4b1742744f7": "a02df2ef9ee472336", "toolu_6fbd338f1bd04240": "a73685d8901dc53f2"}
	if !reflect.DeepEqual(pairs, want) {
		t.Errorf("tool_use_id -> agent = %v, want %v", pairs, want)
	}
	if got := []int64{results[0].Result.DurationMs, results[1].Result.DurationMs}; !slices.Equal(got, []int64{260, 320}) {
		t.Errorf("durations = %v, want [260 320]", got)
	}
}

func TestDecode_CompactResumed(t *testing.T) {
	evs := decodeStream(t, compactResumed)
	if evs[0].Source != adapters.SourceResume || evs[3].Source != adapters.SourceCompact {
		t.Errorf("sources = %q, %q, want resume, compact", evs[0].Source, evs[3].Source)
	}
	if ev := evs[1]; ev.Trigger != "manual" || ev.Instructions != "keep the parser objective" {
		t.Errorf("PreCompact = %q/%q", ev.Trigger, ev.Instructions)
	}
	stop := evs[2]
	if !stop.IsCompaction() {
		t.Errorf("compaction SubagentStop: IsCompaction() = false (AgentID %q, AgentType %q)", stop.AgentID, stop.AgentType)
	}
	if stop.AgentID != "ae6d15f8931a5616e" {
		t.Errorf("compaction AgentID = %q", stop.AgentID)
	}
}

func TestDecode_Malformed(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"Empty", ""},
		{"Blank", " \n\t"},
		{"NotJSON", "hello"},
		{"Array", `[{"hook_event_name":"Stop","session_id":"5e550000-0000-4000-8000-000000000001"}]`},
		{"Number", "42"},
		{"String", `"Stop"`},
		{"Null", "null"},
		{"Bool", "true"},
		{"Truncated", `{"hook_event_name":"Stop","session_id":"5e550000-0000-4000-8000-000000000001"`},
		{"TrailingGarbage", `{"hook_event_name":"Stop","session_id":"5e550000-0000-4000-8000-000000000001"} x`},
		{"NoEventName", `{"session_id":"5e550000-0000-4000-8000-000000000001"}`},
		{"EmptyEventName", `{"hook_event_name":"","session_id":"5e550000-0000-4000-8000-000000000001"}`},
		{"EventNameNotString", `{"hook_event_name":5,"session_id":"5e550000-0000-4000-8000-000000000001"}`},
		{"EventNameObject", `{"hook_event_name":{"x":1},"session_id":"5e550000-0000-4000-8000-000000000001"}`},
		{"NoSessionID", `{"hook_event_name":"Stop"}`},
		{"SessionIDNotString", `{"hook_event_name":"UserPromptSubmit","session_id":7,"prompt":"p"}`},
		{"SubagentStartNoAgent", `{"hook_event_name":"SubagentStart","session_id":"5e550000-0000-4000-8000-000000000001","agent_type":"Explore"}`},
		{"SubagentStopNoAgent", `{"hook_event_name":"SubagentStop","session_id":"5e550000-0000-4000-8000-000000000001"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := claudecode.Adapter{}.Decode([]byte(tt.body))
			if !errors.Is(err, adapters.ErrMalformed) {
				t.Fatalf("Decode(%q) = %+v, %v; want ErrMalformed", tt.body, ev, err)
			}
		})
	}
}

func mustDecode(t *testing.T, body string) adapters.Event {
	t.Helper()
	ev, err := claudecode.Adapter{}.Decode([]byte(body))
	if err != nil {
		t.Fatalf("Decode(%.200q): %v", body, err)
	}
	return ev
}

func TestDecode_Tolerated(t *testing.T) {
	t.Run("UnknownEvent", func(t *testing.T) {
		ev := mustDecode(t, `{"hook_event_name":"Notification","message":"hi"}`)
		if ev.Kind != adapters.KindUnknown || ev.Name != "Notification" || ev.Harness != "claude-code" {
			t.Fatalf("got %+v", ev)
		}
	})
	t.Run("UnknownFieldsAndTypes", func(t *testing.T) {
		ev := mustDecode(t, `{"hook_event_name":"SubagentStop","session_id":"5e550000-0000-4000-8000-000000000001","agent_id":"a","agent_type":"Explore",
			"stop_hook_active":"yes","effort":{"level":"high"},"new_field":[1,2],"last_assistant_message":"done"}`)
		if ev.Kind != adapters.KindSubagentStop || ev.Result == nil || ev.Result.Text != "done" {
			t.Fatalf("got %+v", ev)
		}
	})
	t.Run("InvalidUTF8", func(t *testing.T) {
		ev, err := claudecode.Adapter{}.Decode([]byte("{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"s\xff\",\"prompt\":\"a\xc3\x28b\xed\xa0\x80\"}"))
		if err != nil {
			if !errors.Is(err, adapters.ErrMalformed) {
				t.Fatalf("err = %v, want nil or ErrMalformed", err)
			}
			return
		}
		if ev.Kind != adapters.KindPrompt || !strings.HasPrefix(ev.Prompt, "a") {
			t.Fatalf("got %+v", ev)
		}
	})
	t.Run("HugePrompt", func(t *testing.T) {
		big := strings.Repeat("word ", 400<<10) // 2 MiB
		ev := mustDecode(t, `{"hook_event_name":"UserPromptSubmit","session_id":"5e550000-0000-4000-8000-000000000001","prompt":"`+big+`"}`)
		if ev.Prompt != big {
			t.Fatalf("Prompt has %d bytes, want %d", len(ev.Prompt), len(big))
		}
	})
	t.Run("MainThreadAgentType", func(t *testing.T) {
		ev := mustDecode(t, `{"hook_event_name":"SessionStart","session_id":"5e550000-0000-4000-8000-000000000001","source":"startup","agent_type":"reviewer"}`)
		if ev.AgentID != "" || ev.AgentType != "" {
			t.Fatalf("agent_type without agent_id: AgentID %q, AgentType %q; want both empty", ev.AgentID, ev.AgentType)
		}
	})
}

func TestDecode_Spawn(t *testing.T) {
	t.Run("TaskTool", func(t *testing.T) {
		ev := mustDecode(t, `{"hook_event_name":"PreToolUse","session_id":"5e550000-0000-4000-8000-000000000001","tool_name":"Task","tool_use_id":"t1",
			"tool_input":{"description":"d","prompt":"p","subagent_type":"Plan"}}`)
		want := adapters.Spawn{ToolUseID: "t1", Description: "d", Prompt: "p", Type: "Plan"}
		if ev.Kind != adapters.KindSpawn || *ev.Spawn != want {
			t.Fatalf("got %v %+v, want spawn %+v", ev.Kind, ev.Spawn, want)
		}
	})
	t.Run("Nested", func(t *testing.T) {
		ev := mustDecode(t, `{"hook_event_name":"PreToolUse","session_id":"5e550000-0000-4000-8000-000000000005","agent_id":"child","agent_type":"general-purpose",
			"tool_name":"Agent","tool_use_id":"t2","tool_input":{"description":"d","prompt":"p","subagent_type":"Explore"}}`)
		if ev.Kind != adapters.KindSpawn || ev.AgentID != "child" || ev.SessionID != "5e550000-0000-4000-8000-000000000005" || ev.Spawn.Type != "Explore" {
			t.Fatalf("got %+v", ev)
		}
	})
	t.Run("InputNotObject", func(t *testing.T) {
		ev := mustDecode(t, `{"hook_event_name":"PreToolUse","session_id":"5e550000-0000-4000-8000-000000000001","tool_name":"Agent","tool_use_id":"t3","tool_input":"oops"}`)
		if ev.Kind != adapters.KindSpawn || *ev.Spawn != (adapters.Spawn{ToolUseID: "t3"}) {
			t.Fatalf("got %+v", ev.Spawn)
		}
	})
	results := []struct {
		name     string
		response string
		want     adapters.Result
	}{
		{"ResponseString", `"Error: agent crashed"`, adapters.Result{Text: "Error: agent crashed"}},
		{"ResponseNull", `null`, adapters.Result{}},
		{"ResponseNumber", `7`, adapters.Result{}},
		{"ResponseBlocks", `[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]`, adapters.Result{Text: "a\nb"}},
		{"ContentString", `{"status":"completed","agentId":"x","content":"plain","totalTokens":3}`, adapters.Result{AgentID: "x", Status: "completed", Text: "plain", Tokens: 3}},
		{"FieldTypesOff", `{"status":"completed","agentId":"x","content":[{"type":"text","text":"t"}],"totalTokens":"many","totalDurationMs":1.5}`, adapters.Result{AgentID: "x", Status: "completed", Text: "t"}},
		{"AsyncLaunched", `{"status":"async_launched","agentId":"x"}`, adapters.Result{AgentID: "x", Status: "async_launched"}},
		{"Steps", `{"status":"completed","agentId":"x","content":"done","totalToolUseCount":7,"totalDurationMs":900}`, adapters.Result{AgentID: "x", Status: "completed", Text: "done", DurationMs: 900, Steps: 7}},
	}
	for _, tt := range results {
		t.Run(tt.name, func(t *testing.T) {
			ev := mustDecode(t, `{"hook_event_name":"PostToolUse","session_id":"5e550000-0000-4000-8000-000000000001","tool_name":"Agent","tool_use_id":"t4","tool_response":`+tt.response+`}`)
			if ev.Kind != adapters.KindSpawnResult || ev.Spawn.ToolUseID != "t4" || ev.Result == nil || *ev.Result != tt.want {
				t.Fatalf("got %v %+v %+v, want result %+v", ev.Kind, ev.Spawn, ev.Result, tt.want)
			}
		})
	}
	failures := []struct {
		name, extra, status string
	}{
		{"Failed", `"is_interrupt":false`, claudecode.StatusFailed},
		{"Interrupted", `"is_interrupt":true`, claudecode.StatusInterrupted},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			ev := mustDecode(t, `{"hook_event_name":"PostToolUseFailure","session_id":"5e550000-0000-4000-8000-000000000001","tool_name":"Agent","tool_use_id":"t5",
				"tool_input":{"subagent_type":"Nope"},"error":"Agent type 'Nope' not found",`+tt.extra+`}`)
			want := adapters.Result{Status: tt.status, Text: "Agent type 'Nope' not found"}
			if ev.Kind != adapters.KindSpawnResult || ev.Spawn.ToolUseID != "t5" || *ev.Result != want {
				t.Fatalf("got %v %+v %+v, want %+v", ev.Kind, ev.Spawn, ev.Result, want)
			}
		})
	}
}

func TestDecode_Tool(t *testing.T) {
	tests := []struct {
		name  string
		event string
		tool  string
		input string
		files []string
	}{
		{"Read", "PreToolUse", "Read", `{"file_path":"/src/a.go","limit":10}`, []string{"/src/a.go"}},
		{"Grep", "PreToolUse", "Grep", `{"pattern":"func","path":"internal"}`, []string{"internal"}},
		{"Notebook", "PostToolUse", "NotebookEdit", `{"notebook_path":"n.ipynb","new_source":"x"}`, []string{"n.ipynb"}},
		{"Duplicates", "PreToolUse", "Odd", `{"file_path":"a","path":"a","notebook_path":"b"}`, []string{"a", "b"}},
		{"NotPaths", "PreToolUse", "Odd", `{"file_path":"https://example.com/x","path":"a\nb","notebook_path":" "}`, nil},
		{"WrongTypes", "PreToolUse", "Odd", `{"file_path":5,"path":["x"]}`, nil},
		{"Bash", "PostToolUseFailure", "Bash", `{"command":"ls"}`, nil},
		{"InputNotObject", "PreToolUse", "Bash", `"ls"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := mustDecode(t, `{"hook_event_name":"`+tt.event+`","session_id":"5e550000-0000-4000-8000-000000000001","tool_name":"`+tt.tool+`","tool_use_id":"u","tool_input":`+tt.input+`,"tool_response":{"ok":true}}`)
			want := adapters.KindToolUse
			if tt.event != "PreToolUse" {
				want = adapters.KindToolResult
			}
			if ev.Kind != want || ev.Tool == nil || ev.Tool.Name != tt.tool || ev.Tool.UseID != "u" || !slices.Equal(ev.Tool.Files, tt.files) {
				t.Fatalf("got %v %+v, want %v files %q", ev.Kind, ev.Tool, want, tt.files)
			}
		})
	}
}

func TestHookEventName(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"Known", `{"session_id":"5e550000-0000-4000-8000-000000000001","hook_event_name":"SubagentStart"}`, "SubagentStart"},
		{"Newer", `{"hook_event_name":"Notification"}`, "Notification"},
		{"Missing", `{"session_id":"5e550000-0000-4000-8000-000000000001"}`, ""},
		{"NotAString", `{"hook_event_name":7}`, ""},
		{"NotJSON", `SessionStart`, ""},
		{"Empty", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := claudecode.HookEventName([]byte(tt.body)); got != tt.want {
				t.Fatalf("HookEventName(%s) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

// TestDecode_JunkIDs: an id no record may have (invalid UTF-8, a control character, over
// adapters.MaxIDBytes) is a malformed call, so it is answered 400 and stored as no session.
func TestDecode_JunkIDs(t *testing.T) {
	for name, body := range map[string]string{
		"InvalidUTF8":  "{\"hook_event_name\":\"Stop\",\"session_id\":\"s\xff\"}",
		"ControlChar":  `{"hook_event_name":"Stop","session_id":"s\u0007x"}`,
		"TooLong":      `{"hook_event_name":"Stop","session_id":"` + strings.Repeat("a", adapters.MaxIDBytes+1) + `"}`,
		"AgentIDJunk":  "{\"hook_event_name\":\"SubagentStart\",\"session_id\":\"5e550000-0000-4000-8000-000000000001\",\"agent_id\":\"a\\u0000\"}",
		"ToolUseJunk":  "{\"hook_event_name\":\"PreToolUse\",\"session_id\":\"5e550000-0000-4000-8000-000000000001\",\"tool_name\":\"Agent\",\"tool_use_id\":\"t\xff\"}",
		"UnknownEvent": "{\"hook_event_name\":\"SomethingNew\",\"session_id\":\"s\xfe\"}",
	} {
		if _, err := (claudecode.Adapter{}).Decode([]byte(body)); !errors.Is(err, adapters.ErrMalformed) {
			t.Errorf("%s: got %v, want ErrMalformed", name, err)
		}
	}
	long := `{"hook_event_name":"SubagentStop","session_id":"5e550000-0000-4000-8000-000000000001","agent_id":"` + strings.Repeat("a", adapters.MaxIDBytes) + `"}`
	if _, err := (claudecode.Adapter{}).Decode([]byte(long)); err != nil {
		t.Errorf("an id of MaxIDBytes: %v", err)
	}
}

// TestDecode_SessionIDShape: a Claude Code session_id is a UUID (every recorded one is, and
// Claude Code's --session-id takes nothing else); anything else is a 400 naming the field and
// the shape wanted. Version and variant digits and case are not checked. agent_id has no fixed
// shape ("a" and 16 hex digits, with a label in some versions): only the generic rules apply.
func TestDecode_SessionIDShape(t *testing.T) {
	for _, id := range []string{
		"49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7", // recorded
		"01a21066-cd68-7070-b3b3-dec11f2ea296", // a version 7 UUID (Codex's shape)
		"49BC4F7B-89E8-4C4E-A7E6-0A6B981A5BE7",
	} {
		if _, err := (claudecode.Adapter{}).Decode([]byte(`{"hook_event_name":"Stop","session_id":"` + id + `"}`)); err != nil {
			t.Errorf("session_id %s: %v", id, err)
		}
	}
	for _, id := range []string{"s", "test", "49bc4f7b89e84c4ea7e60a6b981a5be7", "49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be", "49bc4f7b-89e8-4c4e-a7e6-0a6b981a5beg",
		"{49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7}", "49bc4f7b_89e8_4c4e_a7e6_0a6b981a5be7", " 49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be"} {
		_, err := (claudecode.Adapter{}).Decode([]byte(`{"hook_event_name":"UserPromptSubmit","session_id":"` + id + `","prompt":"p"}`))
		if !errors.Is(err, adapters.ErrMalformed) || !strings.Contains(err.Error(), "session_id") || !strings.Contains(err.Error(), "UUID") {
			t.Errorf("session_id %q: got %v, want a malformed call naming session_id and the UUID shape", id, err)
		}
	}
	for _, agent := range []string{"a1ba2876fa63b44e9", "aExplore-0123456789abcdef", "agent1"} {
		if _, err := (claudecode.Adapter{}).Decode([]byte(`{"hook_event_name":"SubagentStart","session_id":"49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7","agent_id":"` + agent + `","agent_type":"Explore"}`)); err != nil {
			t.Errorf("agent_id %s: %v", agent, err)
		}
	}
}
