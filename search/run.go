package search

import (
	"container/heap"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"time"
)

// Ranking constants of BM25.
const (
	k1 = 1.2
	b  = 0.75
)

// Page sizes.
const (
	DefaultLimit = 20
	MaxLimit     = 200
)

// Options are a search's filters and paging.
type Options struct {
	Limit        int    // hits per page; ≤ 0 means DefaultLimit; at most MaxLimit
	Cursor       string // from the previous Page; "" for the first
	Role         string // "" = any
	Since, Until time.Time
	// Allow decides session-level filters (family, harness, project); nil allows all. It is
	// called at most once per session per Run.
	Allow func(session string) (bool, error)
	// Sessions, when not nil, are the only sessions whose turns are read (a family): Run reads
	// just their postings where the Source is a SessionSource, and each term's document
	// frequency is counted over them.
	Sessions []string
	// MaxDocFreq, when > 0, leaves out of the query a whole term (not a prefix) found in more
	// than this many of the turns read: reading its postings stops there. Such a term ranks
	// next to nothing (its IDF is low) yet costs the most to read; it bounds the cost of a
	// task's search over a large family (engine: the passages relevant to a sub-agent's task).
	// A query whose terms are all that common finds nothing.
	MaxDocFreq int
	// Plain leaves the snippets' matches unmarked (no **).
	Plain bool
	// Clean is applied to a snippet's text before it is cut and marked (redaction); nil keeps it.
	Clean func(string) string
	// Bind is what the caller's Allow depends on (its filters, as text): a cursor is only taken
	// back with the same query, filters and Bind.
	Bind string
}

// Page is one page of hits, best first; Cursor is "" on the last page.
type Page struct {
	Hits   []Hit
	Cursor string
}

// Hit is one matching turn.
type Hit struct {
	Doc     Doc
	Score   float64
	Role    string
	At      time.Time
	Snippet string
}

// CursorError is a cursor Run cannot take back: malformed, or from another query.
type CursorError struct{ Reason string }

func (e *CursorError) Error() string { return "cursor: " + e.Reason }

// cursor is what a page's Cursor holds: the first page's collection figures, the query it
// belongs to, and the last hit handed out.
type cursor struct {
	V       int     `json:"v"`
	Hash    uint64  `json:"h"`
	Docs    uint64  `json:"n"`
	Terms   uint64  `json:"t"`
	Stamp   uint64  `json:"s"`
	Score   float64 `json:"sc"`
	Session string  `json:"ss"`
	Seq     uint64  `json:"sq"`
	// DF holds the document frequencies the first page scored its terms with (up to
	// maxCursorTerms of them): turns deleted since must not move the scores.
	DF map[string]int `json:"df,omitempty"`
	// Since and Until are the first page's time range (UnixNano; 0: none). Later pages keep it
	// whatever their Options say, so a range given relative to now ("24h") does not move.
	Since int64 `json:"si,omitempty"`
	Until int64 `json:"un,omitempty"`
}

// maxCursorTerms bounds the document frequencies a cursor keeps (a prefix may match many
// terms); the rest are counted again on each page.
const maxCursorTerms = 64

const cursorVersion = 1

// candidate is a document some clause matched, with what ranking and filtering need.
type candidate struct {
	score float64
	role  string
	at    time.Time
	len   int
	// phrases are phrases the document must hold for it to be a hit, checked against its text
	// only when it would make the page (a required phrase's words are all in it; whether they
	// stand next to each other costs a read of the text).
	phrases [][]string
}

