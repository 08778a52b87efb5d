package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
)

// ErrUpstreamReply is returned by Merge for an upstream reply it cannot use.
var ErrUpstreamReply = errors.New("unusable upstream reply")

// MaxUpstreamBytes is the largest upstream hook reply Merge accepts, in bytes.
const MaxUpstreamBytes = 1 << 20

// contextSep separates the parts of a merged context: heirloom's sections, the upstream's
// context, the cut marker. It is the separator heirloom puts between its own blocks.
const contextSep = "\n\n"

// Merge combines heirloom's answer to one hook call with an upstream hook target's reply to the
// same call (an http hook's response body, or a wrapped command's stdout with exit code 0).
// event is the hook_event_name; ours is heirloom's answer: its Context ("" when it adds
// nothing) and its Deny (a refused spawn); maxChars caps the merged additionalContext in UTF-16
// code units, as Claude Code counts it; zero or negative means DefaultMaxContextChars. sections
// are the headings that start the sections of ours.Context, highest priority first (heirloom
// passes inject/heading.Priority()); a section starts at the first line of ours equal to its
// heading. Nil sections make ours one section.
//
// When ours adds nothing (no context, and no refusal the event can carry) a usable upstream
// reply is returned unchanged, byte for byte (passive mode). An upstream JSON object is kept
// intact except the members of hookSpecificOutput heirloom sets: additionalContext, which
// becomes ours first, then the upstream's; and, for a refusal of a PreToolUse,
// permissionDecision, which becomes "deny" whatever the upstream decided (heirloom's refusal
// wins: Claude Code reads hookSpecificOutput's decision after the top-level "decision"), with
// permissionDecisionReason ours, then, when the upstream denied too, a blank line and its
// reason. Only those values' bytes are replaced (or the members are added at the end of
// hookSpecificOutput, with hookEventName when that is missing, or hookSpecificOutput is added
// at the end of the object), so every other byte, key order and unknown fields included,
// survives. Plain-text upstream output (not starting with '{' or '[' once surrounding
// whitespace is trimmed) is the upstream's context, trimmed; an empty (or all-whitespace) reply
// is no upstream context. For both, the result is Reply's shape:
//
//	{"hookSpecificOutput":{"hookEventName":"<event>"[,"permissionDecision":"deny","permissionDecisionReason":"<reason>"],"additionalContext":"<merged>"}}
//
// The merged context is ours, a blank line, then the upstream's context. Over the cap: the
// recent transcript of our inherited block (the section that takes what room the rest leaves)
// gives up its older part first, or is dropped, with the upstream's part kept whole up to half
// the cap (a longer one cut at its end to that half, the marker saying so); when our context has
// no such section or that is not enough, the upstream's part is cut at its end (at a word
// boundary, marked " […]") or dropped first, then
// the section of ours under the last heading in sections (for heirloom: Recovered Session
// Checkpoint, then Inherited from Parent Session, then Objective Reinforcement; text under no
// heading is cut before them all), and a trailing marker, "[heirloom: cut to fit N characters:
// ...]", says what was shortened or dropped. A section keeps its heading line when shortened,
// and is dropped instead when under 32 units of text would remain. The merged context, marker
// included, is never longer than maxChars. With a refusal and no context of ours, the
// upstream's context is left as it is.
//
// It fails (ErrUpstreamReply) on an upstream reply that is invalid JSON (starts like JSON but
// does not parse or is not an object), invalid UTF-8, larger than MaxUpstreamBytes, or whose
// hookSpecificOutput is neither an object nor null, or whose additionalContext is neither a
// string nor null; these checks apply in passive mode too. The caller then replies with
// heirloom's answer alone.
func Merge(event string, ours adapters.Answer, upstream []byte, maxChars int, sections []string) ([]byte, error) {
	if len(upstream) > MaxUpstreamBytes {
		return nil, fmt.Errorf("%w: %d bytes, over %d", ErrUpstreamReply, len(upstream), MaxUpstreamBytes)
	}
	if !utf8.Valid(upstream) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrUpstreamReply)
	}
	if maxChars <= 0 {
		maxChars = DefaultMaxContextChars
	}
	hasContext := strings.TrimSpace(ours.Context) != ""
	deny := answerMembers(event, adapters.Answer{Deny: ours.Deny})
	passive := !hasContext && len(deny) == 0
	trimmed := bytes.TrimSpace(upstream)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		obj, err := scanReply(upstream)
		if err != nil {
			return nil, err
		}
		if passive {
			return upstream, nil
		}
		if len(deny) > 0 && obj.denied && obj.reason != "" {
			deny[1].value += contextSep + obj.reason
		}
		set := deny
		if hasContext {
			set = append(set, setting{"additionalContext", mergeContext(ours.Context, obj.context, maxChars, sections)})
		}
		return obj.splice(event, set), nil
	}
	if passive {
		return upstream, nil
	}
	set := deny
	switch {
	case hasContext:
		set = append(set, setting{"additionalContext", mergeContext(ours.Context, string(trimmed), maxChars, sections)})
	case len(trimmed) > 0 && acceptsContext(event):
		set = append(set, setting{"additionalContext", string(trimmed)})
	}
	return hookReply(event, set), nil
}

// span is a value's byte range [start, end) in the upstream reply.
type span struct{ start, end int }

