package openclaw

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
)

// DefaultAgentID is the agent OpenClaw files legacy session keys under: a key without the
// agent: prefix ("main", "cron:job-1", "subagent:x") belongs to agent:main:<key>.
const DefaultAgentID = "main"

// agentIDPattern is what heirloom accepts as an agent id, after lowercasing.
var agentIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Shape is how OpenClaw classifies a session key (its classifySessionKeyShape).
type Shape string

// The shapes. ParseSessionKey returns an error exactly for ShapeMissing and ShapeMalformedAgent.
const (
	ShapeMissing        Shape = "missing"         // empty or whitespace only
	ShapeAgent          Shape = "agent"           // agent:<agentId>:<rest>
	ShapeLegacyOrAlias  Shape = "legacy_or_alias" // no agent: prefix: filed under DefaultAgentID
	ShapeMalformedAgent Shape = "malformed_agent" // agent:… that does not parse; see ParseSessionKeyGen
)

// Generation names a generation of OpenClaw's session-key parser. The two disagree on some
// keys; ParseSessionKey follows GenLater2026. GenApril2026 exists to check old recordings and
// OpenClaw's own older test vectors (testdata/session-keys.json).
//
// Both generations trim the key, take the agent id case-insensitively, and call a key a
// sub-agent's when it or its rest starts with "subagent:". They differ in three ways:
//
//   - Splitting. GenApril2026 lowercases the whole key, splits it on ':' and drops empty
//     segments, so "agent::ops:main", "agent:ops::main" and ":agent:ops:main" all parse as
//     agent ops, rest "main", and "agent:ops:cron:" has rest "cron". GenLater2026 splits only
//     the head: the agent id runs to the second colon and the rest is everything after it, so
//     an empty agent id, an empty rest or a rest starting with ':' is malformed, while empty
//     segments inside the rest ("room::part") and a trailing colon ("cron:") are kept.
//   - Case. GenApril2026 lowercases everything. GenLater2026 lowercases everything except the
//     opaque peer ids OpenClaw keeps verbatim: a Signal group id (the one segment after
//     signal:group:, trimmed) and a Matrix room (everything after matrix:channel: or
//     matrix:group:, behind any agent:<id>: wrappers, except a last ":thread:" marker, which is
//     lowercased while the thread id after it is kept).
//   - Depth. GenApril2026 counts ":subagent:" in the whole key, so the legacy "subagent:x" has
//     depth 0 and "subagent:a:subagent:b" depth 1. GenLater2026 counts "subagent:" at the start
//     of the rest (of the whole key when it did not parse) or after a colon: 1 and 2.
//
// They also differ in SessionKey.ThreadParent; see there.
type Generation string

// The parser generations, spelled as the fixture's byVersion keys.
const (
	GenApril2026 Generation = "2026-04"    // OpenClaw builds up to 2026-04
	GenLater2026 Generation = "later-2026" // later builds (verified against 2026.9.6); the default
)

// SessionKey is a parsed OpenClaw session key.
//
// OpenClaw sub-agent keys are flat at every depth (agent:<id>:subagent:<uuid>): the key never
// names its parent. The parent is spawnedBy (and the true depth spawnDepth) on the child's
// session entry, which the Gateway reports. Only a ":thread:<id>" suffix names a parent; see
// ThreadParent.
type SessionKey struct {
	Raw     string // the key as given, trimmed
	AgentID string // lowercase agent id; DefaultAgentID for legacy keys; "" when the key did not parse
	// Rest is what follows agent:<id>: after normalisation (lowercased except opaque peer ids);
	// for a legacy key, the whole key normalised the same way. "" when the key did not parse.
	Rest   string
	Shape  Shape // how OpenClaw classifies Raw
	Legacy bool  // Raw had no agent: prefix and is filed under DefaultAgentID (ShapeLegacyOrAlias)
	// Gen is the parser generation that produced the key; the zero value means GenLater2026.
	Gen Generation
}

// ParseSessionKey parses an OpenClaw session key the way current OpenClaw does (GenLater2026).
// See ParseSessionKeyGen.
func ParseSessionKey(key string) (SessionKey, error) {
	return ParseSessionKeyGen(key, GenLater2026)
}