// Run evaluates q over src. Each term's postings are read once; documents indexed after the
// first page's snapshot (by Stamp) are ignored on later pages, and scores use the first page's
// collection figures and document frequencies, so pages stay stable while writes go on.
func Run(ctx context.Context, src Source, q Query, o Options) (Page, error) {
	limit := o.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	hash := queryHash(q, o)
	var cur *cursor
	if o.Cursor != "" {
		c, err := decodeCursor(o.Cursor)
		if err != nil {
			return Page{}, err
		}
		if c.Hash != hash {
			return Page{}, &CursorError{Reason: "it belongs to another query or other filters"}
		}
		cur = &c
		o.Since, o.Until = unixTime(c.Since), unixTime(c.Until)
	}
	st, err := src.Stats(ctx)
	if err != nil {
		return Page{}, err
	}
	if cur != nil {
		st = Stats{Docs: cur.Docs, Terms: cur.Terms, Stamp: cur.Stamp}
	}
	r := runner{src: src, st: st, o: o, allowed: map[string]bool{}, df: map[string]int{}}
	if o.Sessions != nil {
		r.sessions = make(map[string]bool, len(o.Sessions))
		for _, id := range o.Sessions {
			r.sessions[id] = true
		}
	}
	if cur != nil && cur.DF != nil {
		r.df = cur.DF
	}
	if st.Docs > 0 {
		r.avgLen = float64(st.Terms) / float64(st.Docs)
	}

	var matched map[Doc]*candidate
	var excluded []map[Doc]*candidate
	for _, c := range q.clauses {
		var docs map[Doc]*candidate
		if a, ok := c.requiredPhrase(); ok {
			// A phrase every hit must hold: its words' documents now, adjacency for the page.
			docs, err = r.phraseWords(ctx, a, matched)
			for _, x := range docs {
				x.phrases = append(x.phrases, a.phrase)
			}
		} else {
			docs, err = r.clause(ctx, c, matched)
		}
		if err != nil {
			return Page{}, err
		}
		switch {
		case c.not:
			excluded = append(excluded, docs)
		case matched == nil:
			matched = docs
		default:
			matched = intersect(matched, docs)
		}
	}
	var after Doc
	if cur != nil {
		after = Doc{Session: cur.Session, Seq: cur.Seq}
	}
	var list rankedHeap
	for d, c := range matched {
		if cur != nil && compareHits(c.score, d, cur.Score, after) <= 0 {
			continue // on an earlier page
		}
		if slices.ContainsFunc(excluded, func(x map[Doc]*candidate) bool { return x[d] != nil }) {
			continue
		}
		ok, err := r.allow(d.Session)
		if err != nil {
			return Page{}, err
		}
		if ok {
			list = append(list, ranked{d, c})
		}
	}
	// The page: candidates in rank order (taken from a heap: only the page's few are ordered),
	// those owing a phrase checked against their text, until one past the page is found (there
	// is a next page).
	heap.Init(&list)
	var page Page
	var kept []ranked
	texts := map[Doc]string{}
	for list.Len() > 0 && len(kept) < limit+1 {
		h := heap.Pop(&list).(ranked)
		if len(h.phrases) > 0 {
			text, err := src.Text(ctx, h.doc)
			if err != nil {
				return Page{}, err
			}
			if !slices.ContainsFunc(h.phrases, func(p []string) bool { return !hasPhrase(text, p) }) {
				texts[h.doc] = text
				kept = append(kept, h)
			}
			continue
		}
		kept = append(kept, h)
	}
	more := len(kept) > limit
	kept = kept[:min(len(kept), limit)]
	terms := q.highlights()
	for _, h := range kept {
		text, ok := texts[h.doc]
		if !ok {
			var err error
			if text, err = src.Text(ctx, h.doc); err != nil {
				return Page{}, err
			}
		}
		page.Hits = append(page.Hits, Hit{Doc: h.doc, Score: h.score, Role: h.role, At: h.at, Snippet: snippet(text, terms, o.Clean, !o.Plain)})
	}
	if more {
		last := kept[len(kept)-1]
		page.Cursor = encodeCursor(cursor{V: cursorVersion, Hash: hash, Docs: st.Docs, Terms: st.Terms, Stamp: st.Stamp, Score: last.score, Session: last.doc.Session, Seq: last.doc.Seq, DF: r.df,
			Since: unixNano(o.Since), Until: unixNano(o.Until)})
	}
	return page, nil
}

// ranked is a candidate with its document.
type ranked struct {
	doc Doc
	*candidate
}

// rankedHeap is a heap of candidates, best first (container/heap).
type rankedHeap []ranked

