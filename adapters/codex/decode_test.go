package codex_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/codex"
)

func TestAdapter_Harness(t *testing.T) {
	if got := (codex.Adapter{}).Harness(); got != "codex" {
		t.Fatalf("Harness() = %q, want codex", got)
	}
}

func mustDecode(t *testing.T, body string) adapters.Event {
	t.Helper()
	ev, err := codex.Adapter{}.Decode([]byte(body))
	if err != nil {
		t.Fatalf("Decode(%.300q): %v", body, err)
	}
	return ev
}

// TestDecode_Samples decodes the one recorded payload per event to the whole expected Event.
func TestDecode_Samples(t *testing.T) {
	const (
		session  = "01a21066-cd68-7070-b3b3-dec11f2ea296"
		toolSes  = "01a21067-509b-7c10-aaa4-eb3480bcb973"
		permSes  = "01a21068-a543-7082-8cda-7fd1ecb1cdb1"
		spawnSes = "01a21067-bd1d-72a0-9f84-7d2f0c6819f6"
		child    = "01a21067-c890-7571-ad77-d82820347af4"
		cwd      = "/home/dev/src/app"
	)
	bash := &adapters.ToolCall{Name: "Bash", UseID: "call_f6ab307d"}
	want := map[string]adapters.Event{
		"SessionStart": {Kind: adapters.KindSessionStart, SessionID: session, Source: adapters.SourceStartup,
			TranscriptPath: "/home/dev/.codex/sessions/2026/11/25/rollout-2026-11-25T01-51-42-01a21066-cd68-7070-b3b3-dec11f2ea296.jsonl"},
		"UserPromptSubmit":  {Kind: adapters.KindPrompt, SessionID: session, TranscriptPath: "T", Prompt: "say hi"},
		"PreToolUse":        {Kind: adapters.KindToolUse, SessionID: toolSes, TranscriptPath: "T", Tool: bash},
		"PostToolUse":       {Kind: adapters.KindToolResult, SessionID: toolSes, TranscriptPath: "T", Tool: bash},
		"PermissionRequest": {Kind: adapters.KindUnknown, SessionID: permSes, TranscriptPath: "T"},
		"Stop":              {Kind: adapters.KindStop, SessionID: session, TranscriptPath: "T"},
		"SessionEnd":        {Kind: adapters.KindSessionEnd, SessionID: session, TranscriptPath: "T"},
		"SubagentStart": {Kind: adapters.KindSubagentStart, SessionID: spawnSes, AgentID: child, AgentType: "default",
			AgentTranscriptPath: ".../rollout-2026-11-25T01-52-46-01a21067-c890-7571-ad77-d82820347af4.jsonl (CHILD rollout)"},
		"UserPromptSubmit(child)": {Kind: adapters.KindPrompt, SessionID: spawnSes, AgentID: child, AgentType: "default",
			AgentTranscriptPath: "(CHILD rollout)", Prompt: "child task: say CHILD"},
		"SubagentStop": {Kind: adapters.KindSubagentStop, SessionID: spawnSes, AgentID: child, AgentType: "default",
			AgentTranscriptPath: "(CHILD rollout ...01a21067-c890-...jsonl)", Result: &adapters.Result{AgentID: child, Text: "ROOT-FINAL"}},
	}
	samples := mustReadSamples(t)
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			body, ok := samples[name]
			if !ok {
				t.Fatalf("no sample %q in %s", name, samplesFile)
			}
			w.Harness, w.Cwd = "codex", cwd
			w.Name, _, _ = strings.Cut(name, "(")
			if got := mustDecode(t, string(body)); !reflect.DeepEqual(got, w) {
				t.Fatalf("Decode\n got %+v\nwant %+v", got, w)
			}
		})
	}
	t.Run("Notify", func(t *testing.T) {
		// The notify program's argument is no hook call: it has no hook_event_name.
		if ev, err := (codex.Adapter{}).Decode(samples["notify_argv1"]); !errors.Is(err, adapters.ErrMalformed) {
			t.Fatalf("Decode(notify payload) = %+v, %v; want ErrMalformed", ev, err)
		}
	})
	if len(samples) != len(want)+1 {
		t.Errorf("%d samples, %d tested: a sample was added without a case", len(samples), len(want)+1)
	}
}

