package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/inject"
)

// ErrUpstreamReply is returned by Merge for an upstream reply it cannot use.
var ErrUpstreamReply = errors.New("unusable upstream reply")

// MaxUpstreamBytes is the largest upstream hook reply Merge accepts, in bytes.
const MaxUpstreamBytes = 1 << 20

// The headings that start heirloom's context sections (DESIGN §3), highest priority first: when
// a merged context is over the cap, the lowest-priority section is cut first.
var sectionHeadings = []string{
	inject.ObjectiveHeading,
	inject.InheritedHeading,
	inject.RecoveredHeading,
}

// contextSep separates the parts of a merged context: heirloom's sections, the upstream's
// context, the cut marker. It is the separator inject.Join puts between blocks.
const contextSep = "\n\n"

// Merge combines heirloom's context for one hook call with an upstream hook target's reply to the
// same call (an http hook's response body, or a wrapped command's stdout with exit code 0).
// event is the hook_event_name; ours is heirloom's additionalContext ("" when it adds nothing);
// maxChars caps the merged additionalContext in UTF-16 units (inject.Len); zero or negative means
// inject.DefaultMaxChars.
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
// upstream's part is Head-cut (at a word boundary) or dropped first, then heirloom's
// lowest-priority section (Recovered Session Checkpoint, then Inherited from Parent Session, then
// Objective Reinforcement; text under no known heading is cut before them), and a trailing marker,
// "[heirloom: cut to fit N characters: ...]", says what was shortened or dropped. The merged
// context, marker included, is never longer than maxChars.
//
// It fails (ErrUpstreamReply) on an upstream reply that is invalid JSON (starts like JSON but
// does not parse or is not an object), invalid UTF-8, larger than MaxUpstreamBytes, or whose
// hookSpecificOutput is neither an object nor null, or whose additionalContext is neither a
// string nor null; these checks apply in passive mode too. The caller then replies with
// heirloom's context alone.
func Merge(event, ours string, upstream []byte, maxChars int) ([]byte, error) {
	if len(upstream) > MaxUpstreamBytes {
		return nil, fmt.Errorf("%w: %d bytes, over %d", ErrUpstreamReply, len(upstream), MaxUpstreamBytes)
	}
	if !utf8.Valid(upstream) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrUpstreamReply)
	}
	if maxChars <= 0 {
		maxChars = inject.DefaultMaxChars
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
		return obj.splice(event, mergeContext(ours, obj.context, maxChars)), nil
	}
	if strings.TrimSpace(ours) == "" {
		return upstream, nil
	}
	return contextReply(event, mergeContext(ours, string(trimmed), maxChars)), nil
}