// ParseSessionKeyGen parses an OpenClaw session key as parser generation gen does; any gen other
// than GenApril2026 means GenLater2026.
//
// A key of the form agent:<agentId>:<rest> has ShapeAgent. A key without the agent: prefix is a
// legacy key or alias: it is filed under DefaultAgentID exactly as agent:main:<key> would parse,
// so "main" becomes AgentID "main", Rest "main".
//
// The error wraps adapters.ErrMalformed when the key is empty (ShapeMissing) or does not parse
// (ShapeMalformedAgent). Besides OpenClaw's own rules, heirloom requires the agent id to match
// [a-z0-9][a-z0-9_-]{0,63} once lowercased (OpenClaw's config enforces that, but its key parser
// does not), the key to be valid UTF-8, and a legacy key to be fileable: one whose agent:main:
// form does not parse (GenLater2026: it starts with ':') is ShapeMalformedAgent too. On error
// the key still carries Raw, Shape and Gen; AgentID and Rest are empty.
func ParseSessionKeyGen(key string, gen Generation) (SessionKey, error) {
	if gen != GenApril2026 {
		gen = GenLater2026
	}
	k := SessionKey{Raw: trimJS(key), Gen: gen}
	if k.Raw == "" {
		k.Shape = ShapeMissing
		return k, adapters.Malformed("parse session key: empty")
	}
	id, rest, why := splitAgentKey(k.Raw, gen)
	if why == "" {
		k.AgentID, k.Rest, k.Shape = id, rest, ShapeAgent
		return k, nil
	}
	if hasPrefixFold(k.Raw, "agent:") {
		k.Shape = ShapeMalformedAgent
		return k, adapters.Malformed("parse session key %q: %s", k.Raw, why)
	}
	id, rest, why = splitAgentKey("agent:"+DefaultAgentID+":"+k.Raw, gen)
	if why != "" {
		k.Shape = ShapeMalformedAgent
		return k, adapters.Malformed("parse session key %q: legacy key under agent %s: %s", k.Raw, DefaultAgentID, why)
	}
	k.AgentID, k.Rest, k.Shape, k.Legacy = id, rest, ShapeLegacyOrAlias, true
	return k, nil
}

// Canonical returns the key OpenClaw stores the session under, agent:<AgentID>:<Rest> (for a
// legacy key, the agent:main: form), or "" when the key did not parse.
func (k SessionKey) Canonical() string {
	if k.AgentID == "" {
		return ""
	}
	return "agent:" + k.AgentID + ":" + k.Rest
}

// IsSubagent reports whether the key is a sub-agent's: it, or (for ShapeAgent) its rest, starts
// with "subagent:". Sub-agents spawned visible (agent:<id>:dashboard:<uuid>) are not recognisable
// from their key.
func (k SessionKey) IsSubagent() bool {
	return hasPrefixFold(k.Raw, "subagent:") || (k.Shape == ShapeAgent && hasPrefixFold(k.Rest, "subagent:"))
}

// SubagentDepth returns the sub-agent depth visible in the key itself, counted as k.Gen counts
// (see Generation). It is a heuristic: OpenClaw keys are flat, so a depth-2 child still reads 1;
// the true depth is spawnDepth on the session entry.
func (k SessionKey) SubagentDepth() int {
	if k.Gen == GenApril2026 {
		return strings.Count(lowerJS(k.Raw), ":subagent:")
	}
	s := k.Raw
	if k.Shape == ShapeAgent {
		s = k.Rest
	}
	s = lowerJS(s)
	n := 0
	if rest, ok := strings.CutPrefix(s, "subagent:"); ok {
		n, s = 1, rest
	}
	return n + strings.Count(s, ":subagent:")
}

// ThreadParent returns the parent base key named by a ":thread:<id>" suffix (the last one,
// matched case-insensitively, with a non-blank id), or "" when there is none or the key did not
// parse. Other channel suffixes (":topic:", ":sender:") do not name a parent.
//
// With GenLater2026 the parent is canonical, as OpenClaw stores it: agent:<id>:<rest before the
// suffix>, normalised again, so it can be compared with other keys' Canonical. A legacy key's
// parent is filed under DefaultAgentID too. With GenApril2026 it is what OpenClaw's
// resolveThreadParentSessionKey returned: Raw before the suffix, trimmed, in its original case.
func (k SessionKey) ThreadParent() string {
	const marker = ":thread:"
	if k.AgentID == "" {
		return ""
	}
	if k.Gen == GenApril2026 {
		i := lastIndexFold(k.Raw, marker)
		if i < 0 || trimJS(k.Raw[i+len(marker):]) == "" {
			return ""
		}
		return trimJS(k.Raw[:i])
	}
	i := lastIndexFold(k.Rest, marker)
	if i < 0 || trimJS(k.Rest[i+len(marker):]) == "" {
		return ""
	}
	parent, err := ParseSessionKeyGen("agent:"+k.AgentID+":"+k.Rest[:i], GenLater2026)
	if err != nil {
		return ""
	}
	return parent.Canonical()
}