// decodeStream decodes every call of a recorded scenario, failing on any error, and checks what
// every event of it shares.
func decodeStream(t *testing.T, scenario, root string) []adapters.Event {
	t.Helper()
	var evs []adapters.Event
	for i, c := range MustReadHookStream(t, scenario) {
		ev, err := codex.Adapter{}.Decode(c.Payload)
		if err != nil {
			t.Fatalf("%s call %d (%s): %v", scenario, i, c.Event, err)
		}
		if ev.Name != c.Event || ev.Name != codex.HookEventName(c.Payload) {
			t.Errorf("%s call %d: Name = %q, want %q", scenario, i, ev.Name, c.Event)
		}
		if ev.Harness != "codex" {
			t.Errorf("%s call %d: Harness = %q, want codex", scenario, i, ev.Harness)
		}
		if ev.SessionID != root || ev.Cwd != "/home/dev/src/app" || !ev.At.IsZero() {
			t.Errorf("%s call %d: SessionID %q, Cwd %q, At %v; want %s, /home/dev/src/app, zero", scenario, i, ev.SessionID, ev.Cwd, ev.At, root)
		}
		// The root's rollout is named only by the root's own events; a sub-agent's rollout only
		// as AgentTranscriptPath.
		switch {
		case ev.AgentID == "" && localPath(scenario, ev.TranscriptPath) != rolloutOf(t, scenario, root):
			t.Errorf("%s call %d (%s): TranscriptPath %q is not the root's rollout", scenario, i, c.Event, ev.TranscriptPath)
		case ev.AgentID != "" && ev.TranscriptPath != "":
			t.Errorf("%s call %d (%s) of agent %s: TranscriptPath = %q, want empty", scenario, i, c.Event, ev.AgentID, ev.TranscriptPath)
		case ev.AgentID != "" && localPath(scenario, ev.AgentTranscriptPath) != rolloutOf(t, scenario, ev.AgentID):
			t.Errorf("%s call %d (%s): AgentTranscriptPath %q is not agent %s's rollout", scenario, i, c.Event, ev.AgentTranscriptPath, ev.AgentID)
		}
		if ev.AgentID != "" && ev.AgentType != codex.DefaultAgentType {
			t.Errorf("%s call %d: AgentType = %q, want default", scenario, i, ev.AgentType)
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

func TestDecode_Recordings(t *testing.T) {
	const (
		start  = adapters.KindSessionStart
		prompt = adapters.KindPrompt
		spawn  = adapters.KindSpawn
		result = adapters.KindSpawnResult
		sStart = adapters.KindSubagentStart
		sStop  = adapters.KindSubagentStop
		use    = adapters.KindToolUse
		used   = adapters.KindToolResult
		preC   = adapters.KindPreCompact
		postC  = adapters.KindCompacted
		stop   = adapters.KindStop
		end    = adapters.KindSessionEnd
	)
	tests := []struct {
		scenario, root string
		kinds          []adapters.Kind
	}{
		{nested, nestedRoot, []adapters.Kind{start, prompt, spawn, result, sStart, prompt, use, spawn, result, sStart, prompt, use, sStop, used, sStop, used, stop, end}},
		{parallel, parallelRoot, []adapters.Kind{start, prompt, spawn, result, spawn, sStart, prompt, result, sStart, prompt, sStop, use, used, sStop, stop, stop, end}},
		{compactResumed, compactRoot, []adapters.Kind{start, prompt, stop, end, preC, postC, start, start, prompt, stop, end}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			if got := kinds(decodeStream(t, tt.scenario, tt.root)); !slices.Equal(got, tt.kinds) {
				t.Fatalf("kinds\n got %v\nwant %v", got, tt.kinds)
			}
		})
	}
}

func TestDecode_Nested(t *testing.T) {
	evs := decodeStream(t, nested, nestedRoot)
	spawnChild := adapters.Spawn{ToolUseID: nestedRoot + ":call_standin00000001", Prompt: "CHILD-TASK: ask a helper to dig deeper",
		Description: "CHILD-TASK: ask a helper to dig deeper", Type: "default"}
	spawnGrand := adapters.Spawn{ToolUseID: nestedRoot + ":call_standin00000003", Prompt: "GRAND-TASK: dig deeper",
		Description: "GRAND-TASK: dig deeper", Type: "default"}

	if ev := evs[0]; ev.Source != adapters.SourceStartup {
		t.Errorf("SessionStart Source = %q, want startup", ev.Source)
	}
	if ev := evs[1]; ev.Prompt != "NESTED-ROOT: delegate the audit to a helper" || ev.AgentID != "" {
		t.Errorf("root prompt = %q (agent %q)", ev.Prompt, ev.AgentID)
	}
	if ev := evs[2]; ev.Spawn == nil || *ev.Spawn != spawnChild || ev.AgentID != "" || ev.Result != nil {
		t.Errorf("root spawn = %+v (agent %q, result %+v), want %+v", ev.Spawn, ev.AgentID, ev.Result, spawnChild)
	}
	wantLaunch := adapters.Result{AgentID: nestedChild, Status: codex.StatusLaunched}
	if ev := evs[3]; ev.Spawn == nil || *ev.Spawn != spawnChild || ev.Result == nil || *ev.Result != wantLaunch {
		t.Errorf("root spawn result = %+v / %+v, want %+v / %+v", ev.Spawn, ev.Result, spawnChild, wantLaunch)
	}
	if ev := evs[4]; ev.AgentID != nestedChild || ev.AgentType != "default" {
		t.Errorf("SubagentStart = %q/%q, want %s/default", ev.AgentID, ev.AgentType, nestedChild)
	}
	if ev := evs[5]; ev.AgentID != nestedChild || ev.Prompt != "CHILD-TASK: ask a helper to dig deeper" {
		t.Errorf("child prompt = %q from %q", ev.Prompt, ev.AgentID)
	}
	wait := adapters.ToolCall{Name: "wait_agent", UseID: "call_standin00000002"}
	if ev := evs[6]; ev.Tool == nil || !reflect.DeepEqual(*ev.Tool, wait) || ev.AgentID != "" {
		t.Errorf("root wait = %+v (agent %q), want %+v", ev.Tool, ev.AgentID, wait)
	}
	if ev := evs[7]; ev.Spawn == nil || *ev.Spawn != spawnGrand || ev.AgentID != nestedChild {
		t.Errorf("child spawn = %+v from %q, want %+v from %s", ev.Spawn, ev.AgentID, spawnGrand, nestedChild)
	}
	if ev := evs[8]; ev.Result == nil || *ev.Result != (adapters.Result{AgentID: nestedGrandchild, Status: "launched"}) || ev.AgentID != nestedChild {
		t.Errorf("child spawn result = %+v from %q", ev.Result, ev.AgentID)
	}
	if ev := evs[9]; ev.AgentID != nestedGrandchild {
		t.Errorf("grandchild SubagentStart agent = %q", ev.AgentID)
	}
	stopGrand := evs[12]
	if want := (adapters.Result{AgentID: nestedGrandchild, Text: "GRAND-RESULT"}); stopGrand.Result == nil || *stopGrand.Result != want {
		t.Errorf("grandchild SubagentStop Result = %+v, want %+v", stopGrand.Result, want)
	}
	if stopGrand.IsCompaction() {
		t.Error("grandchild SubagentStop: IsCompaction() = true")
	}
	if ev := evs[13]; ev.Tool == nil || ev.Tool.Name != "wait_agent" || ev.Tool.UseID != "call_standin00000004" || ev.AgentID != nestedChild {
		t.Errorf("child wait result = %+v from %q", ev.Tool, ev.AgentID)
	}
	if want := (adapters.Result{AgentID: nestedChild, Text: "CHILD-RESULT"}); evs[14].Result == nil || *evs[14].Result != want {
		t.Errorf("child SubagentStop Result = %+v, want %+v", evs[14].Result, want)
	}
}

func TestDecode_Compaction(t *testing.T) {
	evs := decodeStream(t, compactResumed, compactRoot)
	if got := []string{evs[0].Source, evs[6].Source, evs[7].Source}; !slices.Equal(got, []string{"startup", "resume", "compact"}) {
		t.Errorf("sources = %q, want [startup resume compact]", got)
	}
	if evs[4].Trigger != "auto" || evs[5].Trigger != "auto" {
		t.Errorf("triggers = %q, %q, want auto, auto", evs[4].Trigger, evs[5].Trigger)
	}
	if evs[8].Prompt != "SECOND-PROMPT: go on" {
		t.Errorf("second prompt = %q", evs[8].Prompt)
	}
	manual := mustDecode(t, `{"hook_event_name":"PreCompact","session_id":"s","trigger":"manual"}`)
	if manual.Kind != adapters.KindPreCompact || manual.Trigger != "manual" {
		t.Errorf("manual PreCompact = %s/%q", manual.Kind, manual.Trigger)
	}
}

// Every sub-agent start follows the spawn receipt that named it, and every receipt follows the
// spawn it answers: the engine pairs them by these ids.
func TestDecode_SpawnReceiptsPrecedeStarts(t *testing.T) {
	for _, tt := range []struct {
		scenario, root string
		agents         []string
	}{
		{nested, nestedRoot, []string{nestedChild, nestedGrandchild}},
		{parallel, parallelRoot, []string{parallelA, parallelB}},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			spawned := map[string]bool{}  // tool_use_id of each spawn
			launched := map[string]bool{} // agent_id of each receipt
			var started []string
			for i, ev := range decodeStream(t, tt.scenario, tt.root) {
				switch ev.Kind {
				case adapters.KindSpawn:
					spawned[ev.Spawn.ToolUseID] = true
				case adapters.KindSpawnResult:
					if !spawned[ev.Spawn.ToolUseID] {
						t.Errorf("call %d: receipt of %s before its spawn", i, ev.Spawn.ToolUseID)
					}
					if ev.Result.Status != codex.StatusLaunched || ev.Result.AgentID == "" {
						t.Errorf("call %d: receipt %+v, want launched with an agent", i, ev.Result)
					}
					launched[ev.Result.AgentID] = true
				case adapters.KindSubagentStart:
					if !launched[ev.AgentID] {
						t.Errorf("call %d: SubagentStart of %s before any receipt names it", i, ev.AgentID)
					}
					started = append(started, ev.AgentID)
				}
			}
			if !slices.Equal(started, tt.agents) {
				t.Errorf("started %v, want %v", started, tt.agents)
			}
		})
	}
}

