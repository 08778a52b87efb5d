package search

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Snippet sizes.
const (
	snippetWidth  = 200              // characters a snippet shows, about
	snippetBefore = snippetWidth / 4 // of them before its first match, at most
	// cleanReach is how far, in characters, the text Clean sees reaches either side of the best
	// match before it is widened to whole lines: more than a snippet shows, so that what Clean
	// shortens still leaves a full snippet.
	cleanReach = snippetWidth + snippetWidth/2
	// lineReach bounds, in bytes, how far the text Clean sees is widened to reach a line's start
	// or end; a longer line is cut at a space, or failing that anywhere.
	lineReach = 2 << 10
	// armorReach bounds, in bytes, how far back the text Clean sees is widened to take in the
	// BEGIN line of an armored block (a PEM key) it starts inside.
	armorReach = 8 << 10
)

// highlight is one query word a snippet marks: a term, or a prefix of terms.
type highlight struct {
	term   string
	prefix bool
}

// highlights are the words of q's positive clauses.
func (q Query) highlights() []highlight {
	var out []highlight
	for _, c := range q.clauses {
		if c.not {
			continue
		}
		for _, a := range c.alts {
			if a.phrase != nil {
				for _, t := range a.phrase {
					out = append(out, highlight{term: t})
				}
				continue
			}
			out = append(out, highlight{term: a.term, prefix: a.prefix})
		}
	}
	return out
}

// span is a part of a text, by byte offsets.
type span struct{ start, end int }

// marks returns the spans of text that a highlight matches, in order, overlapping and touching
// ones merged: the words a snippet marks. A token matches as the index stores it, so `cancel`
// marks the Cancel of WithCancel and `header.go` the header.go of ledger/header.go.
func marks(text string, hs []highlight) []span {
	var out []span
	scan(text, func(t token) {
		if !t.indexed() {
			return
		}
		for _, h := range hs {
			if t.term == h.term || h.prefix && strings.HasPrefix(t.term, h.term) {
				out = append(out, span{t.start, t.end})
				return
			}
		}
	})
	slices.SortFunc(out, func(x, y span) int { return x.start - y.start })
	merged := out[:0]
	for _, m := range out {
		if n := len(merged); n > 0 && m.start <= merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, m.end)
			continue
		}
		merged = append(merged, m)
	}
	return merged
}

// best returns the index of the mark that opens the snippetWidth bytes holding the most marks,
// the first of equals; -1 when there is none.
func best(ms []span) int {
	at, most := -1, 0
	j := 0
	for i := range ms {
		j = max(j, i+1) // a mark longer than the window counts alone
		for j < len(ms) && ms[j].end-ms[i].start <= snippetWidth {
			j++
		}
		if j-i > most {
			at, most = i, j-i
		}
	}
	return at
}

// snippet returns about snippetWidth characters of text around its best match (where the most
// marks fall together; the text's start when nothing matches), on one line, cut between words
// (or, in a word longer than the snippet or in text written without spaces, after punctuation or
// between characters), with "…" where text was left out and every match marked **so**.
//
// clean (redaction) is applied before anything is cut, to a part of the text around the match
// made of whole lines and taking in an armored block (-----BEGIN …, a PEM key) it would start
// inside, so that clean sees each secret whole, with what tells it is one: the key name of
// `password = …`, the BEGIN line of a key. Only a line longer than lineReach, or a block that
// began more than armorReach earlier, is cut before clean sees it.
//
// With mark false the matches choose the window but are not marked.
func snippet(text string, hs []highlight, clean func(string) string, mark bool) string {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	ms := marks(text, hs)
	at, atEnd := 0, 0 // the best match, or where the snippet starts without one
	if i := best(ms); i >= 0 {
		at, atEnd = ms[i].start, ms[i].end
	}
	lo, hi := cleanRange(text, at)
	region := text[lo:hi]
	cleaned := false
	if clean != nil {
		if c := clean(region); c != region {
			region, cleaned = strings.ToValidUTF8(c, "\uFFFD"), true
			ms = marks(region, hs)
			if i := best(ms); i >= 0 {
				at, atEnd = ms[i].start, ms[i].end
			} else {
				at = runeStart(region, min(at-lo, len(region))) // the match was cleaned away: where it was
				atEnd = at
			}
		}
	}
	if !cleaned {
		ms, at, atEnd = shift(ms, lo, hi), at-lo, atEnd-lo
	}
	start, end := window(region, ms, at, atEnd)

	if !mark {
		ms = nil
	}
	var out strings.Builder
	out.Grow(end - start + 16)
	if lo > 0 || !blank(region[:start]) {
		out.WriteString("… ")
	}
	m := 0
	for m < len(ms) && ms[m].end <= start {
		m++
	}
	open := m < len(ms) && ms[m].start < start
	if open {
		out.WriteString("**")
	}
	space, wrote := false, false
	for i, r := range region[start:end] {
		i += start
		if unicode.IsSpace(r) {
			space = wrote
			continue
		}
		if space {
			out.WriteByte(' ')
			space = false
		}
		if !open && m < len(ms) && i == ms[m].start {
			out.WriteString("**")
			open = true
		}
		out.WriteRune(r)
		wrote = true
		if open && i+utf8.RuneLen(r) == ms[m].end {
			out.WriteString("**")
			open = false
			m++
		}
	}
	if !wrote {
		return ""
	}
	if open {
		out.WriteString("**")
	}
	if hi < len(text) || !blank(region[end:]) {
		out.WriteString(" …")
	}
	return out.String()
}