// splitAgentKey splits an agent:<id>:<rest> key as gen does and checks the agent id. why says
// what is wrong, "" when nothing is.
func splitAgentKey(s string, gen Generation) (id, rest, why string) {
	if !utf8.ValidString(s) {
		return "", "", "not valid UTF-8"
	}
	if gen == GenApril2026 {
		parts := slices.DeleteFunc(strings.Split(lowerJS(s), ":"), func(p string) bool { return p == "" })
		if len(parts) < 3 || parts[0] != "agent" {
			return "", "", "not agent:<agentId>:<rest>"
		}
		id, rest = trimJS(parts[1]), strings.Join(parts[2:], ":")
	} else {
		n := normalizeSessionKey(s)
		if !hasPrefixFold(n, "agent:") {
			return "", "", "not agent:<agentId>:<rest>"
		}
		head, tail, ok := strings.Cut(n[len("agent:"):], ":")
		if !ok || tail == "" || tail[0] == ':' {
			return "", "", "empty rest"
		}
		id, rest = trimJS(head), tail
	}
	if !agentIDPattern.MatchString(id) {
		return "", "", fmt.Sprintf("agent id %q is not [a-z0-9][a-z0-9_-]{0,63}", id)
	}
	return id, rest, ""
}

// keptSpan is a byte range [start, end) of a key whose case GenLater2026 keeps.
type keptSpan struct {
	start, end int
	trim       bool // trim the kept text (Signal group ids)
}

// normalizeSessionKey lowercases key except the opaque peer ids GenLater2026 keeps verbatim
// (OpenClaw's normalizeSessionKeyPreservingOpaquePeerIds).
func normalizeSessionKey(key string) string {
	spans := append(signalGroupSpans(key), matrixRoomSpans(key)...)
	slices.SortStableFunc(spans, func(a, b keptSpan) int { return a.start - b.start })
	var b strings.Builder
	cursor := 0
	for _, sp := range spans {
		if sp.start < cursor || sp.end <= sp.start {
			continue
		}
		b.WriteString(lowerJS(key[cursor:sp.start]))
		kept := key[sp.start:sp.end]
		if sp.trim {
			kept = trimJS(kept)
		}
		b.WriteString(kept)
		cursor = sp.end
	}
	b.WriteString(lowerJS(key[cursor:]))
	return b.String()
}

// signalGroupSpans finds the Signal group ids in key: the non-empty segment after each
// "signal:group:" at the start of key or after a colon.
func signalGroupSpans(key string) []keptSpan {
	const marker = "signal:group:"
	var spans []keptSpan
	for i := 0; i < len(key); {
		var p int
		switch {
		case i == 0 && hasPrefixFold(key, marker):
			p = len(marker)
		case key[i] == ':' && hasPrefixFold(key[i+1:], marker):
			p = i + 1 + len(marker)
		default:
			i++
			continue
		}
		end := p
		for end < len(key) && key[end] != ':' {
			end++
		}
		if end == p {
			i++
			continue
		}
		spans = append(spans, keptSpan{start: p, end: end, trim: true})
		i = end
	}
	return spans
}

// matrixRoomSpans finds a Matrix room in key: after an optional run of agent:<id>: wrappers
// (then any colons), matrix:channel: or matrix:group: starts a tail kept up to its last
// ":thread:" marker; the thread id after the marker is kept too.
func matrixRoomSpans(key string) []keptSpan {
	i := 0
	for hasPrefixFold(key[i:], "agent:") {
		j := strings.IndexByte(key[i+len("agent:"):], ':')
		if j < 0 {
			break
		}
		i += len("agent:") + j + 1
	}
	if i > 0 {
		for i < len(key) && key[i] == ':' {
			i++
		}
	}
	if !hasPrefixFold(key[i:], "matrix:") {
		return nil
	}
	i += len("matrix:")
	switch {
	case hasPrefixFold(key[i:], "channel:"):
		i += len("channel:")
	case hasPrefixFold(key[i:], "group:"):
		i += len("group:")
	default:
		return nil
	}
	if i >= len(key) {
		return nil
	}
	m := lastIndexFold(key[i:], ":thread:")
	if m < 0 {
		return []keptSpan{{start: i, end: len(key)}}
	}
	spans := []keptSpan{{start: i, end: i + m}}
	if t := i + m + len(":thread:"); t < len(key) {
		spans = append(spans, keptSpan{start: t, end: len(key)})
	}
	return spans
}

// hasPrefixFold reports whether s starts with prefix, a lowercase ASCII string, ignoring ASCII
// case only (as JavaScript's /i does for ASCII patterns).
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// lastIndexFold returns the index of the last sub (lowercase ASCII) in s ignoring ASCII case,
// or -1.
func lastIndexFold(s, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		if hasPrefixFold(s[i:], sub) {
			return i
		}
	}
	return -1
}

// lowerJS lowercases s like JavaScript's toLowerCase for everything a key parser looks at: U+0130
// (İ) becomes "i\u0307" rather than Go's bare "i", so lowercasing never creates an ASCII marker
// ("signal:", "matrix:") that was not there before.
func lowerJS(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307"))
}

// trimJS trims the characters JavaScript's String.prototype.trim removes: Go's unicode.IsSpace
// set, minus U+0085, plus U+FEFF.
func trimJS(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return r == '\uFEFF' || (r != '\u0085' && unicode.IsSpace(r))
	})
}