func TestDecode_Spawn(t *testing.T) {
	pre := func(input string) string {
		return `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"spawn_agent","tool_use_id":"call_1","tool_input":` + input + `}`
	}
	long := strings.Repeat("word ", 30) // 150 bytes, a space every 5
	tests := []struct {
		name  string
		input string
		want  adapters.Spawn
	}{
		{"Message", `{"message":"fix the lexer"}`,
			adapters.Spawn{ToolUseID: "s:call_1", Prompt: "fix the lexer", Description: "fix the lexer", Type: "default"}},
		{"Items", `{"items":[{"type":"text","text":"first"},{"type":"image","image_url":"x"},{"type":"text","text":""},{"type":"text","text":"second"}]}`,
			adapters.Spawn{ToolUseID: "s:call_1", Prompt: "first\nsecond", Description: "first", Type: "default"}},
		{"MessageWinsOverItems", `{"message":"m","items":[{"type":"text","text":"i"}]}`,
			adapters.Spawn{ToolUseID: "s:call_1", Prompt: "m", Description: "m", Type: "default"}},
		{"AgentType", `{"message":"m","agent_type":"explorer"}`,
			adapters.Spawn{ToolUseID: "s:call_1", Prompt: "m", Description: "m", Type: "explorer"}},
		{"FirstLine", `{"message":"  \n  line one  \nline two"}`,
			adapters.Spawn{ToolUseID: "s:call_1", Prompt: "  \n  line one  \nline two", Description: "line one", Type: "default"}},
		{"CutAtWord", `{"message":"` + long + `"}`,
			adapters.Spawn{ToolUseID: "s:call_1", Prompt: long, Description: strings.TrimSpace(strings.Repeat("word ", 15)) + "…", Type: "default"}},
		{"InputNotObject", `"message"`, adapters.Spawn{ToolUseID: "s:call_1", Type: "default"}},
		{"NoInput", `null`, adapters.Spawn{ToolUseID: "s:call_1", Type: "default"}},
		{"MessageNotString", `{"message":5}`, adapters.Spawn{ToolUseID: "s:call_1", Type: "default"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := mustDecode(t, pre(tt.input))
			if ev.Kind != adapters.KindSpawn || ev.Spawn == nil || *ev.Spawn != tt.want {
				t.Fatalf("got %s %+v, want spawn %+v", ev.Kind, ev.Spawn, tt.want)
			}
		})
	}
	// Descriptions count runes, not bytes, and never split one.
	for _, task := range []string{strings.Repeat("é", 200), strings.Repeat("日本語 ", 40), strings.Repeat("x", 81), "😀" + strings.Repeat(" ab", 50)} {
		ev := mustDecode(t, pre(`{"message":"`+task+`"}`))
		d := strings.TrimSuffix(ev.Spawn.Description, "…")
		if !utf8.ValidString(d) || utf8.RuneCountInString(d) > 80 || d == "" || !strings.HasPrefix(task, d) {
			t.Errorf("Description of %.20q… = %q: want a prefix of at most 80 runes", task, ev.Spawn.Description)
		}
		if !strings.HasSuffix(ev.Spawn.Description, "…") {
			t.Errorf("Description of %.20q… = %q: cut without a mark", task, ev.Spawn.Description)
		}
	}
	if ev := mustDecode(t, pre(`{"message":"`+strings.Repeat("x", 80)+`"}`)); ev.Spawn.Description != strings.Repeat("x", 80) {
		t.Errorf("an 80-rune task was cut: %q", ev.Spawn.Description)
	}
}

