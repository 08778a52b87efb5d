package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTermLen is the length in bytes of the longest term the analyzer emits. A longer part, joined
// identifier or compound is dropped, never cut: a cut term is nothing anyone would type.
const MaxTermLen = 64

// blobLen is the length from which a run of base64 characters may be a blob (see scanner.blob).
const blobLen = 64

// Analyzer turns text into index terms, and query words into what to look up. It holds no state:
// the zero value is ready, and one value may be used from many goroutines. doc.go states the rules.
type Analyzer struct{}

// Version identifies the analyzer's rules; it changes whenever a rule does. An index built under
// one version must be rebuilt for another: a query analyzed under other rules misses terms.
func (Analyzer) Version() int { return 2 }

// Terms calls add once for every term occurrence in text, base tokens and derived forms alike, in
// text order within each run of words. The store counts a term's calls as its TF and all calls as
// the turn's length. A term may be a substring of text (no copy is made when folding changes
// nothing): clone it to keep it past the turn's indexing. Terms never calls add with more than
// 2×len(text) terms or with a term longer than MaxTermLen bytes; invalid UTF-8 separates words.
func (Analyzer) Terms(text string, add func(term string)) {
	scan(text, func(t token) {
		if t.indexed() {
			add(t.term)
		}
	})
}

// Tokens calls add for each base token of text in order: word parts and CJK grams, without the
// derived forms. Phrases are matched against this sequence.
func (Analyzer) Tokens(text string, add func(tok string)) {
	scan(text, func(t token) {
		if t.kind == kindPart && t.indexed() {
			add(t.term)
		}
	})
}

// Lookup says how the index finds a query word: by the one term Terms stores for the word as a
// whole (term), or, when Terms keeps no such term, by its base tokens next to each other (phrase):
// for words run together by punctuation that is no connector (`f(x)`), CJK text of three
// characters or more, and compounds longer than MaxTermLen. Both are empty when the word has
// nothing to search for: no letters or digits, a blob, or a part longer than MaxTermLen.
func (Analyzer) Lookup(word string) (term string, phrase []string) {
	term, phrase, _ = lookup(word)
	return term, phrase
}

// lookup is Analyzer.Lookup; tooLong reports a word that has letters or digits but nothing the
// index keeps (a blob or an over-long part), which a query should reject rather than drop.
func lookup(word string) (term string, phrase []string, tooLong bool) {
	var toks []token
	scan(word, func(t token) { toks = append(toks, t) })
	lo, hi := len(word), 0
	for _, t := range toks {
		if t.kind != kindPart && t.kind != kindBlob {
			continue
		}
		if !t.indexed() {
			return "", nil, true
		}
		phrase = append(phrase, t.term)
		lo, hi = min(lo, t.start), max(hi, t.end)
	}
	if len(phrase) == 0 {
		return "", nil, false
	}
	if toks[0].seg == toks[len(toks)-1].seg {
		// One run of words: the most derived term spanning all of it is what the index stored.
		var best *token
		for i := range toks {
			t := &toks[i]
			if t.start == lo && t.end == hi && t.indexed() && (best == nil || t.kind > best.kind) {
				best = t
			}
		}
		if best != nil {
			return best.term, nil, false
		}
	}
	if len(phrase) == 1 {
		return phrase[0], nil, false
	}
	return "", phrase, false
}

// tokKind says how a token was made.
type tokKind uint8

const (
	kindBlob     tokKind = iota // skipped text (see scanner.blob); never indexed
	kindPart                    // a base token: a part of a word, or a CJK gram
	kindJoined                  // a word's parts joined: parseLedgerHeader → parseledgerheader
	kindCompound                // words with their connectors: context.withcancel, header.go
)

// token is one term occurrence with where it came from.
type token struct {
	term       string
	start, end int // the span of text it stands for
	seg        int // which run (of words and connectors, of CJK, or a blob) it came from
	kind       tokKind
}

