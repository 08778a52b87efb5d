package search

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// terms lists what Analyzer.Terms emits for text, in order.
func terms(text string) []string {
	var out []string
	Analyzer{}.Terms(text, func(t string) { out = append(out, strings.Clone(t)) })
	return out
}

// tokens lists what Analyzer.Tokens emits for text, in order.
func tokens(text string) []string {
	var out []string
	Analyzer{}.Tokens(text, func(t string) { out = append(out, strings.Clone(t)) })
	return out
}

// finds reports whether the query word finds text the way Parse and Run look it up: its term
// among the terms the index stores for text, or its phrase among text's base tokens, next to each
// other.
func finds(text, word string) bool {
	term, phrase := Analyzer{}.Lookup(word)
	switch {
	case term != "":
		return slices.Contains(terms(text), term)
	case phrase != nil:
		return hasPhrase(text, phrase)
	}
	return false
}

func TestAnalyzer_Finds(t *testing.T) {
	long := strings.Repeat("x", MaxTermLen)
	tests := []struct {
		text string
		hit  []string // words that find text
		miss []string // words that do not
	}{
		// The examples.
		{"ctx, cancel := context.WithCancel(parent)",
			[]string{"context", "WithCancel", "withcancel", "cancel", "with", "context.WithCancel", "CONTEXT.withcancel", "ctx", "parent"},
			[]string{"withcance", "contextwithcancel", "cancelwith"}},
		{"func parseLedgerHeader(r io.Reader)",
			[]string{"parse", "ledger", "header", "parseLedgerHeader", "parseledgerheader", "ParseLedgerHeader", "parse_ledger_header", "io.Reader", "reader"},
			[]string{"parseledger header"}},
		{"parse_ledger_header", []string{"parse", "ledger", "header", "parse_ledger_header", "parseLedgerHeader", "PARSE_LEDGER_HEADER"}, nil},
		{"ParseLedgerHeader", []string{"parse", "ledger", "header", "ParseLedgerHeader", "parseledgerheader", "parse_ledger_header"}, []string{"parseledge"}},
		{"edit ledger/header.go now", []string{"ledger", "header", "header.go", "ledger/header.go", "ledger/header", "go", "LEDGER/Header.GO"}, []string{"header/ledger", "ledger.go"}},
		{"open ./src/ledger/header.go.", []string{"header.go", "ledger/header.go", "src/ledger/header.go", "src"}, nil},
		{"panic at ledger/header.go:42", []string{"header.go", "ledger/header.go", "header.go:42", "ledger/header.go:42", "42"}, nil},
		{"kv/index.go:123:func (s *Store) add", []string{"index.go", "kv/index.go", "kv/index.go:123", "func"}, nil},
		{"git@github.com:heirloom-dev/heirloom.git", []string{"github.com", "heirloom-dev/heirloom.git", "heirloom.git", "git@github.com"}, nil},
		// Case folding.
		{"HTTPServer and sha256Sum", []string{"http", "server", "HTTPServer", "httpserver", "sha256", "sum", "sha256sum", "SHA256SUM"}, []string{"sha"}},
		{"XMLHttpRequest", []string{"xml", "http", "request", "xmlhttprequest", "XMLHTTPRequest"}, nil},
		{"LOUD NOISES", []string{"loud", "Loud", "noises"}, nil},
		{"x86_64 __init__ _private", []string{"x86_64", "x86", "64", "init", "__init__", "private", "_private"}, nil},
		{"don't", []string{"don't", "don"}, nil},
		// Unicode.
		{"Le café est prêt", []string{"café", "Café", "CAFÉ", "prêt", "PRÊT"}, []string{"cafe"}},
		{"Größe der Straße", []string{"größe", "GRÖSSE", "grösse", "straße", "STRASSE", "strasse"}, nil},
		{"ΣΊΣΥΦΟΣ σίσυφος", []string{"σίσυφος", "ΣΊΣΥΦΟΣ", "Σίσυφος"}, nil},
		{"Привет, Мир! ошибкаСети", []string{"привет", "ПРИВЕТ", "мир", "ошибка", "сети", "ошибкаСети", "ошибкасети"}, nil},
		{"İstanbul", []string{"istanbul", "İstanbul"}, nil},
		{"東京都に住んでいます", []string{"東京", "東京都", "京都", "住ん", "東京都に住んでいます"}, []string{"大阪", "京東"}},
		{"設定ファイルを読む", []string{"ファイル", "設定", "読む", "設定ファイル"}, []string{"ファイル名"}},
		{"한국어 텍스트", []string{"한국어", "텍스트"}, []string{"한국"}},
		{"deploy 🚀 done ✅", []string{"deploy", "done", "deploy 🚀 done"}, nil},
		// Numbers and versions.
		{"pi is 3.14159, answer 42", []string{"3.14159", "42", "3", "14159"}, []string{"3.1"}},
		{"bump to v1.2.3 from v1.2.2", []string{"v1.2.3", "v1.2.2", "v1.2", "2.3", "v1"}, []string{"v1.2.4"}},
		{"go1.26.8 linux/amd64", []string{"go1.26.8", "go1.26", "linux/amd64", "amd64", "linux"}, nil},
		{"error 0x1F at 127.0.0.1:7433", []string{"0x1f", "0x1F", "127.0.0.1", "127.0.0.1:7433", "7433"}, nil},
		// URLs, emails, issue references.
		{"see https://example.com/docs/search?q=ledger#top", []string{"https", "example", "example.com", "docs", "search", "ledger", "https://example.com", "https://example.com/docs/search", "docs/search"}, nil},
		{"mail dev@example.org", []string{"dev@example.org", "example.org", "dev"}, nil},
		{"fixes #1234", []string{"#1234", "1234"}, nil},
		{"f(x) = g(y)", []string{"f(x)", "g(y)", "f", "x"}, []string{"f(y)"}},
		// Long tokens: a part longer than MaxTermLen is not kept, shorter parts are.
		{"a " + long + " b", []string{long, "a", "b"}, nil},
		{"a " + long + "y b", []string{"a", "b"}, []string{long + "y", long}},
		{"short_" + long + "y_name", []string{"short", "name"}, []string{long + "y"}},
	}
	for _, tt := range tests {
		for _, w := range tt.hit {
			if !finds(tt.text, w) {
				term, phrase := Analyzer{}.Lookup(w)
				t.Errorf("%q does not find %q (looked up as %q %q; terms %q)", w, tt.text, term, phrase, terms(tt.text))
			}
		}
		for _, w := range tt.miss {
			if finds(tt.text, w) {
				t.Errorf("%q finds %q, want not (terms %q)", w, tt.text, terms(tt.text))
			}
		}
	}
}