// blank reports whether s is all white space.
func blank(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsSpace(r) }) < 0
}

// shift keeps the marks within text[lo:hi] and makes them relative to lo.
func shift(ms []span, lo, hi int) []span {
	out := ms[:0]
	for _, m := range ms {
		if m.start >= lo && m.end <= hi {
			out = append(out, span{m.start - lo, m.end - lo})
		}
	}
	return out
}

// back returns the offset n characters before i in text (or 0).
func back(text string, i, n int) int {
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(text[:i])
		i -= size
	}
	return i
}

// forward returns the offset n characters after i in text (or its end), and how many it passed.
func forward(text string, i, n int) (int, int) {
	k := 0
	for ; k < n && i < len(text); k++ {
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	return i, k
}

// cleanRange returns the part of text clean sees for a snippet around at: cleanReach characters
// either side, widened to whole lines (within lineReach, else to a space) and back to the BEGIN
// line of an armored block it would start inside (within armorReach).
func cleanRange(text string, at int) (lo, hi int) {
	lo = back(text, at, cleanReach)
	hi, _ = forward(text, at, cleanReach+MaxTermLen)
	if lo > 0 {
		from := max(0, lo-lineReach)
		if k := strings.LastIndexByte(text[from:lo], '\n'); k >= 0 {
			lo = from + k + 1
		} else if from == 0 {
			lo = 0
		} else if k := strings.LastIndexFunc(text[from:lo], unicode.IsSpace); k >= 0 {
			lo = from + k + 1
		}
	}
	if lo > 0 {
		from := max(0, lo-armorReach)
		if k := strings.LastIndex(text[from:lo], "-----BEGIN "); k >= 0 && !strings.Contains(text[from+k:lo], "-----END ") {
			lo = from + k
		}
	}
	if hi < len(text) {
		to := min(len(text), hi+lineReach)
		if k := strings.IndexByte(text[hi:to], '\n'); k >= 0 {
			hi += k
		} else if to == len(text) {
			hi = len(text)
		} else if k := strings.IndexFunc(text[hi:to], unicode.IsSpace); k >= 0 {
			hi += k
		}
	}
	return lo, hi
}

// window returns the part of text a snippet shows around text[at:atEnd] (the best match, or
// where it was): from up to snippetBefore characters before it, more when the text ends soon
// after, to snippetWidth characters in all, cut between words where it can. A mark is cut only
// when it is much longer than a term (CJK text matching again and again).
func window(text string, ms []span, at, atEnd int) (start, end int) {
	start = back(text, at, snippetBefore)
	end, n := forward(text, start, snippetWidth)
	if n < snippetWidth && start > 0 {
		start = back(text, start, snippetWidth-n) // the text ends soon: show more before
	}
	if start > 0 {
		start = cutAfter(text, start, at)
	}
	if end < len(text) {
		_, n := utf8.DecodeRuneInString(text[start:])
		end = cutBefore(text, max(atEnd, start+n), end)
	}
	for _, m := range ms {
		if m.start < start && start < m.end && start-m.start <= MaxTermLen {
			start = m.start
		}
		if m.start < end && end < m.end {
			switch {
			case m.start > at:
				end = m.start // left for the next look
			case m.end-end <= MaxTermLen:
				end = m.end
			}
		}
	}
	return start, end
}

// cutAfter moves start forward, not past at, to the start of a word: after a space, else after
// punctuation; where neither comes before at, start stays (text without spaces, or one long
// word).
func cutAfter(text string, start, at int) int {
	if r, _ := utf8.DecodeLastRuneInString(text[:start]); unicode.IsSpace(r) {
		return start
	}
	if k := strings.IndexFunc(text[start:at], unicode.IsSpace); k >= 0 {
		return start + k + 1
	}
	for i, r := range text[start:at] {
		if !wordRune(r) {
			return start + i + utf8.RuneLen(r)
		}
	}
	return start
}

// cutBefore moves end back, not before from, to the end of a word: before a space, else after
// punctuation; where neither comes after from, end stays.
func cutBefore(text string, from, end int) int {
	if r, _ := utf8.DecodeRuneInString(text[end:]); unicode.IsSpace(r) || from >= end {
		return end
	}
	if k := strings.LastIndexFunc(text[from:end], unicode.IsSpace); k >= 0 {
		return from + k
	}
	cut := end
	for i, r := range text[from:end] {
		if !wordRune(r) {
			cut = from + i + utf8.RuneLen(r)
		}
	}
	return cut
}

// wordRune reports whether r is part of a word: a letter, digit or mark.
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// runeStart moves i back to the start of the rune it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