// contextReply is the reply carrying only context for event.
func contextReply(event, context string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"hookSpecificOutput":{"hookEventName":`)
	b.Write(jsonString(event))
	b.WriteString(`,"additionalContext":`)
	b.Write(jsonString(context))
	b.WriteString(`}}`)
	return b.Bytes()
}

// jsonString encodes s as a JSON string, without HTML escaping (as the adapters' replies are).
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
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

// section is one part of a merged context, in the order it is shown.
type section struct {
	name     string // what the cut marker calls it
	heading  string // its first line, kept when it is shortened; "" for none
	text     string
	priority int    // lower is kept longer
	cut      string // "", cutShortened or cutDropped
	cutOrder int    // when cut, its place in the order of cuts (1 for the first)
}

// The cut marker's verbs.
const (
	cutShortened = "shortened"
	cutDropped   = "dropped"
)

// minUseful is the least text, in UTF-16 units, a shortened section keeps under its heading;
// with less room it is dropped instead (inject's blocks use the same threshold).
const minUseful = 32

// mergeContext joins ours and the upstream's context within maxChars: see Merge. ours is kept
// byte for byte (bar surrounding whitespace) unless it must be cut itself.
func mergeContext(ours, theirs string, maxChars int) string {
	ours = strings.TrimSpace(ours)
	whole := ours
	if theirs != "" {
		whole += contextSep + theirs
	}
	if inject.Len(whole) <= maxChars {
		return whole
	}
	var up []section
	if theirs != "" {
		// The upstream's part goes first, with ours left as it is.
		parts := []section{
			{text: ours},
			{name: "upstream hook context", text: theirs, cut: cutShortened, cutOrder: 1},
		}
		used := inject.Len(ours) + 2*inject.Len(contextSep) + inject.Len(cutMarker(parts, maxChars))
		if shortened, ok := shorten(parts[1], maxChars-used); ok {
			parts[1].text = shortened
			return withMarker(parts, maxChars)
		}
		parts[1].cut = cutDropped
		if merged := withMarker(parts, maxChars); inject.Len(merged) <= maxChars {
			return merged
		}
		up = parts[1:]
	}
	// Then heirloom's sections, from the lowest priority up; among equals, the later one first.
	parts := append(splitSections(ours), up...)
	for order := len(up) + 1; ; order++ {
		victim := -1
		for i, p := range parts {
			if p.cut == cutDropped {
				continue
			}
			if victim < 0 || p.priority >= parts[victim].priority {
				victim = i
			}
		}
		if victim < 0 {
			break
		}
		v := &parts[victim]
		v.cut, v.cutOrder = cutShortened, order
		used := inject.Len(contextSep) + inject.Len(cutMarker(parts, maxChars))
		if rest := joinSections(withoutSection(parts, victim)); rest != "" {
			used += inject.Len(rest) + inject.Len(contextSep)
		}
		if shortened, ok := shorten(*v, maxChars-used); ok {
			v.text = shortened
			break
		}
		v.cut = cutDropped
		if inject.Len(withMarker(parts, maxChars)) <= maxChars {
			break
		}
	}
	if merged := withMarker(parts, maxChars); inject.Len(merged) <= maxChars {
		return merged
	}
	// Only when maxChars is too small for the marker itself: keep what fits, ours first.
	return inject.Head(whole, maxChars)
}

// withMarker joins the sections not dropped and appends the cut marker.
func withMarker(parts []section, maxChars int) string {
	merged := joinSections(parts)
	if merged != "" {
		merged += contextSep
	}
	return merged + cutMarker(parts, maxChars)
}

// shorten Head-cuts s's text to room units. ok is false when nothing useful would remain: less
// than minUseful units of text under its heading.
func shorten(s section, room int) (string, bool) {
	if room < inject.Len(s.heading)+minUseful {
		return "", false
	}
	cut := inject.Head(s.text, room)
	body, ok := strings.CutPrefix(cut, s.heading)
	if !ok || inject.Len(strings.TrimSpace(body)) < minUseful {
		return "", false
	}
	return cut, true
}

// splitSections splits heirloom's context at its known headings (the first line equal to each).
// Text before the first heading, or all of it when no heading is found, is a section of the
// lowest priority among heirloom's. Each section's surrounding whitespace is trimmed.
func splitSections(ours string) []section {
	type start struct{ at, priority int }
	var starts []start
	for p, h := range sectionHeadings {
		if at := headingAt(ours, h); at >= 0 {
			starts = append(starts, start{at, p})
		}
	}
	// Order by position (at most three entries).
	for i := 1; i < len(starts); i++ {
		for j := i; j > 0 && starts[j].at < starts[j-1].at; j-- {
			starts[j], starts[j-1] = starts[j-1], starts[j]
		}
	}
	var parts []section
	add := func(text, heading string, priority int) {
		if text = strings.TrimSpace(text); text == "" {
			return
		}
		name := "heirloom context"
		if heading != "" {
			name = strings.TrimPrefix(strings.Trim(heading, "[]"), "## ")
		}
		parts = append(parts, section{name: name, heading: heading, text: text, priority: priority})
	}
	first := len(ours)
	if len(starts) > 0 {
		first = starts[0].at
	}
	add(ours[:first], "", len(sectionHeadings))
	for i, st := range starts {
		end := len(ours)
		if i+1 < len(starts) {
			end = starts[i+1].at
		}
		add(ours[st.at:end], sectionHeadings[st.priority], st.priority)
	}
	return parts
}

// headingAt returns the offset of the first line of s equal to heading, or -1.
func headingAt(s, heading string) int {
	for from := 0; from < len(s); {
		i := strings.Index(s[from:], heading)
		if i < 0 {
			return -1
		}
		at := from + i
		end := at + len(heading)
		if (at == 0 || s[at-1] == '\n') && (end == len(s) || s[end] == '\n' || s[end] == '\r') {
			return at
		}
		from = at + 1
	}
	return -1
}

// joinSections joins the sections not dropped, in order, with a blank line between them.
func joinSections(parts []section) string {
	var b strings.Builder
	for _, p := range parts {
		if p.cut == cutDropped {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(contextSep)
		}
		b.WriteString(p.text)
	}
	return b.String()
}

// withoutSection returns parts with parts[i] marked dropped, for measuring the others.
func withoutSection(parts []section, i int) []section {
	out := append([]section(nil), parts...)
	out[i].cut = cutDropped
	return out
}

// cutMarker says which sections were shortened or dropped, in the order they were cut, e.g.
// "[heirloom: cut to fit 9500 characters: upstream hook context dropped; Recovered Session
// Checkpoint shortened]".
func cutMarker(parts []section, maxChars int) string {
	cuts := make([]string, len(parts)+1)
	for _, p := range parts {
		if p.cut != "" && p.cutOrder < len(cuts) {
			cuts[p.cutOrder] = p.name + " " + p.cut
		}
	}
	var named []string
	for _, c := range cuts {
		if c != "" {
			named = append(named, c)
		}
	}
	return "[heirloom: cut to fit " + strconv.Itoa(maxChars) + " characters: " + strings.Join(named, "; ") + "]"
}
