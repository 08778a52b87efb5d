package inject

import "unicode/utf8"

// Len returns the length of s in UTF-16 code units: what JavaScript's String.prototype.length
// reports, and so what Claude Code counts against its additionalContext cap. A rune above U+FFFF
// (most emoji) counts 2, every other rune 1. Each byte of invalid UTF-8 counts 1, as the U+FFFD a
// JSON encoder puts in its place would.
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
