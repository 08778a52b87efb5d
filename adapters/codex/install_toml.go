package codex

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Heirloom edits config.toml as text, so that every byte of the user's own (comments, order,
// formatting) stays, and uses go-toml only to read it: a parse for the document's value, and
// its expression parser for where each table and key sits in the text.

// expr is one top-level expression of a TOML document: a table header, an array-table header
// or a key/value line.
type expr struct {
	kind  unstable.Kind // unstable.Table, unstable.ArrayTable or unstable.KeyValue
	path  []string      // the full key: a header's own, or the current table's plus a key/value's
	own   int           // how many of path's parts the expression itself spells (the rest is its table's)
	parts []span        // where each of those own parts is written
	value span          // a key/value's value
	start int           // the start of the expression's first line
	end   int           // just past the end of its last line (its newline included)
}

// span is a range of bytes in a document, [from, to).
type span struct{ from, to int }

// doc is a parsed config.toml.
type doc struct {
	src   []byte
	exprs []expr
	value map[string]any
}

// parseDoc parses src as TOML, both ways. An error says what is wrong and where.
func parseDoc(src []byte) (*doc, error) {
	d := &doc{src: src, value: map[string]any{}}
	if err := toml.Unmarshal(src, &d.value); err != nil {
		return nil, err
	}
	var p unstable.Parser
	p.Reset(src)
	var table []string
	for p.NextExpression() {
		n := p.Expression()
		e := expr{kind: n.Kind}
		var keys []string
		for it := n.Key(); it.Next(); {
			k := it.Node()
			r := k.Raw
			e.parts = append(e.parts, span{int(r.Offset), int(r.Offset + r.Length)})
			keys = append(keys, string(k.Data))
		}
		e.own = len(keys)
		last := e.parts[len(e.parts)-1].to
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keys
			e.path = slices.Clone(keys)
		case unstable.KeyValue:
			e.path = append(slices.Clone(table), keys...)
			v := n.Value()
			if v.Raw.Length > 0 {
				e.value = span{int(v.Raw.Offset), int(v.Raw.Offset + v.Raw.Length)}
			}
			last = int(n.Raw.Offset + n.Raw.Length)
		default:
			continue
		}
		e.start = lineStart(src, e.parts[0].from)
		e.end = lineEnd(src, last)
		d.exprs = append(d.exprs, e)
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	return d, nil
}

// lineStart is the offset of the start of the line holding offset i.
func lineStart(src []byte, i int) int {
	return bytes.LastIndexByte(src[:i], '\n') + 1
}

// lineEnd is the offset just past the newline ending the line holding offset i (len(src) on
// the last line).
func lineEnd(src []byte, i int) int {
	if i > 0 && src[i-1] == '\n' {
		return i
	}
	j := bytes.IndexByte(src[i:], '\n')
	if j < 0 {
		return len(src)
	}
	return i + j + 1
}

// isHeader reports whether e is a table or array-table header.
func (e expr) isHeader() bool { return e.kind == unstable.Table || e.kind == unstable.ArrayTable }

// hasPrefix reports whether path starts with prefix.
func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}

// tableEnd is the end of the table whose header is d.exprs[i]: the end of the last expression
// before the next header that is not inside it (a sub-table, or for an array table one of its
// own [[x.y]] or [x.y] tables), so comments and blank lines after it stay where they are.
func (d *doc) tableEnd(i int) int {
	h := d.exprs[i]
	end := h.end
	for _, e := range d.exprs[i+1:] {
		if e.isHeader() && (!hasPrefix(e.path, h.path) || len(e.path) == len(h.path)) {
			break
		}
		end = e.end
	}
	return end
}

// groupHeaders returns the indexes in d.exprs of the [[hooks.<event>]] headers, in order.
func (d *doc) groupHeaders(event string) []int {
	var out []int
	for i, e := range d.exprs {
		if e.kind == unstable.ArrayTable && slices.Equal(e.path, []string{"hooks", event}) {
			out = append(out, i)
		}
	}
	return out
}

// header returns the index in d.exprs of the [path] table header; -1 when there is none.
func (d *doc) header(path ...string) int {
	for i, e := range d.exprs {
		if e.kind == unstable.Table && slices.Equal(e.path, path) {
			return i
		}
	}
	return -1
}

// groups returns event's hook groups as the document's value holds them.
func (d *doc) groups(event string) []map[string]any {
	hooks, _ := d.value["hooks"].(map[string]any)
	list, _ := hooks[event].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, g := range list {
		m, _ := g.(map[string]any)
		out = append(out, m)
	}
	return out
}

// state returns the [hooks.state] entries.
func (d *doc) state() map[string]any {
	hooks, _ := d.value["hooks"].(map[string]any)
	st, _ := hooks["state"].(map[string]any)
	return st
}

// trustedHash returns the trusted_hash recorded for key; "" when none.
func (d *doc) trustedHash(key string) string {
	e, _ := d.state()[key].(map[string]any)
	h, _ := e["trusted_hash"].(string)
	return h
}

// sameValue reports whether a and b hold the same TOML value.
func sameValue(a, b []byte) bool {
	var x, y map[string]any
	if toml.Unmarshal(a, &x) != nil || toml.Unmarshal(b, &y) != nil {
		return false
	}
	if len(x) == 0 && len(y) == 0 {
		return true
	}
	return reflect.DeepEqual(x, y)
}

// sameText reports whether a and b hold the same lines, comments included, but for blank lines,
// trailing spaces and line ends: uninstall gives back a backup's exact bytes only when what it
// would write differs from them in nothing else (edits made since the install stay).
func sameText(a, b []byte) bool {
	lines := func(x []byte) []string {
		var out []string
		for _, l := range strings.Split(string(x), "\n") {
			if l = strings.TrimRight(l, " \t\r"); l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	return slices.Equal(lines(a), lines(b))
}

// edit replaces the bytes of at with text.
type edit struct {
	at   span
	text string
}

// apply returns src with edits made; their spans must not overlap (an insertion, from == to,
// may sit where another edit starts: it goes first).
func apply(src []byte, edits []edit) ([]byte, error) {
	sorted := slices.Clone(edits)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].at.from < sorted[j].at.from })
	var out bytes.Buffer
	pos := 0
	for _, e := range sorted {
		if e.at.from < pos {
			return nil, fmt.Errorf("overlapping edits at byte %d", e.at.from)
		}
		out.Write(src[pos:e.at.from])
		out.WriteString(e.text)
		pos = e.at.to
	}
	out.Write(src[pos:])
	return out.Bytes(), nil
}

// removal is the edit that takes the lines [from, to) out, and the blank line before them when
// there is one (install writes one before each table it adds).
func removal(src []byte, from, to int) edit {
	if from >= 2 && src[from-1] == '\n' && src[from-2] == '\n' {
		from--
	}
	return edit{at: span{from, to}}
}

// tomlString writes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u`)
			b.WriteString(fmt.Sprintf("%04X", r))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// groupText is heirloom's hook group for event, as install writes it.
func groupText(event, command string) string {
	return "[[hooks." + event + "]]\n[[hooks." + event + ".hooks]]\ntype = \"command\"\ncommand = " +
		tomlString(command) + "\ntimeout = " + strconv.Itoa(timeoutOf(event)) + "\n"
}

// stateText is a [hooks.state."<key>"] table trusting hash.
func stateText(key, hash string) string {
	return "[hooks.state." + tomlString(key) + "]\ntrusted_hash = " + tomlString(hash) + "\n"
}