func (h rankedHeap) Len() int { return len(h) }
func (h rankedHeap) Less(i, j int) bool {
	return compareHits(h[i].score, h[i].doc, h[j].score, h[j].doc) < 0
}
func (h rankedHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *rankedHeap) Push(x any)   { *h = append(*h, x.(ranked)) }
func (h *rankedHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// compareHits orders by score, best first, then by session and Seq.
func compareHits(sx float64, dx Doc, sy float64, dy Doc) int {
	switch {
	case sx > sy:
		return -1
	case sx < sy:
		return 1
	}
	if c := strings.Compare(dx.Session, dy.Session); c != 0 {
		return c
	}
	switch {
	case dx.Seq < dy.Seq:
		return -1
	case dx.Seq > dy.Seq:
		return 1
	}
	return 0
}

// runner evaluates one query's clauses.
type runner struct {
	src      Source
	st       Stats
	avgLen   float64
	o        Options
	allowed  map[string]bool
	df       map[string]int  // the document frequencies scored with: a cursor's, and new ones
	sessions map[string]bool // Options.Sessions as a set; nil: every session
}

func (r *runner) allow(session string) (bool, error) {
	if r.o.Allow == nil {
		return true, nil
	}
	ok, seen := r.allowed[session]
	if seen {
		return ok, nil
	}
	ok, err := r.o.Allow(session)
	if err != nil {
		return false, err
	}
	r.allowed[session] = ok
	return ok, nil
}

// passes applies the posting-level filters: the snapshot's stamp, role and time.
func (r *runner) passes(p Posting) bool {
	if p.Stamp > r.st.Stamp {
		return false
	}
	if r.o.Role != "" && p.Role != r.o.Role {
		return false
	}
	if r.o.Since.IsZero() && r.o.Until.IsZero() {
		return true
	}
	if p.At.IsZero() {
		return false
	}
	return (r.o.Since.IsZero() || !p.At.Before(r.o.Since)) && (r.o.Until.IsZero() || p.At.Before(r.o.Until))
}

// clause returns the documents any alternative of c matches, scored (for a negated clause, the
// documents to leave out). within, when not nil, holds the only documents that matter: the
// earlier clauses' matches.
func (r *runner) clause(ctx context.Context, c clause, within map[Doc]*candidate) (map[Doc]*candidate, error) {
	var out map[Doc]*candidate
	for _, a := range c.alts {
		docs, err := r.atom(ctx, a, within)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = docs
			continue
		}
		for d, x := range docs {
			if have := out[d]; have != nil {
				have.score += x.score
			} else {
				out[d] = x
			}
		}
	}
	return out, nil
}

// requiredPhrase returns c's phrase when c is exactly one phrase every hit must hold (not
// excluded, no alternatives): its adjacency can wait until a document would make the page.
func (c clause) requiredPhrase() (atom, bool) {
	if c.not || len(c.alts) != 1 || c.alts[0].phrase == nil {
		return atom{}, false
	}
	return c.alts[0], true
}

// phraseWords returns the documents holding every word of phrase atom a, scored, whether or
// not the words stand next to each other (only documents of within, when it is not nil).
func (r *runner) phraseWords(ctx context.Context, a atom, within map[Doc]*candidate) (map[Doc]*candidate, error) {
	var docs map[Doc]*candidate
	for _, t := range a.phrase {
		scope := docs
		if scope == nil {
			scope = within
		}
		got, err := r.term(ctx, t, false, scope)
		if err != nil {
			return nil, err
		}
		if docs == nil {
			docs = got
		} else {
			docs = intersect(docs, got) // got ⊆ docs; their scores add up
		}
	}
	return docs, nil
}

// atom returns the documents a matches with its BM25 score. A phrase's adjacency is checked
// against each candidate's text here (a phrase among alternatives, or excluded); see
// requiredPhrase for the phrase every hit must hold.
func (r *runner) atom(ctx context.Context, a atom, within map[Doc]*candidate) (map[Doc]*candidate, error) {
	if a.phrase == nil {
		return r.term(ctx, a.term, a.prefix, within)
	}
	docs, err := r.phraseWords(ctx, a, within)
	if err != nil {
		return nil, err
	}
	for d := range docs {
		text, err := r.src.Text(ctx, d)
		if err != nil {
			return nil, err
		}
		if !hasPhrase(text, a.phrase) {
			delete(docs, d)
		}
	}
	return docs, nil
}

