package claudecode

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// contextLen returns the length of s as Claude Code measures additionalContext against its cap:
// JavaScript's String.prototype.length, in UTF-16 code units. A rune above U+FFFF (most emoji)
// counts 2, every other rune 1, and each byte of invalid UTF-8 counts 1, as the U+FFFD a JSON
// encoder puts in its place would. It counts like inject.Len, which budgets the blocks Merge
// merges; adapters may not import inject, so the few lines are kept here too.
func contextLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
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

// cutMark ends a text cutHead shortened; it is 4 UTF-16 units: a space, '[', U+2026 and ']'.
const (
	cutMark    = " […]"
	cutMarkLen = 4
)

// cutHead returns s cut to at most max UTF-16 units (see contextLen), keeping the start, the way
// inject.Head cuts heirloom's own blocks.
//
// If s fits it is returned unchanged, byte for byte. Otherwise the kept text ends at a word
// boundary (before a whitespace rune) when one lies within the last fifth of the space left after
// the mark, else at a rune boundary; trailing whitespace is trimmed and " […]" is appended. The
// result, mark included, is never longer than max, and never splits a rune (so never a UTF-16
// surrogate pair). It returns "" when max is at most the mark's length or when nothing but
// whitespace would be kept. Invalid UTF-8 in the kept text becomes U+FFFD.
func cutHead(s string, max int) string {
	if contextLen(s) <= max {
		return s
	}
	if max <= cutMarkLen {
		return ""
	}
	budget := max - cutMarkLen
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
	return validUTF8(kept) + cutMark
}

// validUTF8 returns s with each byte of invalid UTF-8 replaced by U+FFFD, so contextLen is
// unchanged (strings.ToValidUTF8 would replace a run of them with one).
func validUTF8(s string) string {
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
