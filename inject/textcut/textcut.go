// Package textcut measures text the way the harnesses count it, in UTF-16 code units (what
// JavaScript's String.prototype.length reports, and so what Claude Code counts against its
// additionalContext cap), and cuts it to a budget at a word or rune boundary with a visible
// marker. It imports nothing: inject budgets its blocks with it, and Claude Code's reply merging
// (adapters/claudecode, linked by the hook shim) cuts merged context with it.
package textcut

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The cut markers. Each is MarkerLen UTF-16 units: a space, '[', U+2026 and ']'.
const (
	HeadMarker = " […]" // appended by Head
	TailMarker = "[…] " // prefixed by Tail
	MarkerLen  = 4
)

// Len returns the length of s in UTF-16 code units. A rune above U+FFFF (most emoji) counts 2,
// every other rune 1. Each byte of invalid UTF-8 counts 1, as the U+FFFD a JSON encoder puts in
// its place would.
func Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeUnits(r)
		i += size
	}
	return n
}

// runeUnits is the UTF-16 length of r; utf8.RuneError (an invalid byte) counts 1.
func runeUnits(r rune) int {
	if r > 0xFFFF {
		return 2
	}
	return 1
}

// Head returns s cut to at most max UTF-16 units (see Len), keeping the start.
//
// If s fits it is returned unchanged, byte for byte. Otherwise the kept text ends at a word
// boundary (before a whitespace rune) when one lies within the last fifth of the space left after
// the marker, else at a rune boundary; trailing whitespace is trimmed and the marker " […]" is
// appended. The result, marker included, is never longer than max. A rune is never split, so a
// UTF-16 surrogate pair is never split either. Head returns "" when max is at most the marker's
// length or when nothing but whitespace would be kept. Invalid UTF-8 bytes in the kept text are
// replaced with U+FFFD, so a cut result is always valid UTF-8.
func Head(s string, max int) string {
	return head(s, max, false)
}

// Tail returns s cut to at most max UTF-16 units, keeping the end: the mirror image of Head. The
// cut is made at the front, after a whitespace rune when one lies within the first fifth of the
// space left after the marker, leading whitespace is trimmed and "[…] " is prefixed. Like Head it
// returns s unchanged when it fits and "" when max is at most the marker's length or only
// whitespace would be kept.
func Tail(s string, max int) string {
	return tail(s, max, false)
}

// HeadMarked is Head, marking s as cut even when it fits: for a text whose source was clipped
// before s was made.
func HeadMarked(s string, max int) string { return head(s, max, true) }

// TailMarked is Tail, marking s as cut even when it fits (see HeadMarked).
func TailMarked(s string, max int) string { return tail(s, max, true) }

// Clean returns s with every byte of invalid UTF-8 replaced by U+FFFD. Len(Clean(s)) == Len(s)
// (strings.ToValidUTF8 would replace a run of them with one).
func Clean(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r) // an invalid byte ranges as utf8.RuneError, written as U+FFFD
	}
	return b.String()
}

// head is Head; with cut set it marks s as cut even when s already fits (its source was clipped
// before s was made).
func head(s string, max int, cut bool) string {
	if !cut && Len(s) <= max {
		return s
	}
	if max <= MarkerLen {
		return ""
	}
	budget := max - MarkerLen
	low := budget - budget/5 // word boundaries at unit offsets in [low, budget] are acceptable
	end, space := len(s), -1
	u := 0 // units before the rune at i
	for i, r := range s {
		if u >= low && u <= budget && unicode.IsSpace(r) {
			space = i
		}
		w := runeUnits(r)
		if u+w > budget {
			end = i
			break
		}
		u += w
	}
	kept := ""
	if end < len(s) && space >= 0 {
		kept = strings.TrimRightFunc(s[:space], unicode.IsSpace)
	}
	if kept == "" {
		kept = strings.TrimRightFunc(s[:end], unicode.IsSpace)
	}
	if kept == "" {
		return ""
	}
	return Clean(kept) + HeadMarker
}

// tail is Tail; cut as for head.
func tail(s string, max int, cut bool) string {
	total := Len(s)
	if !cut && total <= max {
		return s
	}
	if max <= MarkerLen {
		return ""
	}
	budget := max - MarkerLen
	from := total - budget // the kept text starts at a unit offset ≥ from
	high := from + budget/5
	start, space := len(s), -1
	if from <= 0 {
		start = 0
	} else {
		u := 0 // units before the rune at i
		for i, r := range s {
			if u >= from && start == len(s) {
				start = i
			}
			w := runeUnits(r)
			if space < 0 && u+w >= from && u+w <= high && unicode.IsSpace(r) {
				space = i + utf8.RuneLen(r)
			}
			if u > high || (start < len(s) && space >= 0) {
				break
			}
			u += w
		}
	}
	kept := ""
	if space >= 0 {
		kept = strings.TrimLeftFunc(s[space:], unicode.IsSpace)
	}
	if kept == "" {
		kept = strings.TrimLeftFunc(s[start:], unicode.IsSpace)
	}
	if kept == "" {
		return ""
	}
	return TailMarker + Clean(kept)
}
