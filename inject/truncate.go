package inject

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The cut markers. Each is 4 UTF-16 units: a space, '[', U+2026 and ']'.
const (
	headMarker = " […]" // appended by Head
	tailMarker = "[…] " // prefixed by Tail
	markerLen  = 4
)

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

// head is Head; with cut set it marks s as cut even when s already fits (its source was clipped
// before s was made).
func head(s string, max int, cut bool) string {
	if !cut && Len(s) <= max {
		return s
	}
	if max <= markerLen {
		return ""
	}
	budget := max - markerLen
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
	return clean(kept) + headMarker
}

// tail is Tail; cut as for head.
func tail(s string, max int, cut bool) string {
	total := Len(s)
	if !cut && total <= max {
		return s
	}
	if max <= markerLen {
		return ""
	}
	budget := max - markerLen
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
	return tailMarker + clean(kept)
}
