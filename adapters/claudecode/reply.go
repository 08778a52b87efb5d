package claudecode

import (
	"bytes"
	"cmp"
	"encoding/json"

	"github.com/heirloom-dev/heirloom/adapters"
)

// ContextCap is the additionalContext length, in characters, above which Claude Code replaces
// the context with a file path and a short preview. Reply does not enforce it: callers budget
// their text below it, most important sections first. It is adapters.MaxContextCharsMax, the
// largest cap a user may configure.
const ContextCap = adapters.MaxContextCharsMax

// DefaultMaxContextChars is the budget heirloom keeps additionalContext within when it is given
// none (see Merge): under ContextCap, so Claude Code shows the context itself. It is
// adapters.DefaultMaxContextChars, named here for the hook shim's readers.
const DefaultMaxContextChars = adapters.DefaultMaxContextChars

// HookOutput is the JSON a hook replies with. Its zero value encodes as {}: nothing to add.
type HookOutput struct {
	HookSpecificOutput *HookSpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// HookSpecificOutput carries context for the model and, in a PreToolUse reply, the permission
// decision on the tool call. HookEventName must repeat the event replied to; Claude Code
// ignores output naming another event.
type HookSpecificOutput struct {
	HookEventName string `json:"hookEventName"`
	// PermissionDecision (PreToolUse only) is "allow", "deny", "ask" or "defer"; heirloom sets
	// only "deny", whose PermissionDecisionReason Claude Code hands the model as the tool's
	// error.
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}

// Reply encodes heirloom's answer to ev. A refusal (a.Deny) of a PreToolUse, the only event
// that asks before its tool runs, is a deny decision, whose reason Claude Code 2.1.197 hands
// the model as the tool call's error:
//
//	{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"<a.Deny>"}}
//
// Context for the model (a.Context) is
//
//	{"hookSpecificOutput":{"hookEventName":"<ev.Name>","additionalContext":"<context>"}}
//
// for the events whose reply accepts additionalContext (SessionStart, UserPromptSubmit,
// SubagentStart, PreToolUse, PostToolUse, PostToolUseFailure), after the decision when both are
// given. Anything else, or nothing, is {}. ev.Name selects the event; when it is empty the name
// is derived from ev.Kind. The result is always valid JSON: invalid UTF-8 becomes U+FFFD.
func (Adapter) Reply(ev adapters.Event, a adapters.Answer) []byte {
	name := ev.Name
	if name == "" {
		name = eventNameOf(ev.Kind)
	}
	set := answerMembers(name, a)
	if len(set) == 0 {
		return []byte("{}")
	}
	return hookReply(name, set)
}

// ReplyAnswer reads heirloom's answer back out of a hook reply: its
// hookSpecificOutput.additionalContext, and its permissionDecisionReason when the decision is
// "deny" (a deny without a reason reads "denied"). A reply that is not a JSON object answers
// nothing.
func ReplyAnswer(reply []byte) adapters.Answer {
	var out HookOutput
	if err := json.Unmarshal(reply, &out); err != nil || out.HookSpecificOutput == nil {
		return adapters.Answer{}
	}
	o := out.HookSpecificOutput
	a := adapters.Answer{Context: o.AdditionalContext}
	if o.PermissionDecision == "deny" {
		a.Deny = cmp.Or(o.PermissionDecisionReason, "denied")
	}
	return a
}

// setting is one hookSpecificOutput member heirloom sets: its key and its string value.
type setting struct{ key, value string }

// answerMembers returns the hookSpecificOutput members that carry a to the named event, in the
// order a reply writes them: the decision first, then the context.
func answerMembers(event string, a adapters.Answer) []setting {
	var set []setting
	if a.Deny != "" && event == EventPreToolUse {
		set = append(set, setting{"permissionDecision", "deny"}, setting{"permissionDecisionReason", a.Deny})
	}
	if a.Context != "" && acceptsContext(event) {
		set = append(set, setting{"additionalContext", a.Context})
	}
	return set
}

// hookReply encodes a reply setting the given members for the named event, whatever the event:
//
//	{"hookSpecificOutput":{"hookEventName":"<event>","<key>":"<value>",…}}
//
// Invalid UTF-8 in any string becomes U+FFFD.
func hookReply(event string, set []setting) []byte {
	var b bytes.Buffer
	b.WriteString(`{"hookSpecificOutput":{"hookEventName":`)
	b.Write(jsonString(event))
	for _, m := range set {
		b.WriteByte(',')
		b.Write(jsonString(m.key))
		b.WriteByte(':')
		b.Write(jsonString(m.value))
	}
	b.WriteString(`}}`)
	return b.Bytes()
}

// contextReply encodes the reply carrying context for the named event, whatever the event:
//
//	{"hookSpecificOutput":{"hookEventName":"<event>","additionalContext":"<context>"}}
func contextReply(event, context string) []byte {
	return hookReply(event, []setting{{"additionalContext", context}})
}

// jsonString encodes s as a JSON string, without HTML escaping: Claude Code reads the context as
// it is, and "<" stays readable to anyone inspecting a reply.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// acceptsContext reports whether Claude Code reads hookSpecificOutput.additionalContext in the
// reply to the named event.
func acceptsContext(name string) bool {
	switch name {
	case EventSessionStart, EventUserPromptSubmit, EventSubagentStart,
		EventPreToolUse, EventPostToolUse, EventPostToolUseFailure:
		return true
	}
	return false
}

// eventNameOf names the Claude Code event a kind comes from, for events built without a Name.
// Kinds that several events share resolve to the success event (PostToolUse).
func eventNameOf(k adapters.Kind) string {
	switch k {
	case adapters.KindSessionStart:
		return EventSessionStart
	case adapters.KindPrompt:
		return EventUserPromptSubmit
	case adapters.KindSpawn, adapters.KindToolUse:
		return EventPreToolUse
	case adapters.KindSpawnResult, adapters.KindToolResult:
		return EventPostToolUse
	case adapters.KindSubagentStart:
		return EventSubagentStart
	case adapters.KindSubagentStop:
		return EventSubagentStop
	case adapters.KindPreCompact:
		return EventPreCompact
	case adapters.KindStop:
		return EventStop
	case adapters.KindSessionEnd:
		return EventSessionEnd
	}
	return ""
}
