package codex_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/codex"
)

func TestReply(t *testing.T) {
	ev := func(name string) adapters.Event { return adapters.Event{Harness: "codex", Name: name} }
	ctx := func(name, c string) string {
		return `{"hookSpecificOutput":{"hookEventName":"` + name + `","additionalContext":"` + c + `"}}`
	}
	tests := []struct {
		name string
		ev   adapters.Event
		a    adapters.Answer
		want string
	}{
		{"SessionStart", ev("SessionStart"), adapters.Answer{Context: "x"}, ctx("SessionStart", "x")},
		{"UserPromptSubmit", ev("UserPromptSubmit"), adapters.Answer{Context: "x"}, ctx("UserPromptSubmit", "x")},
		{"SubagentStart", ev("SubagentStart"), adapters.Answer{Context: "## Inherited from Parent Session\nobjective"},
			ctx("SubagentStart", `## Inherited from Parent Session\nobjective`)},
		{"PreToolUse", ev("PreToolUse"), adapters.Answer{Context: "x"}, ctx("PreToolUse", "x")},
		{"PostToolUse", ev("PostToolUse"), adapters.Answer{Context: "x"}, ctx("PostToolUse", "x")},
		{"QuotesAndMarkup", ev("SessionStart"), adapters.Answer{Context: "say \"hi\" <b>&amp;</b> \\ \t"},
			ctx("SessionStart", `say \"hi\" <b>&amp;</b> \\ \t`)},
		{"InvalidUTF8", ev("UserPromptSubmit"), adapters.Answer{Context: "a\xffb"}, ctx("UserPromptSubmit", `a\ufffdb`)},
		{"Deny", ev("PreToolUse"), adapters.Answer{Deny: "depth 2 exceeds spawn.max_depth 1"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"depth 2 exceeds spawn.max_depth 1"}}`},
		{"DenyAndContext", ev("PreToolUse"), adapters.Answer{Context: "c", Deny: "no <more>"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no <more>","additionalContext":"c"}}`},
		{"DenyOnPostToolUse", ev("PostToolUse"), adapters.Answer{Deny: "no"}, `{}`},
		{"DenyOnPostToolUseWithContext", ev("PostToolUse"), adapters.Answer{Context: "c", Deny: "no"}, ctx("PostToolUse", "c")},
		{"DenyOnSubagentStart", ev("SubagentStart"), adapters.Answer{Deny: "no"}, `{}`},
		{"DenyOnPermissionRequest", ev("PermissionRequest"), adapters.Answer{Deny: "no"}, `{}`},
		{"EmptyAnswer", ev("SessionStart"), adapters.Answer{}, `{}`},
		{"Stop", ev("Stop"), adapters.Answer{Context: "x"}, `{}`},
		{"SessionEnd", ev("SessionEnd"), adapters.Answer{Context: "x"}, `{}`},
		{"SubagentStop", ev("SubagentStop"), adapters.Answer{Context: "x"}, `{}`},
		{"PreCompact", ev("PreCompact"), adapters.Answer{Context: "x"}, `{}`},
		{"PostCompact", ev("PostCompact"), adapters.Answer{Context: "x"}, `{}`},
		{"PermissionRequest", ev("PermissionRequest"), adapters.Answer{Context: "x"}, `{}`},
		{"Unknown", ev("Notification"), adapters.Answer{Context: "x"}, `{}`},
		// ev.Name selects the reply, not ev.Kind: a spawn is a PreToolUse.
		{"KindIgnored", adapters.Event{Kind: adapters.KindPrompt}, adapters.Answer{Context: "x"}, `{}`},
		{"SpawnKind", adapters.Event{Name: "PreToolUse", Kind: adapters.KindSpawn}, adapters.Answer{Deny: "d"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"d"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(codex.Adapter{}.Reply(tt.ev, tt.a)); got != tt.want {
				t.Fatalf("Reply = %s\nwant    %s", got, tt.want)
			}
		})
	}
}