// replyObject locates, in an upstream JSON object, what Merge replaces or extends.
type replyObject struct {
	raw      []byte
	closing  int  // offset of the object's closing '}'
	members  bool // the object has at least one member
	hso      span // the hookSpecificOutput value; start < 0 when absent
	hsoNull  bool // that value is null
	hsoClose int  // offset of hookSpecificOutput's closing '}' when it is an object
	hsoEmpty bool // hookSpecificOutput is an object without members
	hasEvent bool // hookSpecificOutput names hookEventName
	// inner are the value spans of hookSpecificOutput's members, by key (the last of a
	// repeated key).
	inner   map[string]span
	context string // additionalContext, trimmed; "" when absent or null
	denied  bool   // permissionDecision is "deny"
	reason  string // permissionDecisionReason, trimmed, when a string
}

// scanReply parses an upstream reply that starts like JSON and locates its hookSpecificOutput and
// the members Merge sets. When a key repeats, the last one counts, as in JavaScript's JSON.parse.
func scanReply(raw []byte) (*replyObject, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%w: not valid JSON", ErrUpstreamReply)
	}
	obj := &replyObject{raw: raw, hso: span{-1, -1}}
	members, closing, ok := objectMembers(raw, 0)
	if !ok {
		return nil, fmt.Errorf("%w: not a JSON object", ErrUpstreamReply)
	}
	obj.closing, obj.members = closing, len(members) > 0
	for _, m := range members {
		if m.key == "hookSpecificOutput" {
			obj.hso = m.value
		}
	}
	if obj.hso.start < 0 {
		return obj, nil
	}
	value := raw[obj.hso.start:obj.hso.end]
	if string(value) == "null" {
		obj.hsoNull = true
		return obj, nil
	}
	inner, hsoClose, ok := objectMembers(raw, obj.hso.start)
	if !ok {
		return nil, fmt.Errorf("%w: hookSpecificOutput is not an object", ErrUpstreamReply)
	}
	obj.hsoClose, obj.hsoEmpty = hsoClose, len(inner) == 0
	obj.inner = make(map[string]span, len(inner))
	for _, m := range inner {
		obj.inner[m.key] = m.value
	}
	_, obj.hasEvent = obj.inner["hookEventName"]
	if ac, ok := obj.inner["additionalContext"]; ok && string(raw[ac.start:ac.end]) != "null" {
		if err := json.Unmarshal(raw[ac.start:ac.end], &obj.context); err != nil {
			return nil, fmt.Errorf("%w: additionalContext is not a string", ErrUpstreamReply)
		}
		obj.context = strings.TrimSpace(obj.context)
	}
	var decision string
	if v, ok := obj.inner["permissionDecision"]; ok && json.Unmarshal(raw[v.start:v.end], &decision) == nil {
		obj.denied = decision == "deny"
	}
	if v, ok := obj.inner["permissionDecisionReason"]; ok && json.Unmarshal(raw[v.start:v.end], &obj.reason) == nil {
		obj.reason = strings.TrimSpace(obj.reason)
	}
	return obj, nil
}

// member is one key of a JSON object and its value's span.
type member struct {
	key   string
	value span
}

// objectMembers reads the JSON object starting at raw[at:] (after whitespace), which must be
// valid JSON, and returns its members in order and the offset of its closing '}'. ok is false
// when the value there is not an object.
func objectMembers(raw []byte, at int) (members []member, closing int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw[at:]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, 0, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, 0, false
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, 0, false
		}
		end := at + int(dec.InputOffset())
		start := end - len(value)
		if start < at || !bytes.Equal(raw[start:end], value) {
			return nil, 0, false // unreachable for valid JSON: Decode returns the value's bytes
		}
		members = append(members, member{key: key, value: span{start, end}})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, 0, false
	}
	closing = at + int(dec.InputOffset()) - 1
	if raw[closing] != '}' {
		return nil, 0, false
	}
	return members, closing, true
}

// splice returns the upstream reply with hookSpecificOutput's members in set given their
// values, every other byte kept: a member present is replaced in place, the others are added
// at the end of hookSpecificOutput (with hookEventName when it has none), or hookSpecificOutput
// is made of them, replacing a null or added at the end of the object.
func (o *replyObject) splice(event string, set []setting) []byte {
	type edit struct {
		at, cut int // replace raw[at:cut] with insert
		insert  []byte
	}
	var edits []edit
	switch {
	case o.hso.start >= 0 && !o.hsoNull:
		var added [][]byte
		for _, m := range set {
			if v, ok := o.inner[m.key]; ok {
				edits = append(edits, edit{v.start, v.end, jsonString(m.value)})
				continue
			}
			added = append(added, slices.Concat(jsonString(m.key), []byte(":"), jsonString(m.value)))
		}
		if len(added) > 0 {
			if !o.hasEvent {
				added = slices.Insert(added, 0, slices.Concat([]byte(`"hookEventName":`), jsonString(event)))
			}
			insert := bytes.Join(added, []byte(","))
			if !o.hsoEmpty {
				insert = slices.Concat([]byte(","), insert)
			}
			edits = append(edits, edit{o.hsoClose, o.hsoClose, insert})
		}
	case o.hso.start >= 0: // null
		r := hookReply(event, set)
		insert := bytes.TrimPrefix(r, []byte(`{"hookSpecificOutput":`))
		edits = append(edits, edit{o.hso.start, o.hso.end, insert[:len(insert)-1]})
	default:
		var b bytes.Buffer
		if o.members {
			b.WriteByte(',')
		}
		r := hookReply(event, set)
		b.Write(r[1 : len(r)-1])
		edits = append(edits, edit{o.closing, o.closing, b.Bytes()})
	}
	slices.SortFunc(edits, func(a, b edit) int { return b.at - a.at })
	out := o.raw
	for _, e := range edits {
		next := make([]byte, 0, len(out)-(e.cut-e.at)+len(e.insert))
		next = append(next, out[:e.at]...)
		next = append(next, e.insert...)
		out = append(next, out[e.cut:]...)
	}
	return out
}
