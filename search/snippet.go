package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Snippet sizes, in bytes of text.
const (
	snippetWidth  = 200  // about what a hit shows
	snippetRegion = 2048 // what Clean sees around the best window, each side
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

// span is one whitespace-separated chunk of a text, by byte offsets.
type span struct{ start, end int }

// matches reports whether chunk holds a term a highlight asks for.
func matches(chunk string, hs []highlight) bool {
	hit := false
	Analyzer{}.Terms(chunk, func(t string) {
		for _, h := range hs {
			if t == h.term || h.prefix && strings.HasPrefix(t, h.term) {
				hit = true
			}
		}
	})
	return hit
}

// chunks splits text at whitespace.
func chunks(text string) []span {
	var out []span
	start := -1
	for i, r := range text {
		if unicode.IsSpace(r) {
			if start >= 0 {
				out = append(out, span{start, i})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, span{start, len(text)})
	}
	return out
}

// snippet returns about snippetWidth bytes of text around its best match (the window holding
// the most matched chunks), cleaned, on one line, cut at chunk boundaries with "…" where it was
// cut, and every matched chunk marked **so**.
func snippet(text string, hs []highlight, clean func(string) string) string {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	// Clean a region around the best window of the raw text first, so that a secret is replaced
	// whole before anything is cut.
	center := bestWindow(text, chunks(text), hs)
	lo, hi := runeStart(text, max(0, center-snippetRegion)), runeStart(text, min(len(text), center+snippetRegion))
	region := text[lo:hi]
	if clean != nil {
		region = clean(region)
	}
	cs := chunks(region)
	if len(cs) == 0 {
		return ""
	}
	at := bestWindow(region, cs, hs)
	first := 0
	for first < len(cs) && cs[first].end <= at {
		first++
	}
	first = min(first, len(cs)-1)
	// Start a little before the match, so it has context on both sides.
	for first > 0 && cs[first].start-cs[first-1].start < snippetWidth/4 && at-cs[first-1].start < snippetWidth/4 {
		first--
	}
	last := first
	for last+1 < len(cs) && cs[last+1].end-cs[first].start <= snippetWidth {
		last++
	}
	var out strings.Builder
	if first > 0 || lo > 0 {
		out.WriteString("… ")
	}
	for i := first; i <= last; i++ {
		if i > first {
			out.WriteByte(' ')
		}
		c := region[cs[i].start:cs[i].end]
		if len(c) > snippetWidth {
			c = c[:runeStart(c, snippetWidth)] + "…"
		}
		if matches(c, hs) {
			out.WriteString("**" + c + "**")
		} else {
			out.WriteString(c)
		}
	}
	if last < len(cs)-1 || hi < len(text) {
		out.WriteString(" …")
	}
	return out.String()
}

// bestWindow returns the start offset of the matched chunk that opens the snippetWidth window
// with the most matched chunks (0 when none matches).
func bestWindow(text string, cs []span, hs []highlight) int {
	var hits []int
	for _, c := range cs {
		if matches(text[c.start:c.end], hs) {
			hits = append(hits, c.start)
		}
	}
	best, bestN := 0, 0
	for i, start := range hits {
		n := 0
		for j := i; j < len(hits) && hits[j]-start < snippetWidth; j++ {
			n++
		}
		if n > bestN {
			best, bestN = start, n
		}
	}
	return best
}

// runeStart moves i back to the start of the rune it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
