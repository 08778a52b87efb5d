package claudecode

import (
	"bytes"
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

// HookSpecificOutput carries context for the model. HookEventName must repeat the event
// replied to; Claude Code ignores output naming another event.
type HookSpecificOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// Reply encodes the reply to ev carrying context for the model:
//
//	{"hookSpecificOutput":{"hookEventName":"<ev.Name>","additionalContext":"<context>"}}
//
// for the events whose reply accepts additionalContext (SessionStart, UserPromptSubmit,
// SubagentStart, PreToolUse, PostToolUse, PostToolUseFailure), and {} for an empty context or
// any other event. ev.Name selects the event; when it is empty the name is derived from ev.Kind.
// The result is always valid JSON: invalid UTF-8 in context becomes U+FFFD.
func (Adapter) Reply(ev adapters.Event, context string) []byte {
	name := ev.Name
	if name == "" {
		name = eventNameOf(ev.Kind)
	}
	if context == "" || !acceptsContext(name) {
		return []byte("{}")
	}
	return contextReply(name, context)
}

// ReplyContext returns hookSpecificOutput.additionalContext of a hook reply, or "" when the
// reply carries none or is not a JSON object.
func ReplyContext(reply []byte) string {
	var out HookOutput
	if err := json.Unmarshal(reply, &out); err != nil || out.HookSpecificOutput == nil {
		return ""
	}
	return out.HookSpecificOutput.AdditionalContext
}

// contextReply encodes the reply carrying context for the named event, whatever the event:
//
//	{"hookSpecificOutput":{"hookEventName":"<event>","additionalContext":"<context>"}}
//
// Invalid UTF-8 in either string becomes U+FFFD.
func contextReply(event, context string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"hookSpecificOutput":{"hookEventName":`)
	b.Write(jsonString(event))
	b.WriteString(`,"additionalContext":`)
	b.Write(jsonString(context))
	b.WriteString(`}}`)
	return b.Bytes()
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