// indexed reports whether Terms emits t.
func (t token) indexed() bool { return t.kind != kindBlob && len(t.term) <= MaxTermLen }

// Character classes.
const (
	cOther uint8 = iota // separates runs
	cLower              // lower-case or caseless letters, and marks
	cUpper
	cDigit
	cUnder // '_': inside a word, between parts
	cConn  // connectors: between the words of a compound
)

// asciiClass classifies the ASCII bytes.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		switch {
		case 'a' <= c && c <= 'z':
			t[c] = cLower
		case 'A' <= c && c <= 'Z':
			t[c] = cUpper
		case '0' <= c && c <= '9':
			t[c] = cDigit
		case c == '_':
			t[c] = cUnder
		}
	}
	for _, c := range `./\:-@#'` {
		t[c] = cConn
	}
	return t
}()

// base64Char reports whether c may occur in base64 (either alphabet).
func base64Char(c byte) bool {
	return c < utf8.RuneSelf && asciiClass[c] >= cLower && asciiClass[c] <= cUnder || c == '+' || c == '/' || c == '=' || c == '-'
}

// classOf classifies a rune of a run of words (not CJK).
func classOf(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case r == '’':
		return cConn
	case unicode.IsDigit(r):
		return cDigit
	case r == 'ẞ', (unicode.IsUpper(r) || unicode.IsTitle(r)) && foldRune(r) != r:
		// Only a letter that folding changes starts a part, so folded text never splits again.
		return cUpper
	case unicode.IsLetter(r), unicode.IsMark(r):
		return cLower
	}
	return cOther
}

// isCJK reports whether r is Han, Hiragana or Katakana: scripts written without spaces, which are
// indexed in overlapping pairs of characters.
func isCJK(r rune) bool {
	return r >= 0x2e80 && (unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 'ー')
}

// foldRune is r's simple case folding, for r beyond ASCII other than ß and ẞ (see appendFolded).
func foldRune(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }

// appendFolded appends r case-folded to b. ß and ẞ fold to "ss", as in full case folding, so
// "Größe" and "GRÖSSE" meet; all else folds rune for rune.
func appendFolded(b []byte, r rune) []byte {
	switch {
	case r < utf8.RuneSelf:
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(b, byte(r))
	case r == 'ß' || r == 'ẞ':
		return append(b, "ss"...)
	}
	return utf8.AppendRune(b, foldRune(r))
}

// scanner splits one text into tokens.
type scanner struct {
	text   string
	emit   func(token)
	seg    int    // the current run's number
	runEnd int    // the base64 run starting before runEnd has been checked for a blob
	words  []word // the current run's words
	joined []byte // a word's parts, joined
	folded []byte // a part, folded
	canon  []byte // a run's compound form
}

// word is one word of a run: a maximal run of letters, digits, marks and '_'.
type word struct {
	start, end int    // its span in text
	ps, pe     int    // from its first part's start to its last part's end
	canon      string // its parts folded and joined
	raw        bool   // canon == text[start:end]
	cs, ce     int    // canon's span in the run's compound form
}

// scan calls emit for every token of text, run by run and, within a run, parts and joined forms
// word by word, then the compounds.
func scan(text string, emit func(token)) {
	s := scanner{text: text, emit: emit}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if i >= s.runEnd && base64Char(c) {
				if end, ok := s.blob(i); ok {
					s.skip(i, end)
					i = end
					continue
				}
			}
			if asciiClass[c] == cOther {
				i++
			} else {
				i = s.run(i)
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJK(r):
			i = s.cjk(i)
		case r != utf8.RuneError && classOf(r) != cOther:
			i = s.run(i)
		default:
			i += n
		}
	}
}

