package inject

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/inject/textcut"
)

// rawSlack is how many bytes beyond a budget's worst-case size clipHead and clipTail keep, so
// that redaction and whitespace collapsing, which only shrink text, still leave enough to fill
// the budget in all but pathological inputs.
const rawSlack = 8 << 10

// rawBudget is how many raw bytes are enough to fill max units: a unit is at most 3 bytes of
// UTF-8, plus rawSlack.
func rawBudget(max int) int {
	if max < 0 {
		max = 0
	}
	return 3*max + rawSlack
}

// clean returns s with every byte of invalid UTF-8 replaced by U+FFFD. Len(clean(s)) == Len(s).
func clean(s string) string { return textcut.Clean(s) }

// collapse replaces every run of whitespace in s with one space and trims both ends, as
// strings.Join(strings.Fields(s), " ") would, in one pass and one allocation (none when s is
// already collapsed).
func collapse(s string) string {
	if collapsed(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	word := -1 // where the word being read starts; -1 between words
	flush := func(end int) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[word:end])
		word = -1
	}
	for i := 0; i < len(s); {
		space, w := asciiSpace[s[i]], 1
		if s[i] >= utf8.RuneSelf {
			var r rune
			r, w = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
		}
		switch {
		case space && word >= 0:
			flush(i)
		case !space && word < 0:
			word = i
		}
		i += w
	}
	if word >= 0 {
		flush(len(s))
	}
	return b.String()
}

// asciiSpace holds the ASCII bytes unicode.IsSpace reports as space.
var asciiSpace = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// collapsed reports whether collapse would return s as it is: no whitespace but single spaces
// between other runes.
func collapsed(s string) bool {
	prevSpace := true // at the start, as after a space: a leading space is not collapsed
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == ' ' {
				if prevSpace {
					return false
				}
				prevSpace = true
			} else if unicode.IsSpace(rune(c)) {
				return false
			} else {
				prevSpace = false
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			return false
		}
		prevSpace = false
		i += w
	}
	return !prevSpace || s == ""
}

// normalizeLines keeps the line structure of s but trims trailing whitespace from each line,
// turns CRLF and CR into LF, squeezes runs of blank lines into one, and trims the whole.
func normalizeLines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		l = strings.TrimRightFunc(l, unicode.IsSpace)
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// clipHead returns at most n bytes from the start of s, cut at whitespace or at a rune start, and
// whether anything was cut. It bounds the work redaction does on huge inputs; the visible,
// budgeted cut is made later by head.
func clipHead(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	end := n
	// Prefer whitespace in the last 1 KiB so no token-shaped secret is split in two.
	if i := strings.LastIndexFunc(s[max(0, n-1024):n], unicode.IsSpace); i >= 0 {
		end = max(0, n-1024) + i
	} else {
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
	}
	return s[:end], true
}

// clipTail is clipHead for the end of s: at most n bytes from the end.
func clipTail(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	start := len(s) - n
	if i := strings.IndexFunc(s[start:min(len(s), start+1024)], unicode.IsSpace); i >= 0 {
		start += i
	} else {
		for start < len(s) && !utf8.RuneStart(s[start]) {
			start++
		}
	}
	return s[start:], true
}