func TestAcceptsContext(t *testing.T) {
	var got []string
	for _, name := range append(slices.Clone(codex.Events), "PermissionRequest", "Notification", "") {
		if codex.AcceptsContext(name) {
			got = append(got, name)
		}
	}
	want := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "SubagentStart"}
	if !slices.Equal(got, want) {
		t.Fatalf("AcceptsContext is true for %v, want %v", got, want)
	}
}

// replyOutput is what Reply may write, read back.
type replyOutput struct {
	HookSpecificOutput *struct {
		HookEventName            string `json:"hookEventName"`
		AdditionalContext        string `json:"additionalContext"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

func TestReply_AlwaysValidJSON(t *testing.T) {
	texts := []string{
		"plain",
		"line\nbreak \"quoted\" \\ back",
		"bad utf-8 \xff\xfe \xc3\x28 \xed\xa0\x80 end",
		"nul \x00 and controls \x01\x1f \u2028\u2029",
		"<script>&amp;</script>",
		strings.Repeat("é", 20000),
	}
	names := append(slices.Clone(codex.Events), "PermissionRequest", "Weird\xff\"Name", "")
	for _, name := range names {
		for _, c := range texts {
			for _, a := range []adapters.Answer{{Context: c}, {Deny: c}, {Context: c, Deny: c}} {
				b := codex.Adapter{}.Reply(adapters.Event{Name: name}, a)
				if !json.Valid(b) {
					t.Fatalf("Reply(%q, %.40q) is not valid JSON: %.200s", name, c, b)
				}
				var out replyOutput
				if err := json.Unmarshal(b, &out); err != nil {
					t.Fatal(err)
				}
				if out.HookSpecificOutput != nil && out.HookSpecificOutput.HookEventName != name {
					t.Errorf("hookEventName = %q, want %q", out.HookSpecificOutput.HookEventName, name)
				}
			}
		}
	}
	// Valid UTF-8 comes back unchanged, and nothing is HTML-escaped.
	c := texts[1] + texts[3] + texts[4]
	b := codex.Adapter{}.Reply(adapters.Event{Name: "PreToolUse"}, adapters.Answer{Context: c, Deny: c})
	var out replyOutput
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if h := out.HookSpecificOutput; h.AdditionalContext != c || h.PermissionDecisionReason != c || h.PermissionDecision != "deny" {
		t.Errorf("read back %+v, want context and reason %q", h, c)
	}
	if s := string(b); !strings.Contains(s, "<script>&amp;</script>") || strings.Contains(s, `\u003c`) || strings.Contains(s, `\u0026`) {
		t.Errorf("reply escapes HTML: %s", s)
	}
}

// schemaFiles names, by event, Codex 0.169's schema of a command hook's output, copied from
// its source into testdata/schemas. SessionEnd has none: its output is ignored.
var schemaFiles = map[string]string{
	"SessionStart":      "session-start",
	"UserPromptSubmit":  "user-prompt-submit",
	"SubagentStart":     "subagent-start",
	"PreToolUse":        "pre-tool-use",
	"PostToolUse":       "post-tool-use",
	"Stop":              "stop",
	"SubagentStop":      "subagent-stop",
	"PreCompact":        "pre-compact",
	"PostCompact":       "post-compact",
	"PermissionRequest": "permission-request",
}

// outputSchema is the part of a JSON schema checkSchema reads.
type outputSchema struct {
	Properties map[string]struct {
		AllOf []struct {
			Ref string `json:"$ref"`
		} `json:"allOf"`
	} `json:"properties"`
	Definitions map[string]struct {
		Properties map[string]struct {
			Const string `json:"const"`
		} `json:"properties"`
		Required []string `json:"required"`
	} `json:"definitions"`
}

// schemaProblems says what in reply the event's output schema does not allow: every member
// must be listed in the schema (they all forbid others), hookSpecificOutput's too, with its
// required members and hookEventName's const. An event without a schema must get {}.
func schemaProblems(tb testing.TB, event string, reply []byte) []string {
	tb.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(reply, &top); err != nil {
		return []string{fmt.Sprintf("not a JSON object: %v", err)}
	}
	file, ok := schemaFiles[event]
	if !ok {
		if len(top) != 0 {
			return []string{"no schema, and not {}"}
		}
		return nil
	}
	var s outputSchema
	if err := json.Unmarshal(mustReadFile(tb, filepath.Join("testdata", "schemas", file+".command.output.json")), &s); err != nil {
		tb.Fatal(err)
	}
	var problems []string
	for k := range top {
		if _, ok := s.Properties[k]; !ok {
			problems = append(problems, fmt.Sprintf("%q is not listed", k))
		}
	}
	raw, ok := top["hookSpecificOutput"]
	if !ok {
		return problems
	}
	p := s.Properties["hookSpecificOutput"]
	if len(p.AllOf) != 1 {
		return append(problems, "the schema's hookSpecificOutput has no $ref")
	}
	def, ok := s.Definitions[strings.TrimPrefix(p.AllOf[0].Ref, "#/definitions/")]
	if !ok {
		return append(problems, "the schema has no definition "+p.AllOf[0].Ref)
	}
	var hso map[string]json.RawMessage
	if err := json.Unmarshal(raw, &hso); err != nil {
		return append(problems, fmt.Sprintf("hookSpecificOutput is no object: %v", err))
	}
	for k := range hso {
		if _, ok := def.Properties[k]; !ok {
			problems = append(problems, fmt.Sprintf("hookSpecificOutput.%s is not listed", k))
		}
	}
	for _, k := range def.Required {
		if _, ok := hso[k]; !ok {
			problems = append(problems, fmt.Sprintf("hookSpecificOutput lacks required %q", k))
		}
	}
	if c := def.Properties["hookEventName"].Const; c != "" && string(hso["hookEventName"]) != `"`+c+`"` {
		problems = append(problems, fmt.Sprintf("hookEventName is %s, not %q", hso["hookEventName"], c))
	}
	return problems
}

// Every reply Reply can give passes the output schema of the event it answers.
func TestReply_Schemas(t *testing.T) {
	for _, event := range append(slices.Clone(codex.Events), "PermissionRequest") {
		for _, a := range []adapters.Answer{{}, {Context: "c"}, {Deny: "d"}, {Context: "c", Deny: "d"}} {
			b := codex.Adapter{}.Reply(adapters.Event{Name: event}, a)
			if p := schemaProblems(t, event, b); len(p) != 0 {
				t.Errorf("Reply(%s, %+v) = %s: %v", event, a, b, p)
			}
		}
	}
	// The check finds what Codex would reject.
	for _, tt := range []struct{ event, reply string }{
		{"Stop", `{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"c"}}`},
		{"PostToolUse", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}`},
		{"SessionStart", `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"c"}}`},
		{"SubagentStart", `{"hookSpecificOutput":{"additionalContext":"c"}}`},
		{"SessionEnd", `{"continue":true}`},
	} {
		if p := schemaProblems(t, tt.event, []byte(tt.reply)); len(p) == 0 {
			t.Errorf("schemaProblems(%s, %s) found nothing", tt.event, tt.reply)
		}
	}
}

// Every decoded recorded event gets a valid reply, with context exactly where Codex reads it.
func TestReply_Recordings(t *testing.T) {
	for _, tt := range []struct{ scenario, root string }{{nested, nestedRoot}, {parallel, parallelRoot}, {compactResumed, compactRoot}} {
		for _, ev := range decodeStream(t, tt.scenario, tt.root) {
			b := codex.Adapter{}.Reply(ev, adapters.Answer{Context: "PROBE"})
			if p := schemaProblems(t, ev.Name, b); len(p) != 0 {
				t.Errorf("%s %s: reply %s: %v", tt.scenario, ev.Name, b, p)
			}
			var out replyOutput
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatalf("%s %s: %v", tt.scenario, ev.Name, err)
			}
			switch ev.Name {
			case "SessionStart", "UserPromptSubmit", "SubagentStart", "PreToolUse", "PostToolUse":
				if out.HookSpecificOutput == nil || out.HookSpecificOutput.AdditionalContext != "PROBE" {
					t.Errorf("%s %s: reply %s carries no context", tt.scenario, ev.Name, b)
				}
			default:
				if string(b) != "{}" {
					t.Errorf("%s %s: reply %s, want {}", tt.scenario, ev.Name, b)
				}
			}
		}
	}
}