// blob checks the run of base64 characters starting at i and returns its end. A run of blobLen
// bytes or more that has upper case, lower case and digits, and fewer than one byte in 16 of
// "+/=_-", is a blob (base64 data, a key, a JWT part), skipped whole. Paths and kebab- or
// snake_case names have far more separators; hex has no upper case.
func (s *scanner) blob(i int) (end int, ok bool) {
	var upper, lower, digit bool
	punct := 0
	j := i
	for ; j < len(s.text) && base64Char(s.text[j]); j++ {
		switch asciiClass[s.text[j]] {
		case cUpper:
			upper = true
		case cLower:
			lower = true
		case cDigit:
			digit = true
		default:
			punct++
		}
	}
	s.runEnd = j
	return j, j-i >= blobLen && upper && lower && digit && punct*16 < j-i
}

// skip emits the one token of the blob text[i:end], which Terms leaves out and a query rejects.
func (s *scanner) skip(i, end int) {
	s.emit(token{start: i, end: end, seg: s.seg, kind: kindBlob})
	s.seg++
}

// run indexes the run of words and connectors starting at i and returns where scanning goes on.
func (s *scanner) run(i int) int {
	text := s.text
	j, blobEnd := i, -1
	for j < len(text) {
		c := text[j]
		if c < utf8.RuneSelf {
			if j >= s.runEnd && base64Char(c) {
				if end, ok := s.blob(j); ok {
					blobEnd = end
					break
				}
			}
			if asciiClass[c] == cOther {
				break
			}
			j++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[j:])
		if r == utf8.RuneError || isCJK(r) || classOf(r) == cOther {
			break
		}
		j += n
	}
	s.words = s.words[:0]
	for k := i; k < j; {
		r, n := rune(text[k]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(text[k:])
		}
		if classOf(r) == cConn {
			k += n
			continue
		}
		end := k + n
		for end < j {
			r, n := rune(text[end]), 1
			if r >= utf8.RuneSelf {
				r, n = utf8.DecodeRuneInString(text[end:])
			}
			if classOf(r) == cConn {
				break
			}
			end += n
		}
		s.word(k, end)
		k = end
	}
	s.compounds()
	s.seg++
	if blobEnd >= 0 {
		s.skip(j, blobEnd)
		return blobEnd
	}
	return j
}

// word emits the parts of text[start:end] and, when there are several, their joined form, and
// adds the word to s.words. Parts split at '_', before an upper-case letter that follows a
// lower-case letter or a digit, and before the last of several upper-case letters that precede a
// lower-case one: HTTPServer → http, server; sha256Sum → sha256, sum.
func (s *scanner) word(start, end int) {
	w := word{start: start, end: end, ps: -1}
	s.joined = s.joined[:0]
	parts := 0
	var first string
	part := func(ps, pe int) {
		t := s.fold(ps, pe)
		s.emit(token{term: t, start: ps, end: pe, seg: s.seg, kind: kindPart})
		if parts == 0 {
			first, w.ps = t, ps
		}
		w.pe = pe
		s.joined = append(s.joined, t...)
		parts++
	}
	ps, prev, prevAt := -1, cUnder, start
	for i := start; i < end; {
		r, n := rune(s.text[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s.text[i:])
		}
		c := classOf(r)
		switch {
		case c == cUnder:
			if ps >= 0 {
				part(ps, i)
				ps = -1
			}
		case ps < 0:
			ps = i
		case c == cUpper && (prev == cLower || prev == cDigit):
			part(ps, i)
			ps = i
		case c == cLower && prev == cUpper && prevAt > ps:
			part(ps, prevAt)
			ps = prevAt
		}
		prev, prevAt = c, i
		i += n
	}
	if ps >= 0 {
		part(ps, end)
	}
	switch {
	case parts == 0:
		return // underscores only: no word
	case parts == 1:
		w.canon = first
		w.raw = first == s.text[start:end]
	default:
		if len(s.joined) <= MaxTermLen {
			w.canon = string(s.joined)
			s.emit(token{term: w.canon, start: w.ps, end: w.pe, seg: s.seg, kind: kindJoined})
		} else {
			w.canon = string(s.joined) // no term, but compounds need its length
		}
	}
	s.words = append(s.words, w)
}

