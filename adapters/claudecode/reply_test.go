package claudecode_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
)

func TestReply(t *testing.T) {
	ev := func(name string, k adapters.Kind) adapters.Event {
		return adapters.Event{Harness: "claude-code", Name: name, Kind: k}
	}
	tests := []struct {
		name    string
		ev      adapters.Event
		context string
		want    string
	}{
		{"SubagentStart", ev("SubagentStart", adapters.KindSubagentStart), "## Inherited from Parent Session\nobjective",
			`{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"## Inherited from Parent Session\nobjective"}}`},
		{"SessionStart", ev("SessionStart", adapters.KindSessionStart), "x",
			`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"x"}}`},
		{"UserPromptSubmit", ev("UserPromptSubmit", adapters.KindPrompt), "x",
			`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"x"}}`},
		{"PreToolUse", ev("PreToolUse", adapters.KindSpawn), "x",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"x"}}`},
		{"PostToolUse", ev("PostToolUse", adapters.KindToolResult), "x",
			`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"x"}}`},
		{"PostToolUseFailure", ev("PostToolUseFailure", adapters.KindSpawnResult), "x",
			`{"hookSpecificOutput":{"hookEventName":"PostToolUseFailure","additionalContext":"x"}}`},
		{"QuotesAndMarkup", ev("SessionStart", adapters.KindSessionStart), "say \"hi\" <b>&\\ \t",
			`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"say \"hi\" <b>&\\ \t"}}`},
		{"NameFromKind", adapters.Event{Kind: adapters.KindPrompt}, "x",
			`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"x"}}`},
		{"EmptyContext", ev("SubagentStart", adapters.KindSubagentStart), "", `{}`},
		{"Stop", ev("Stop", adapters.KindStop), "x", `{}`},
		{"SubagentStop", ev("SubagentStop", adapters.KindSubagentStop), "x", `{}`},
		{"PreCompact", ev("PreCompact", adapters.KindPreCompact), "x", `{}`},
		{"SessionEnd", ev("SessionEnd", adapters.KindSessionEnd), "x", `{}`},
		{"Unknown", ev("Notification", adapters.KindUnknown), "x", `{}`},
		{"ZeroEvent", adapters.Event{}, "x", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(claudecode.Adapter{}.Reply(tt.ev, adapters.Answer{Context: tt.context})); got != tt.want {
				t.Fatalf("Reply = %s\nwant    %s", got, tt.want)
			}
		})
	}
}

func TestReply_AlwaysValidJSON(t *testing.T) {
	contexts := []string{
		"plain",
		"line\nbreak \"quoted\" \\ back",
		"bad utf-8 \xff\xfe \xc3\x28 \xed\xa0\x80 end",
		"nul \x00 and controls \x01\x1f \u2028\u2029",
		strings.Repeat("é", 20000),
	}
	for _, name := range []string{"SessionStart", "UserPromptSubmit", "SubagentStart", "PostToolUse", "Stop", "Weird\xff\"Name"} {
		for _, c := range contexts {
			b := claudecode.Adapter{}.Reply(adapters.Event{Name: name}, adapters.Answer{Context: c})
			if !json.Valid(b) {
				t.Fatalf("Reply(%q, %.40q) is not valid JSON: %.200s", name, c, b)
			}
			var out claudecode.HookOutput
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			if out.HookSpecificOutput != nil && out.HookSpecificOutput.HookEventName != name {
				t.Errorf("hookEventName = %q, want %q", out.HookSpecificOutput.HookEventName, name)
			}
		}
	}
	// Valid UTF-8 context comes back unchanged.
	c := contexts[1] + contexts[3]
	var out claudecode.HookOutput
	if err := json.Unmarshal(claudecode.Adapter{}.Reply(adapters.Event{Name: "SubagentStart"}, adapters.Answer{Context: c}), &out); err != nil {
		t.Fatal(err)
	}
	if got := out.HookSpecificOutput.AdditionalContext; got != c {
		t.Errorf("additionalContext = %q, want %q", got, c)
	}
}

// Every decoded fixture event gets a valid reply, with context exactly where Claude Code reads it.
func TestReply_Fixtures(t *testing.T) {
	for _, path := range hookStreams {
		for _, ev := range decodeStream(t, path) {
			b := claudecode.Adapter{}.Reply(ev, adapters.Answer{Context: "PROBE"})
			var out claudecode.HookOutput
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatalf("%s %s: %v", path, ev.Name, err)
			}
			switch ev.Name {
			case "SessionStart", "UserPromptSubmit", "SubagentStart", "PreToolUse", "PostToolUse":
				if out.HookSpecificOutput == nil || out.HookSpecificOutput.AdditionalContext != "PROBE" {
					t.Errorf("%s %s: reply %s carries no context", path, ev.Name, b)
				}
			default:
				if string(b) != "{}" {
					t.Errorf("%s %s: reply %s, want {}", path, ev.Name, b)
				}
			}
		}
	}
}

func TestReplyAnswer(t *testing.T) {
	tests := []struct {
		name, reply string
		want        adapters.Answer
	}{
		{"Context", `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"a \"b\"\nc"}}`, adapters.Answer{Context: "a \"b\"\nc"}},
		{"OtherFields", `{"continue":true,"hookSpecificOutput":{"additionalContext":"x","permissionDecision":"allow"}}`, adapters.Answer{Context: "x"}},
		{"Deny", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"too deep"}}`, adapters.Answer{Deny: "too deep"}},
		{"DenyNoReason", `{"hookSpecificOutput":{"permissionDecision":"deny"}}`, adapters.Answer{Deny: "denied"}},
		{"Empty", `{}`, adapters.Answer{}},
		{"NullOutput", `{"hookSpecificOutput":null}`, adapters.Answer{}},
		{"NotAString", `{"hookSpecificOutput":{"additionalContext":3}}`, adapters.Answer{}},
		{"NotJSON", `not json`, adapters.Answer{}},
		{"Nil", ``, adapters.Answer{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := claudecode.ReplyAnswer([]byte(tt.reply)); got != tt.want {
				t.Fatalf("ReplyAnswer(%s) = %+v, want %+v", tt.reply, got, tt.want)
			}
		})
	}
	// It reads back what Reply encodes.
	for _, a := range []adapters.Answer{
		{Context: "## Inherited from Parent Session\n<b>&</b> \u2028 😀"},
		{Deny: "heirloom refused this sub-agent: depth 2 exceeds spawn.max_depth 1"},
		{Context: "x", Deny: "no"},
	} {
		if got := claudecode.ReplyAnswer(claudecode.Adapter{}.Reply(adapters.Event{Name: "PreToolUse"}, a)); got != a {
			t.Fatalf("ReplyAnswer(Reply(%+v)) = %+v", a, got)
		}
	}
}