func TestDecode_SpawnResult(t *testing.T) {
	post := func(response string) string {
		return `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"spawn_agent","tool_use_id":"call_1","tool_input":{"message":"m"},"tool_response":` + response + `}`
	}
	tests := []struct {
		name     string
		response string
		want     adapters.Result
	}{
		{"ReceiptString", `"{\"agent_id\":\"01a2-child\",\"nickname\":\"Volta\"}"`, adapters.Result{AgentID: "01a2-child", Status: "launched"}},
		{"ReceiptObject", `{"agent_id":"01a2-child","nickname":"Volta"}`, adapters.Result{AgentID: "01a2-child", Status: "launched"}},
		{"ErrorText", `"collab spawn failed: agent thread limit reached (max 6)"`,
			adapters.Result{Status: adapters.StatusFailed, Text: "collab spawn failed: agent thread limit reached (max 6)"}},
		{"ObjectWithoutAgent", `{"error":"denied"}`, adapters.Result{Status: adapters.StatusFailed, Text: `{"error":"denied"}`}},
		{"AgentNotString", `{"agent_id":7}`, adapters.Result{Status: adapters.StatusFailed, Text: `{"agent_id":7}`}},
		{"Null", `null`, adapters.Result{Status: adapters.StatusFailed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := mustDecode(t, post(tt.response))
			if ev.Kind != adapters.KindSpawnResult || ev.Result == nil || *ev.Result != tt.want {
				t.Fatalf("got %s %+v, want %+v", ev.Kind, ev.Result, tt.want)
			}
			if ev.Spawn == nil || ev.Spawn.ToolUseID != "s:call_1" || ev.Spawn.Prompt != "m" {
				t.Fatalf("Spawn = %+v, want s:call_1 with prompt m", ev.Spawn)
			}
		})
	}
	t.Run("NoResponse", func(t *testing.T) {
		ev := mustDecode(t, `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"spawn_agent","tool_use_id":"call_1"}`)
		if ev.Result == nil || *ev.Result != (adapters.Result{Status: adapters.StatusFailed}) {
			t.Fatalf("Result = %+v, want failed without text", ev.Result)
		}
	})
}