// fold returns text[ps:pe] case-folded: the substring itself when folding changes nothing.
func (s *scanner) fold(ps, pe int) string {
	t := s.text[ps:pe]
	i := 0
	for i < len(t) && t[i] < utf8.RuneSelf && !('A' <= t[i] && t[i] <= 'Z') {
		i++
	}
	if i == len(t) || len(t) > 3*MaxTermLen { // folding shrinks a rune to a third at most
		return t
	}
	b := append(s.folded[:0], t[:i]...)
	for _, r := range t[i:] {
		b = appendFolded(b, r)
	}
	s.folded = b
	if string(b) == t {
		return t
	}
	return string(b)
}

// compounds emits the compound terms of the run in s.words: every run of two or more words that
// starts at its first word or ends at its last, each word in its joined form, with the connectors
// between as written, when it fits in MaxTermLen: ledger/header.go → ledger/header,
// ledger/header.go, header.go. Where the run has colons, the same holds for each section between
// them: ledger/header.go:42 also gives header.go.
func (s *scanner) compounds() {
	ws := s.words
	k := len(ws)
	if k < 2 {
		return
	}
	raw := true
	for _, w := range ws {
		raw = raw && w.raw
	}
	var c string
	if raw {
		c = s.text[ws[0].start:ws[k-1].end]
		for i := range ws {
			ws[i].cs, ws[i].ce = ws[i].start-ws[0].start, ws[i].end-ws[0].start
		}
	} else {
		b := s.canon[:0]
		for i := range ws {
			if i > 0 {
				b = append(b, s.text[ws[i-1].end:ws[i].start]...)
			}
			ws[i].cs = len(b)
			b = append(b, ws[i].canon...)
			ws[i].ce = len(b)
		}
		s.canon = b
		c = string(b)
	}
	s.ends(c, 0, k-1)
	// The same within each section between colons, for what the run's ends miss: the file of
	// ledger/header.go:42, the host of https://example.com/a, github.com in git@github.com:o/r.
	a := 0
	for i := 1; i <= k; i++ {
		if i < k && strings.IndexByte(s.text[ws[i-1].end:ws[i].start], ':') < 0 {
			continue
		}
		if i-1 > a && (a > 0 || i < k) {
			s.ends(c, a, i-1)
		}
		a = i
	}
}

// ends emits the compounds of words a..z of s.words that start at a or end at z, except those
// that start at the run's first word or end at its last when a..z is part of the run (the run's
// own ends emit them). c is the run's compound form.
func (s *scanner) ends(c string, a, z int) {
	ws := s.words
	k := len(ws)
	whole := a == 0 && z == k-1
	for e := a + 1; e <= z && ws[e].ce-ws[a].cs <= MaxTermLen; e++ {
		if whole || a > 0 && e < k-1 {
			s.emit(token{term: c[ws[a].cs:ws[e].ce], start: ws[a].ps, end: ws[e].pe, seg: s.seg, kind: kindCompound})
		}
	}
	for b := z - 1; b > a && ws[z].ce-ws[b].cs <= MaxTermLen; b-- {
		if whole || z < k-1 {
			s.emit(token{term: c[ws[b].cs:ws[z].ce], start: ws[b].ps, end: ws[z].pe, seg: s.seg, kind: kindCompound})
		}
	}
}

// cjk emits the overlapping pairs of characters of the CJK run starting at i (日本語 → 日本, 本語),
// or the character alone when the run has one, and returns the run's end.
func (s *scanner) cjk(i int) int {
	prev, j, n := -1, i, 0
	for j < len(s.text) {
		r, size := utf8.DecodeRuneInString(s.text[j:])
		if !isCJK(r) {
			break
		}
		if prev >= 0 {
			s.emit(token{term: s.text[prev : j+size], start: prev, end: j + size, seg: s.seg, kind: kindPart})
		}
		prev, j, n = j, j+size, n+1
	}
	if n == 1 {
		s.emit(token{term: s.text[i:j], start: i, end: j, seg: s.seg, kind: kindPart})
	}
	s.seg++
	return j
}
