package codex

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
)

// Reply encodes heirloom's answer to ev as Codex 0.169's hook output schemas accept it (the
// schemas forbid members they do not list, and Codex counts such a reply as a failed hook):
//
//	{"hookSpecificOutput":{"hookEventName":"<Event>","additionalContext":"<context>"}}
//
// for SessionStart, UserPromptSubmit, SubagentStart, PreToolUse and PostToolUse, whose
// additionalContext reaches the model as a developer message (SubagentStart's in the
// sub-agent's first request, just before its task). A refusal (a.Deny) of a PreToolUse is
//
//	{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"<a.Deny>"}}
//
// Anything else, or nothing, is {}. ev.Name selects the event. The result is always valid JSON.
func (Adapter) Reply(ev adapters.Event, a adapters.Answer) []byte {
	var set [][2]string
	if a.Deny != "" && ev.Name == EventPreToolUse {
		set = append(set, [2]string{"permissionDecision", "deny"}, [2]string{"permissionDecisionReason", a.Deny})
	}
	if a.Context != "" && AcceptsContext(ev.Name) {
		set = append(set, [2]string{"additionalContext", FitContext(a.Context)})
	}
	if len(set) == 0 {
		return []byte("{}")
	}
	var b bytes.Buffer
	b.WriteString(`{"hookSpecificOutput":{"hookEventName":`)
	b.Write(jsonString(ev.Name))
	for _, m := range set {
		b.WriteByte(',')
		b.Write(jsonString(m[0]))
		b.WriteByte(':')
		b.Write(jsonString(m[1]))
	}
	b.WriteString(`}}`)
	return b.Bytes()
}

// ContextCapBytes is the most bytes of additionalContext Codex 0.169 hands the model as it is:
// past it, Codex cuts the text and appends the path of a file holding the whole (verified: 10,000
// bytes pass whole, 10,010 do not, in ASCII and in 3-byte characters alike). heirloom's budgets
// count UTF-16 units, so a block in mostly non-ASCII text can be longer in bytes: Reply cuts it.
const ContextCapBytes = 10000

// cutNote ends a context FitContext cut.
const cutNote = "\n[heirloom: cut to Codex's 10,000-byte context limit]"

// FitContext returns s when it is within ContextCapBytes, else its head cut at the last line
// end (or, lacking one, rune boundary) that leaves room for a note saying so: the blocks put
// their most important sections first, so the cut drops the least important.
func FitContext(s string) string {
	if len(s) <= ContextCapBytes {
		return s
	}
	head := s[:ContextCapBytes-len(cutNote)]
	if i := strings.LastIndexByte(head, '\n'); i > len(head)/2 {
		head = head[:i]
	} else {
		for len(head) > 0 && !utf8.RuneStart(s[len(head)]) {
			head = head[:len(head)-1]
		}
	}
	return head + cutNote
}

// AcceptsContext reports whether Codex reads hookSpecificOutput.additionalContext in the reply
// to the named event.
func AcceptsContext(event string) bool {
	switch event {
	case EventSessionStart, EventUserPromptSubmit, EventSubagentStart, EventPreToolUse, EventPostToolUse:
		return true
	}
	return false
}

// jsonString encodes s as a JSON string without HTML escaping; invalid UTF-8 becomes U+FFFD.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