func TestIsSpawnTool(t *testing.T) {
	for name, want := range map[string]bool{
		"spawn_agent":                 true,
		"multi_agent_v1spawn_agent":   true,
		"multi_agent_v1.spawn_agent":  true,
		"multi_agent_v1/spawn_agent":  true,
		"multi_agent_v1__spawn_agent": true,
		"_spawn_agent":                false,
		"/spawn_agent":                false,
		"spawn_agents":                false,
		"spawn_agent_v2":              false,
		"wait_agent":                  false,
		"multi_agent_v1wait_agent":    false,
		"multi_agent_v1":              false,
		"Spawn_Agent":                 false,
		"Task":                        false,
		"":                            false,
	} {
		if got := codex.IsSpawnTool(name); got != want {
			t.Errorf("IsSpawnTool(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestDecode_Tool(t *testing.T) {
	tool := func(event, name, input string) adapters.Event {
		t.Helper()
		return mustDecode(t, `{"hook_event_name":"`+event+`","session_id":"s","tool_name":"`+name+`","tool_use_id":"call_9","tool_input":`+input+`}`)
	}
	patch := "*** Begin Patch\n*** Add File: a/b.go\n+package b\n*** Update File: c.go\n*** Move to: d/e.go\n@@\n-x\n+y\n*** Delete File: f.go\r\n*** Add File:   g.go  \n*** Add File: https://example.com/x\n*** Add File: \n*** Update File: a/b.go\n*** End Patch"
	patchJSON := strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(patch)
	tests := []struct {
		name, event, tool, input string
		want                     adapters.ToolCall
		kind                     adapters.Kind
	}{
		{"Bash", "PreToolUse", "Bash", `{"command":"ls"}`, adapters.ToolCall{Name: "Bash", UseID: "call_9"}, adapters.KindToolUse},
		{"NamespacedWait", "PostToolUse", "multi_agent_v1wait_agent", `{"targets":["x"]}`, adapters.ToolCall{Name: "wait_agent", UseID: "call_9"}, adapters.KindToolResult},
		{"NamespacedDotted", "PreToolUse", "multi_agent_v1.wait_agent", `{}`, adapters.ToolCall{Name: "wait_agent", UseID: "call_9"}, adapters.KindToolUse},
		{"NamespacedUnderscore", "PreToolUse", "multi_agent_v1_close_agent", `{}`, adapters.ToolCall{Name: "close_agent", UseID: "call_9"}, adapters.KindToolUse},
		{"NamespaceOnly", "PreToolUse", "multi_agent_v1", `{}`, adapters.ToolCall{Name: "multi_agent_v1", UseID: "call_9"}, adapters.KindToolUse},
		{"NamespaceAndSeparator", "PreToolUse", "multi_agent_v1.", `{}`, adapters.ToolCall{Name: "multi_agent_v1.", UseID: "call_9"}, adapters.KindToolUse},
		{"OtherPrefix", "PreToolUse", "_wait_agent", `{}`, adapters.ToolCall{Name: "_wait_agent", UseID: "call_9"}, adapters.KindToolUse},
		{"FilePath", "PreToolUse", "Read", `{"file_path":"/src/a.go","paths":["/src/b.go","/src/a.go"]}`,
			adapters.ToolCall{Name: "Read", UseID: "call_9", Files: []string{"/src/a.go", "/src/b.go"}}, adapters.KindToolUse},
		{"ApplyPatchInput", "PreToolUse", "apply_patch", `{"input":"` + patchJSON + `"}`,
			adapters.ToolCall{Name: "apply_patch", UseID: "call_9", Files: []string{"a/b.go", "c.go", "d/e.go", "f.go", "g.go"}}, adapters.KindToolUse},
		{"ApplyPatchPatch", "PostToolUse", "apply_patch", `{"patch":"*** Begin Patch\n*** Delete File: old.go\n*** End Patch","path":"old.go"}`,
			adapters.ToolCall{Name: "apply_patch", UseID: "call_9", Files: []string{"old.go"}}, adapters.KindToolResult},
		{"InputNotObject", "PreToolUse", "apply_patch", `"*** Add File: a.go"`, adapters.ToolCall{Name: "apply_patch", UseID: "call_9"}, adapters.KindToolUse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := tool(tt.event, tt.tool, tt.input)
			if ev.Kind != tt.kind || ev.Tool == nil || !reflect.DeepEqual(*ev.Tool, tt.want) || ev.Spawn != nil || ev.Result != nil {
				t.Fatalf("got %s %+v (spawn %+v), want %s %+v", ev.Kind, ev.Tool, ev.Spawn, tt.kind, tt.want)
			}
		})
	}
}

func TestDecode_SubAgentEvents(t *testing.T) {
	t.Run("OwnEvent", func(t *testing.T) {
		ev := mustDecode(t, `{"hook_event_name":"Stop","session_id":"root","agent_id":"kid","agent_type":"explorer","transcript_path":"/r/kid.jsonl"}`)
		want := adapters.Event{Harness: "codex", Kind: adapters.KindStop, Name: "Stop", SessionID: "root", AgentID: "kid", AgentType: "explorer", AgentTranscriptPath: "/r/kid.jsonl"}
		if !reflect.DeepEqual(ev, want) {
			t.Fatalf("got  %+v\nwant %+v", ev, want)
		}
	})
	t.Run("NoAgentType", func(t *testing.T) {
		ev := mustDecode(t, `{"hook_event_name":"SubagentStart","session_id":"root","agent_id":"kid","transcript_path":"/r/kid.jsonl"}`)
		if ev.AgentType != "default" || ev.AgentTranscriptPath != "/r/kid.jsonl" || ev.TranscriptPath != "" {
			t.Fatalf("got %+v", ev)
		}
	})
	t.Run("SubagentStop", func(t *testing.T) {
		ev := mustDecode(t, `{"hook_event_name":"SubagentStop","session_id":"root","agent_id":"kid","transcript_path":"/r/parent.jsonl","agent_transcript_path":"/r/kid.jsonl","last_assistant_message":"done"}`)
		if ev.TranscriptPath != "" || ev.AgentTranscriptPath != "/r/kid.jsonl" || ev.Result == nil || *ev.Result != (adapters.Result{AgentID: "kid", Text: "done"}) {
			t.Fatalf("got %+v (result %+v)", ev, ev.Result)
		}
	})
	t.Run("RootEvent", func(t *testing.T) {
		ev := mustDecode(t, `{"hook_event_name":"Stop","session_id":"root","transcript_path":"/r/root.jsonl","agent_type":"x"}`)
		if ev.AgentID != "" || ev.AgentType != "" || ev.TranscriptPath != "/r/root.jsonl" || ev.AgentTranscriptPath != "" {
			t.Fatalf("got %+v", ev)
		}
	})
}

func TestDecode_Unknown(t *testing.T) {
	for _, body := range []string{
		`{"hook_event_name":"Notification"}`,
		`{"hook_event_name":"PermissionRequest","tool_name":"Bash"}`,
		`{"hook_event_name":"Interrupt","session_id":"s","extra":{"a":[1]}}`,
		`{"hook_event_name":"sessionstart","session_id":"s"}`,
	} {
		ev := mustDecode(t, body)
		if ev.Kind != adapters.KindUnknown || ev.Harness != "codex" || ev.Name != codex.HookEventName([]byte(body)) {
			t.Errorf("Decode(%s) = %+v, want KindUnknown", body, ev)
		}
	}
}

func TestDecode_Malformed(t *testing.T) {
	id := func(s string) string { return `{"hook_event_name":"Stop","session_id":` + s + `}` }
	long := strings.Repeat("a", adapters.MaxIDBytes+1)
	tests := []struct {
		name string
		body string
	}{
		{"Empty", ""},
		{"Blank", " \n\t"},
		{"NotJSON", "hello"},
		{"Array", `[{"hook_event_name":"Stop","session_id":"s"}]`},
		{"Number", "42"},
		{"String", `"Stop"`},
		{"Null", "null"},
		{"Truncated", `{"hook_event_name":"Stop","session_id":"s"`},
		{"TrailingGarbage", `{"hook_event_name":"Stop","session_id":"s"} x`},
		{"NoEventName", `{"session_id":"s"}`},
		{"EmptyEventName", `{"hook_event_name":"","session_id":"s"}`},
		{"EventNameNotString", `{"hook_event_name":5,"session_id":"s"}`},
		{"NoSessionID", `{"hook_event_name":"Stop"}`},
		{"EmptySessionID", id(`""`)},
		{"SessionIDNotString", id(`7`)},
		{"SubagentStartNoAgent", `{"hook_event_name":"SubagentStart","session_id":"s","agent_type":"default"}`},
		{"SubagentStopNoAgent", `{"hook_event_name":"SubagentStop","session_id":"s","last_assistant_message":"x"}`},
		{"SessionIDInvalidUTF8", id("\"s\xff\"")},
		{"SessionIDEscapedSurrogate", id(`"s\ud800"`)},
		{"SessionIDReplacementChar", id(`"s\ufffd"`)},
		{"SessionIDControl", id(`"s\u0001"`)},
		{"SessionIDNewline", id(`"s\n"`)},
		{"SessionIDTooLong", id(`"` + long + `"`)},
		{"AgentIDControl", `{"hook_event_name":"SubagentStart","session_id":"s","agent_id":"a\u007f"}`},
		{"AgentIDTooLong", `{"hook_event_name":"UserPromptSubmit","session_id":"s","agent_id":"` + long + `"}`},
		{"UnknownEventBadAgent", `{"hook_event_name":"Notification","agent_id":"a\tb"}`},
		{"SpawnCallIDControl", `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"spawn_agent","tool_use_id":"c\u0000"}`},
		{"ReceiptAgentControl", `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"spawn_agent","tool_response":"{\"agent_id\":\"a\\u0002\"}"}`},
		{"ReceiptAgentTooLong", `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"spawn_agent","tool_response":{"agent_id":"` + long + `"}}`},
	}
	for _, ev := range codex.Events {
		tests = append(tests, struct{ name, body string }{"NoSessionID" + ev, `{"hook_event_name":"` + ev + `","agent_id":"a"}`})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := codex.Adapter{}.Decode([]byte(tt.body))
			if !errors.Is(err, adapters.ErrMalformed) {
				t.Fatalf("Decode(%.200q) = %+v, %v; want ErrMalformed", tt.body, ev, err)
			}
		})
	}
}

