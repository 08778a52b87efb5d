package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse: Parse never panics; what it accepts has something to find, stays within
// MaxClauses, and renders to a query that parses back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"deploy", `a1 OR b2 c3`, `"exact phrase" -"dry run" -staging`, "depl* context.WithCancel",
		`"unclosed`, "OR a", "a OR", "-x", "a*", "*", "f(x*", "東京都 Größe", "\xff\"-OR",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := Parse(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("Parse(%q): an empty error", s)
			}
			return
		}
		n, positive := 0, false
		for _, c := range q.clauses {
			positive = positive || !c.not
			if len(c.alts) == 0 {
				t.Fatalf("Parse(%q): a clause without alternatives", s)
			}
			for _, a := range c.alts {
				n += max(1, len(a.phrase))
				if a.term == "" && len(a.phrase) < 2 {
					t.Fatalf("Parse(%q): an empty atom %+v", s, a)
				}
			}
		}
		if !positive || n > MaxClauses {
			t.Fatalf("Parse(%q) = %s: %d words, something to find %v", s, q, n, positive)
		}
		again, err := Parse(q.String())
		if err != nil || again.String() != q.String() {
			t.Fatalf("Parse(%q) = %s, which parses back to %s, %v", s, q, again, err)
		}
	})
}

// FuzzAnalyzer: Terms and Tokens never panic and keep their bounds; every word of the text,
// looked up as a query would, finds the text; a snippet for it is valid and its marks pair up.
func FuzzAnalyzer(f *testing.F) {
	for _, s := range []string{
		"ctx, cancel := context.WithCancel(parent)", "parseLedgerHeader parse_ledger_header",
		"see ledger/header.go:42", "https://example.com/a/b?x=1", "v1.2.3 x86_64 0x1F",
		"Größe ΣΊΣΥΦΟΣ İstanbul ǅ", "東京都に住んでいます", "🚀 deploy", "\xff\xfe a\x80b",
		"QmFzZTY0RW5jb2RlZERhdGFUaGF0SXNMb25nRW5vdWdoVG9CZUFCbG9iMTIzNDU2Nzg5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		all := terms(text)
		if len(all) > 2*len(text) {
			t.Fatalf("Terms(%q): %d terms", text, len(all))
		}
		set := make(map[string]bool, len(all))
		for _, term := range all {
			if term == "" || len(term) > MaxTermLen || !utf8.ValidString(term) || strings.ContainsAny(term, " \x00") {
				t.Fatalf("Terms(%q) emitted %q", text, term)
			}
			set[term] = true
		}
		for _, tok := range tokens(text) {
			if !set[tok] {
				t.Fatalf("Tokens(%q) emitted %q, which Terms does not", text, tok)
			}
		}
		words := strings.Fields(text)
		for _, w := range words[:min(len(words), 16)] { // each word scans the text again
			term, phrase, tooLong := lookup(w)
			switch {
			case tooLong || term == "" && phrase == nil:
				continue
			case term != "" && !set[term]:
				t.Fatalf("%q, a word of %q, looks up %q, which Terms does not emit: %q", w, text, term, all)
			case phrase != nil && !hasPhrase(text, phrase):
				t.Fatalf("%q, a word of %q, looks up the phrase %q, which Tokens does not hold", w, text, phrase)
			}
			got := snippet(text, []highlight{{term: term}}, nil, true)
			if !utf8.ValidString(got) || !strings.Contains(text, "*") && strings.Count(got, "**")%2 != 0 {
				t.Fatalf("snippet of %q for %q: %q", text, w, got)
			}
			if term != "" && !strings.Contains(got, "**") {
				t.Fatalf("snippet of %q for %q marks nothing: %q", text, w, got)
			}
		}
		// The scanner's spans lie within the text and, in valid text, on rune boundaries.
		valid := utf8.ValidString(text)
		scan(text, func(tk token) {
			if tk.start < 0 || tk.end > len(text) || tk.start >= tk.end ||
				valid && (!utf8.RuneStart(text[tk.start]) || tk.end < len(text) && !utf8.RuneStart(text[tk.end])) {
				t.Fatalf("token %+v of %q", tk, text)
			}
		})
	})
}