// term reads one term's postings (every term starting with it, for a prefix: each counts as a
// term of its own, with its own document frequency) and scores the documents: all of them, or
// only those of within when it is not nil. The candidates it returns are new ones.
func (r *runner) term(ctx context.Context, term string, prefix bool, within map[Doc]*candidate) (map[Doc]*candidate, error) {
	type hit struct {
		c  *candidate
		tf int
	}
	type termHits struct {
		df   int // every posting of the snapshot, filtered or not
		hits []hit
	}
	byTerm := map[string]*termHits{}
	var last *termHits // postings come term by term
	lastTerm := ""
	docs := map[Doc]*candidate{}
	var slab []candidate
	each := func(p Posting) error {
		if p.Stamp > r.st.Stamp || (r.sessions != nil && !r.sessions[p.Doc.Session]) {
			return nil
		}
		if last == nil || p.Term != lastTerm {
			if last = byTerm[p.Term]; last == nil {
				last = &termHits{}
				byTerm[p.Term] = last
			}
			lastTerm = p.Term
		}
		last.df++
		if r.o.MaxDocFreq > 0 && !prefix && last.df > r.o.MaxDocFreq {
			return errCommonTerm
		}
		if !r.passes(p) || (within != nil && within[p.Doc] == nil) {
			return nil
		}
		c := docs[p.Doc]
		if c == nil {
			if len(slab) == 0 {
				slab = make([]candidate, 512) // candidates allocated in runs, not one by one
			}
			c = &slab[0]
			slab = slab[1:]
			*c = candidate{role: p.Role, at: p.At, len: p.Len}
			docs[p.Doc] = c
		}
		last.hits = append(last.hits, hit{c, p.TF})
		return nil
	}
	var err error
	if ss, ok := r.src.(SessionSource); ok && r.sessions != nil && !prefix {
		err = ss.SessionPostings(ctx, term, r.o.Sessions, each)
	} else {
		err = r.src.Postings(ctx, term, prefix, each)
	}
	if errors.Is(err, errCommonTerm) {
		return map[Doc]*candidate{}, nil // too common to rank anything: left out
	}
	if err != nil {
		return nil, err
	}
	// Sum a document's terms in one order every time: floating-point addition is not
	// associative, and a page's cursor compares scores exactly.
	names := make([]string, 0, len(byTerm))
	for t := range byTerm {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, t := range names {
		th := byTerm[t]
		df, ok := r.df[t]
		if !ok {
			df = th.df
			if len(r.df) < maxCursorTerms {
				r.df[t] = df
			}
		}
		idf := r.idf(df)
		for _, h := range th.hits {
			h.c.score += idf * bm25TF(h.tf, h.c.len, r.avgLen)
		}
	}
	return docs, nil
}

// errCommonTerm stops the read of a term found in more than Options.MaxDocFreq turns.
var errCommonTerm = errors.New("term too common")

// idf is BM25's inverse document frequency of a term in df documents.
func (r *runner) idf(df int) float64 {
	n := float64(max(r.st.Docs, uint64(df)))
	return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
}

// bm25TF is BM25's saturated term frequency for a document of length dl.
func bm25TF(tf, dl int, avg float64) float64 {
	norm := 1.0
	if avg > 0 {
		norm = 1 - b + b*float64(dl)/avg
	}
	f := float64(tf)
	return f * (k1 + 1) / (f + k1*norm)
}

// intersect keeps the documents of x that y has, adding y's scores.
func intersect(x, y map[Doc]*candidate) map[Doc]*candidate {
	if len(y) < len(x) {
		x, y = y, x
	}
	for d, c := range x {
		if other := y[d]; other != nil {
			c.score += other.score
			c.phrases = append(c.phrases, other.phrases...)
		} else {
			delete(x, d)
		}
	}
	return x
}

// hasPhrase reports whether text's base tokens hold phrase's tokens next to each other.
func hasPhrase(text string, phrase []string) bool {
	found := false
	var seq []string
	Analyzer{}.Tokens(text, func(t string) {
		if found {
			return
		}
		seq = append(seq, t)
		if len(seq) > len(phrase) {
			seq = seq[1:]
		}
		if len(seq) == len(phrase) && slices.Equal(seq, phrase) {
			found = true
		}
	})
	return found
}

// queryHash binds a cursor to its query and filters.
// queryHash identifies a query and its filters for its cursors. The time range is left out: a
// cursor carries its own (see cursor.Since).
func queryHash(q Query, o Options) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s", q, o.Role, o.Bind)
	return h.Sum64()
}

// unixNano is t as a cursor keeps it: 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// unixTime is the time a cursor's unixNano names.
func unixTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func encodeCursor(c cursor) string {
	raw, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(raw)
}

func decodeCursor(s string) (cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, &CursorError{Reason: "not one this server gave"}
	}
	var c cursor
	if err := json.Unmarshal(raw, &c); err != nil || c.V != cursorVersion {
		return cursor{}, &CursorError{Reason: "not one this server gave"}
	}
	return c, nil
}