func TestDecode_Tolerated(t *testing.T) {
	t.Run("IDAtTheLimit", func(t *testing.T) {
		s := strings.Repeat("a", adapters.MaxIDBytes)
		if ev := mustDecode(t, `{"hook_event_name":"Stop","session_id":"`+s+`"}`); ev.SessionID != s {
			t.Fatalf("SessionID of %d bytes not kept", adapters.MaxIDBytes)
		}
	})
	t.Run("FieldsOfOtherTypes", func(t *testing.T) {
		ev := mustDecode(t, `{"hook_event_name":"SubagentStop","session_id":"s","agent_id":"a","cwd":5,"transcript_path":null,
			"stop_hook_active":"yes","agent_transcript_path":["x"],"last_assistant_message":"done","new_field":{"a":1}}`)
		if ev.Kind != adapters.KindSubagentStop || ev.Cwd != "" || ev.AgentTranscriptPath != "" || ev.Result == nil || ev.Result.Text != "done" {
			t.Fatalf("got %+v (result %+v)", ev, ev.Result)
		}
	})
	t.Run("PromptNotString", func(t *testing.T) {
		if ev := mustDecode(t, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":{"text":"x"}}`); ev.Kind != adapters.KindPrompt || ev.Prompt != "" {
			t.Fatalf("got %+v", ev)
		}
	})
	t.Run("InvalidUTF8Prompt", func(t *testing.T) {
		ev := mustDecode(t, "{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"s\",\"prompt\":\"a\xc3\x28b\"}")
		if !utf8.ValidString(ev.Prompt) || !strings.HasPrefix(ev.Prompt, "a") {
			t.Fatalf("Prompt = %q", ev.Prompt)
		}
	})
	t.Run("HugePrompt", func(t *testing.T) {
		big := strings.Repeat("word ", 400<<10) // 2 MiB
		if ev := mustDecode(t, `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"`+big+`"}`); ev.Prompt != big {
			t.Fatalf("Prompt of %d bytes, want %d", len(ev.Prompt), len(big))
		}
	})
}

func TestHookEventName(t *testing.T) {
	for body, want := range map[string]string{
		`{"hook_event_name":"Stop"}`:   "Stop",
		`{"hook_event_name":5}`:        "",
		`{"session_id":"s"}`:           "",
		`not json`:                     "",
		`[{"hook_event_name":"Stop"}]`: "",
		``:                             "",
	} {
		if got := codex.HookEventName([]byte(body)); got != want {
			t.Errorf("HookEventName(%s) = %q, want %q", body, got, want)
		}
	}
}

// Registration names the adapter for every role Codex has.
func TestRegistration(t *testing.T) {
	r := codex.Registration()
	if r.Name != "codex" || r.Hooks == nil || r.Transcripts == nil || r.SubagentMetas == nil || !r.SpawnReceipts || r.Installer == nil {
		t.Fatalf("Registration() = %+v", r)
	}
}
