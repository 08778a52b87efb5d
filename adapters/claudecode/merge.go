package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrUpstreamReply is returned by Merge for an upstream reply it cannot use.
var ErrUpstreamReply = errors.New("unusable upstream reply")

// MaxUpstreamBytes is the largest upstream hook reply Merge accepts, in bytes.
const MaxUpstreamBytes = 1 << 20

// contextSep separates the parts of a merged context: heirloom's sections, the upstream's
// context, the cut marker. It is the separator heirloom puts between its own blocks.
const contextSep = "\n\n"

// Merge combines heirloom's context for one hook call with an upstream hook target's reply to the
// same call (an http hook's response body, or a wrapped command's stdout with exit code 0).
// event is the hook_event_name; ours is heirloom's additionalContext ("" when it adds nothing);
// maxChars caps the merged additionalContext in UTF-16 code units, as Claude Code counts it;
// zero or negative means DefaultMaxContextChars. sections are the headings that start the
// sections of ours, highest priority first (heirloom passes inject/heading.Priority()); a section
// starts at the first line of ours equal to its heading. Nil sections make ours one section.
//
// When ours is empty a usable upstream reply is returned unchanged, byte for byte (passive
// mode). An upstream JSON object is kept intact except hookSpecificOutput.additionalContext,
// which becomes ours first, then the upstream's: only that value's bytes are replaced (or the
// member is added at the end of hookSpecificOutput, with hookEventName when that is missing, or
// hookSpecificOutput is added at the end of the object), so every other byte, key order and
// unknown fields included, survives. Plain-text upstream output (not starting with '{' or '['
// once surrounding whitespace is trimmed) is the upstream's context, trimmed; an empty (or
// all-whitespace) reply is no upstream context. For both, the result is
//
//	{"hookSpecificOutput":{"hookEventName":"<event>","additionalContext":"<merged>"}}
//
// The merged context is ours, a blank line, then the upstream's context. Over the cap: the
// upstream's part is cut at its end (at a word boundary, marked " […]") or dropped first, then
// the section of ours under the last heading in sections (for heirloom: Recovered Session
// Checkpoint, then Inherited from Parent Session, then Objective Reinforcement; text under no
// heading is cut before them all), and a trailing marker, "[heirloom: cut to fit N characters:
// ...]", says what was shortened or dropped. A section keeps its heading line when shortened,
// and is dropped instead when under 32 units of text would remain. The merged context, marker
// included, is never longer than maxChars.
//
// It fails (ErrUpstreamReply) on an upstream reply that is invalid JSON (starts like JSON but
// does not parse or is not an object), invalid UTF-8, larger than MaxUpstreamBytes, or whose
// hookSpecificOutput is neither an object nor null, or whose additionalContext is neither a
// string nor null; these checks apply in passive mode too. The caller then replies with
// heirloom's context alone.
func Merge(event, ours string, upstream []byte, maxChars int, sections []string) ([]byte, error) {
	if len(upstream) > MaxUpstreamBytes {
		return nil, fmt.Errorf("%w: %d bytes, over %d", ErrUpstreamReply, len(upstream), MaxUpstreamBytes)
	}
	if !utf8.Valid(upstream) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrUpstreamReply)
	}
	if maxChars <= 0 {
		maxChars = DefaultMaxContextChars
	}
	trimmed := bytes.TrimSpace(upstream)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		obj, err := scanReply(upstream)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(ours) == "" {
			return upstream, nil
		}
		return obj.splice(event, mergeContext(ours, obj.context, maxChars, sections)), nil
	}
	if strings.TrimSpace(ours) == "" {
		return upstream, nil
	}
	return contextReply(event, mergeContext(ours, string(trimmed), maxChars, sections)), nil
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
	ac       span // the additionalContext value; start < 0 when absent
	context  string
}

// scanReply parses an upstream reply that starts like JSON and locates its hookSpecificOutput and
// additionalContext values. When a key repeats, the last one counts, as in JavaScript's JSON.parse.
func scanReply(raw []byte) (*replyObject, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%w: not valid JSON", ErrUpstreamReply)
	}
	obj := &replyObject{raw: raw, hso: span{-1, -1}, ac: span{-1, -1}}
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
	for _, m := range inner {
		switch m.key {
		case "hookEventName":
			obj.hasEvent = true
		case "additionalContext":
			obj.ac = m.value
		}
	}
	if obj.ac.start < 0 {
		return obj, nil
	}
	value = raw[obj.ac.start:obj.ac.end]
	if string(value) == "null" {
		return obj, nil
	}
	if err := json.Unmarshal(value, &obj.context); err != nil {
		return nil, fmt.Errorf("%w: additionalContext is not a string", ErrUpstreamReply)
	}
	obj.context = strings.TrimSpace(obj.context)
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

// splice returns the upstream reply with additionalContext set to context, every other byte kept.
func (o *replyObject) splice(event, context string) []byte {
	var insert []byte
	var at, cut int // replace raw[at:cut] with insert
	switch {
	case o.ac.start >= 0:
		at, cut, insert = o.ac.start, o.ac.end, jsonString(context)
	case o.hso.start >= 0 && !o.hsoNull:
		var b bytes.Buffer
		if !o.hsoEmpty {
			b.WriteByte(',')
		}
		if !o.hasEvent {
			b.WriteString(`"hookEventName":`)
			b.Write(jsonString(event))
			b.WriteByte(',')
		}
		b.WriteString(`"additionalContext":`)
		b.Write(jsonString(context))
		at, cut, insert = o.hsoClose, o.hsoClose, b.Bytes()
	case o.hso.start >= 0: // null
		at, cut = o.hso.start, o.hso.end
		insert = bytes.TrimPrefix(contextReply(event, context), []byte(`{"hookSpecificOutput":`))
		insert = insert[:len(insert)-1]
	default:
		var b bytes.Buffer
		if o.members {
			b.WriteByte(',')
		}
		r := contextReply(event, context)
		b.Write(r[1 : len(r)-1])
		at, cut, insert = o.closing, o.closing, b.Bytes()
	}
	out := make([]byte, 0, len(o.raw)-(cut-at)+len(insert))
	out = append(out, o.raw[:at]...)
	out = append(out, insert...)
	return append(out, o.raw[cut:]...)
}