func TestAnalyzer_Terms(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"  ,.;  ", nil},
		{"word", []string{"word"}},
		{"Word WORD", []string{"word", "word"}},
		{"context.WithCancel", []string{"context", "with", "cancel", "withcancel", "context.withcancel"}},
		{"parseLedgerHeader", []string{"parse", "ledger", "header", "parseledgerheader"}},
		{"parse_ledger_header", []string{"parse", "ledger", "header", "parseledgerheader"}},
		{"ledger/header.go", []string{"ledger", "header", "go", "ledger/header", "ledger/header.go", "header.go"}},
		{"HTTPServer", []string{"http", "server", "httpserver"}},
		{"日本語", []string{"日本", "本語"}},
		{"日", []string{"日"}},
		{"a,b", []string{"a", "b"}},
		{"___", nil},
		{"🚀", nil},
	}
	for _, tt := range tests {
		if got := terms(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestAnalyzer_Tokens(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"context.WithCancel(ctx)", []string{"context", "with", "cancel", "ctx"}},
		{"ledger/header.go", []string{"ledger", "header", "go"}},
		{"the Quick  brown", []string{"the", "quick", "brown"}},
		{"日本語の", []string{"日本", "本語", "語の"}},
	}
	for _, tt := range tests {
		if got := tokens(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestAnalyzer_Blobs: base64 data and keys are not indexed and not looked up; paths and long
// names of the same length are.
func TestAnalyzer_Blobs(t *testing.T) {
	key := "QmFzZTY0RW5jb2RlZERhdGFUaGF0SXNMb25nRW5vdWdoVG9CZUFCbG9iMTIzNDU2Nzg5"
	if got := terms("key " + key + " end"); !slices.Equal(got, []string{"key", "end"}) {
		t.Errorf("a base64 blob is indexed: %q", got)
	}
	if term, phrase := (Analyzer{}).Lookup(key); term != "" || phrase != nil {
		t.Errorf("Lookup(blob) = %q %q, want nothing", term, phrase)
	}
	path := "/home/dev/src/github.com/heirloom-dev/heirloom/kv/index_build_test.go"
	if !finds("open "+path, "index_build_test.go") || !finds("open "+path, "heirloom") {
		t.Errorf("a long path is not found by its parts: %q", terms(path))
	}
	hex := strings.Repeat("deadbeef0123", 8)
	if got := terms(hex); len(got) != 0 && !slices.Contains(got, hex) && len(hex) <= MaxTermLen {
		t.Errorf("hex: %q", got)
	}
}

// TestAnalyzer_Limits: whatever the text, no term is empty or longer than MaxTermLen, there are
// at most 2×len(text) of them, base tokens are terms too, and invalid UTF-8 never panics and
// never reaches a term.
func TestAnalyzer_Limits(t *testing.T) {
	texts := []string{
		"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z",
		strings.Repeat("a.", 200),
		strings.Repeat("aB", 200),
		strings.Repeat("日本", 100),
		strings.Repeat("x", 1000),
		strings.Repeat("Ⱥ", 40), // folds to a longer rune
		"\xff\xfe abc\x80def \xc3",
		"caf\xc3",
		"a\x00b",
		"ǅemal ǈ",
		"\u0301\u0301abc",
		strings.Repeat("a/", 40) + "b" + strings.Repeat(":1", 40),
	}
	for _, text := range texts {
		all := terms(text)
		if len(all) > 2*len(text) {
			t.Errorf("Terms(%.40q): %d terms, more than 2×%d bytes", text, len(all), len(text))
		}
		for _, term := range all {
			if term == "" || len(term) > MaxTermLen || !utf8.ValidString(term) {
				t.Errorf("Terms(%.40q) emitted %q", text, term)
			}
		}
		for _, tok := range tokens(text) {
			if !slices.Contains(all, tok) {
				t.Errorf("Tokens(%.40q) emitted %q, which Terms does not", text, tok)
			}
		}
	}
}

// TestAnalyzer_LookupAgrees: every word of a text, looked up alone, finds the text: what a
// query word looks up is what indexing stored.
func TestAnalyzer_LookupAgrees(t *testing.T) {
	texts := []string{
		"ctx, cancel := context.WithCancel(parent) // see ledger/header.go:42",
		"Run `go test -race ./search/` before HTTPServer.ListenAndServe; x86_64 v1.2.3",
		"Größe café ΣΊΣΥΦΟΣ Привет 東京都 🚀 don't user@example.com",
		"https://example.com/a/b?x=1#frag",
		"parseLedgerHeader parse_ledger_header ParseLedgerHeader PARSE_LEDGER_HEADER",
	}
	for _, text := range texts {
		for _, w := range strings.Fields(text) {
			term, phrase := Analyzer{}.Lookup(w)
			if term == "" && phrase == nil {
				continue // nothing to search for
			}
			if !finds(text, w) {
				t.Errorf("%q, a word of %q, does not find it (looked up as %q %q)", w, text, term, phrase)
			}
		}
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		word    string
		term    string
		phrase  []string
		tooLong bool
	}{
		{"Context", "context", nil, false},
		{"context.WithCancel", "context.withcancel", nil, false},
		{"WithCancel", "withcancel", nil, false},
		{"header.go", "header.go", nil, false},
		{"(header.go)", "header.go", nil, false},
		{"f(x)", "", []string{"f", "x"}, false},
		{"東京都", "", []string{"東京", "京都"}, false},
		{"東京", "東京", nil, false},
		{"...", "", nil, false},
		{"", "", nil, false},
		{strings.Repeat("y", MaxTermLen+1), "", nil, true},
		{"QmFzZTY0RW5jb2RlZERhdGFUaGF0SXNMb25nRW5vdWdoVG9CZUFCbG9iMTIzNDU2Nzg5", "", nil, true},
	}
	for _, tt := range tests {
		term, phrase, tooLong := lookup(tt.word)
		if term != tt.term || !slices.Equal(phrase, tt.phrase) || tooLong != tt.tooLong {
			t.Errorf("lookup(%q) = %q %q %v, want %q %q %v", tt.word, term, phrase, tooLong, tt.term, tt.phrase, tt.tooLong)
		}
	}
}
