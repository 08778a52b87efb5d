package search

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// highlightsOf parses query and returns what its snippets mark.
func highlightsOf(t *testing.T, query string) []highlight {
	t.Helper()
	q, err := Parse(query)
	if err != nil {
		t.Fatalf("Parse(%q): %v", query, err)
	}
	return q.highlights()
}

// fakeRedactions stand in for inject.Redact: like it, they need context around a secret (a key
// name, a scheme, a PEM block's BEGIN line) to know it is one.
var fakeRedactions = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?s)-----BEGIN[ A-Z]*PRIVATE KEY-----(?:.*?-----END[ A-Z]*PRIVATE KEY-----|.*)`), "[REDACTED]"},
	{regexp.MustCompile(`ghp_[A-Za-z0-9]{20,}`), "[REDACTED]"},
	{regexp.MustCompile(`(password\s*=\s*)\S+`), "${1}[REDACTED]"},
	{regexp.MustCompile(`(Bearer\s+)\S+`), "${1}[REDACTED]"},
}

func fakeRedact(s string) string {
	for _, r := range fakeRedactions {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}

// filler returns n bytes of plain words.
func filler(n int) string {
	words := []string{"lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit"}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(words[i%len(words)])
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// plain is a snippet without its marks and ellipses.
func plain(s string) string {
	s = strings.ReplaceAll(s, "**", "")
	s = strings.TrimPrefix(s, "… ")
	return strings.TrimSuffix(s, " …")
}

func TestSnippet(t *testing.T) {
	tests := []struct {
		text, query, want string
	}{
		{"rotate the key, then deploy", "deploy", "rotate the key, then **deploy**"},
		{"Deploy\n\tthe   KEY", "key", "Deploy the **KEY**"},
		{"ctx, cancel := context.WithCancel(parent)", "WithCancel", "ctx, cancel := context.**WithCancel**(parent)"},
		{"ctx, cancel := context.WithCancel(parent)", "cancel", "ctx, **cancel** := context.With**Cancel**(parent)"},
		{"ctx, cancel := context.WithCancel(parent)", "context.WithCancel", "ctx, cancel := **context.WithCancel**(parent)"},
		{"see ledger/header.go:42 now", "header.go", "see ledger/**header.go**:42 now"},
		{"func parseLedgerHeader()", "ledger header", "func parse**LedgerHeader**()"},
		{"we deployed the deployment", "depl*", "we **deployed** the **deployment**"},
		{"the quick brown fox", `"quick brown"`, "the **quick** **brown** fox"},
		{"東京都に住んでいます", "東京都", "**東京都**に住んでいます"},
		{"Größe GRÖSSE", "größe", "**Größe** **GRÖSSE**"},
		{"deploy, not staging", "deploy -staging", "**deploy**, not staging"},
		// No match (the turn was found by its tool's name): its start.
		{"nothing here", "absent", "nothing here"},
		{"", "deploy", ""},
		{"   \n ", "deploy", ""},
		// Invalid UTF-8 is replaced, never cut into.
		{"bad \xff byte deploy", "deploy", "bad \uFFFD byte **deploy**"},
	}
	for _, tt := range tests {
		if got := snippet(tt.text, highlightsOf(t, tt.query), nil, true); got != tt.want {
			t.Errorf("snippet(%q, %s) = %q, want %q", tt.text, tt.query, got, tt.want)
		}
	}
}

// TestSnippet_Window: about snippetWidth characters around the best match, however long the
// text and wherever the match, cut between words, marked, with "…" where text was left out.
func TestSnippet_Window(t *testing.T) {
	tests := []struct {
		name, text, query, mark string
		head, tail              bool // "… " before, " …" after
	}{
		{"start", "needle " + filler(5000), "needle", "**needle**", false, true},
		{"end", filler(5000) + " needle", "needle", "**needle**", true, false},
		{"middle", filler(5000) + " needle " + filler(5000), "needle", "**needle**", true, true},
		{"far into a long turn", filler(100_000) + " the needle here " + filler(300), "needle", "**needle**", true, true},
		{"lines", strings.Repeat("line of text\n", 400) + "the needle\n" + strings.Repeat("more text\n", 400), "needle", "**needle**", true, true},
		{"best of several", "needle " + filler(3000) + " needle thread needle " + filler(3000), "needle thread", "**needle** **thread** **needle**", true, true},
		{"one long word", strings.Repeat("abc,", 3000) + "needle" + strings.Repeat(",xyz", 3000), "needle", "**needle**", true, true},
		{"CJK", strings.Repeat("日本語の文章です。", 300) + "東京都" + strings.Repeat("日本語の文章です。", 300), "東京都", "**東京都**", true, true},
		{"emoji", strings.Repeat("🚀 ", 1000) + "needle" + strings.Repeat(" 🎉", 1000), "needle", "**needle**", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := snippet(tt.text, highlightsOf(t, tt.query), nil, true)
			if !strings.Contains(got, tt.mark) {
				t.Errorf("snippet %q does not hold %q", got, tt.mark)
			}
			if !utf8.ValidString(got) {
				t.Errorf("snippet %q is not valid UTF-8", got)
			}
			if strings.HasPrefix(got, "… ") != tt.head || strings.HasSuffix(got, " …") != tt.tail {
				t.Errorf("snippet %q: ellipsis before %v, after %v; want %v, %v", got, strings.HasPrefix(got, "… "), strings.HasSuffix(got, " …"), tt.head, tt.tail)
			}
			if strings.ContainsAny(got, "\n\t") {
				t.Errorf("snippet %q is not one line", got)
			}
			p := plain(got)
			if n := utf8.RuneCountInString(p); n < snippetWidth/2 || n > snippetWidth+snippetWidth/10 {
				t.Errorf("snippet of %d characters, want about %d: %q", n, snippetWidth, got)
			}
			// Cut between words: what it shows is in the text as it reads on one line, and
			// unless a word is longer than the snippet, whole words only.
			flat := strings.Join(strings.Fields(tt.text), " ")
			if !strings.Contains(flat, p) {
				t.Errorf("snippet %q is not a part of the text", p)
			}
			if tt.name == "CJK" && !strings.HasPrefix(p, "日本語") {
				t.Errorf("snippet %q does not start after a full stop", got)
			}
			if tt.name != "one long word" && tt.name != "CJK" { // no spaces to cut at

				fields := strings.Fields(p)
				first, last := fields[0], fields[len(fields)-1]
				if !strings.Contains(" "+flat+" ", " "+first+" ") && !strings.HasPrefix(flat, first) {
					t.Errorf("snippet %q starts inside a word", got)
				}
				if !strings.Contains(" "+flat+" ", " "+last+" ") && !strings.HasSuffix(flat, last) {
					t.Errorf("snippet %q ends inside a word", got)
				}
			}
		})
	}
}

// TestSnippet_Clean: the text is cleaned before it is cut, with enough of it around the cut that
// a secret is seen whole: wherever the window falls, no piece of a secret shows.
func TestSnippet_Clean(t *testing.T) {
	token := "ghp_" + strings.Repeat("a1B2c3D4", 5)
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2m+abc/XYZ0123456789abcdefgh\n", 60) +
		"q1w2e3r4t5y6u7i8o9p0\n-----END RSA PRIVATE KEY-----"
	secrets := []struct {
		name, secret, around string // around: the secret with what makes it one
	}{
		{"token", token, token},
		{"assignment", "hunter2hunter2xyz", "password = hunter2hunter2xyz"},
		{"bearer", "abcDEF123ghiJKL456mno", "Authorization: Bearer abcDEF123ghiJKL456mno"},
		{"pem", "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2m", pem},
		{"pem tail", "q1w2e3r4t5y6u7i8o9p0", pem},
	}
	for _, s := range secrets {
		for _, query := range []string{"needle", "needle private key end"} {
			for _, gap := range []int{0, 1, 5, 30, 100, 190, 250, 600, 1000, 2000, 2040, 2048, 2060, 3000, 5000} {
				for _, after := range []bool{false, true} {
					var text string
					if after {
						text = filler(3000) + " needle " + filler(gap) + " " + s.around + " " + filler(3000)
					} else {
						text = filler(3000) + " " + s.around + " " + filler(gap) + " needle " + filler(3000)
					}
					got := snippet(text, highlightsOf(t, query), fakeRedact, true)
					for i := 0; i+8 <= len(s.secret); i++ {
						if strings.Contains(got, s.secret[i:i+8]) {
							t.Fatalf("%s, %s, gap %d, after %v: snippet %q shows %q of the secret", s.name, query, gap, after, got, s.secret[i:i+8])
						}
					}
				}
			}
		}
	}
	// The match itself redacted: the snippet shows where it was, and nothing of it.
	text := filler(3000) + " token " + token + " " + filler(3000)
	got := snippet(text, highlightsOf(t, token[:20]+"*"), fakeRedact, true)
	if strings.Contains(got, "a1B2c3D4") || !strings.Contains(got, "[REDACTED]") {
		t.Errorf("a redacted match: snippet %q", got)
	}
}

// TestSnippet_Clamp: whatever the window, the snippet is valid UTF-8 and its marks pair up.
func TestSnippet_Clamp(t *testing.T) {
	texts := []string{
		strings.Repeat("é", 5000) + " needle",
		strings.Repeat("needle", 2000),
		strings.Repeat("needle ", 2000),
		"needle" + strings.Repeat("x", 5000),
		strings.Repeat("\xff", 300) + "needle" + strings.Repeat("\xfe", 300),
		strings.Repeat("a.", 3000) + "needle.needle",
	}
	for i, text := range texts {
		for _, clean := range []func(string) string{nil, fakeRedact, func(string) string { return "" }, func(s string) string { return s + s }} {
			got := snippet(text, highlightsOf(t, "needle"), clean, true)
			if !utf8.ValidString(got) || strings.Count(got, "**")%2 != 0 {
				t.Errorf("text %d: snippet %q", i, got)
			}
			if n := utf8.RuneCountInString(plain(got)); n > snippetWidth+snippetWidth/10 {
				t.Errorf("text %d: snippet of %d characters: %q", i, n, got)
			}
		}
	}
}

func BenchmarkSnippet(b *testing.B) {
	q, _ := Parse("needle thread")
	hs := q.highlights()
	for _, n := range []int{200, 4 << 10, 64 << 10} {
		text := filler(n/2) + " needle and thread " + filler(n/2)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				snippet(text, hs, nil, true)
			}
		})
	}
}

// TestSnippet_LongMark: a match longer than the snippet (a joined word of long parts) is shown
// and marked, not dropped.
func TestSnippet_LongMark(t *testing.T) {
	word := strings.Repeat("0", 63) + strings.Repeat("_", 185) + "0"
	term, _ := Analyzer{}.Lookup(word)
	got := snippet(" "+word, []highlight{{term: term}}, nil, true)
	if !strings.HasPrefix(got, "**000") || strings.Count(got, "**") != 2 {
		t.Errorf("snippet %q, want the word marked", got)
	}
}
