package search

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// search parses query and runs it over src, failing the test on an error.
func search(t *testing.T, src Source, query string, o Options) Page {
	t.Helper()
	q, err := Parse(query)
	if err != nil {
		t.Fatalf("Parse(%q): %v", query, err)
	}
	page, err := Run(t.Context(), src, q, o)
	if err != nil {
		t.Fatalf("Run(%q): %v", query, err)
	}
	return page
}

// hitNames lists a page's hits as "session/seq".
func hitNames(p Page) []string {
	out := []string{}
	for _, h := range p.Hits {
		out = append(out, fmt.Sprintf("%s/%d", h.Doc.Session, h.Doc.Seq))
	}
	return out
}

// seed adds one turn per text to session s, user turns a minute apart from t0.
func seed(m *memSource, s string, texts ...string) {
	for _, text := range texts {
		seq := uint64(0)
		for d := range m.docs {
			if d.Session == s && d.Seq >= seq {
				seq = d.Seq + 1
			}
		}
		m.add(s, seq, "user", t0.Add(time.Duration(len(m.order))*time.Minute), text)
	}
}

func TestRun_Matching(t *testing.T) {
	m := newMemSource()
	seed(m, "a",
		"the quick brown fox",                            // a/0
		"brown the quick fox",                            // a/1
		"deploy to staging with a dry run",               // a/2
		"deploy to production",                           // a/3
		"we deployed the deployment",                     // a/4
		"redeploy later, run dry",                        // a/5
		"ctx, cancel := context.WithCancel(parent)",      // a/6
		"edit ledger/header.go:42 and parseLedgerHeader", // a/7
		"alpha gamma",                                    // a/8
		"beta gamma",                                     // a/9
		"alpha beta",                                     // a/10
		"東京都に住んでいます",                                     // a/11
		"",                                               // a/12: no terms, not indexed
	)
	tests := []struct {
		query string
		want  []string // hits, in any order
	}{
		{"quick", []string{"a/0", "a/1"}},
		{"QUICK fox", []string{"a/0", "a/1"}},
		{`"quick brown"`, []string{"a/0"}},
		{`"brown fox"`, []string{"a/0"}},
		{`"fox brown"`, nil},
		{`"the quick brown fox"`, []string{"a/0"}},
		{"deploy", []string{"a/2", "a/3"}},
		{"depl*", []string{"a/2", "a/3", "a/4"}},
		{"deploy*", []string{"a/2", "a/3", "a/4"}},
		{"deploy -staging", []string{"a/3"}},
		{`deploy -"dry run"`, []string{"a/3"}},
		{`dry -"dry run"`, []string{"a/5"}}, // "run dry" is not the phrase
		{`run -redeploy`, []string{"a/2"}},
		{"alpha OR beta", []string{"a/8", "a/9", "a/10"}},
		{"alpha OR beta gamma", []string{"a/8", "a/9"}},
		{"gamma alpha OR beta", []string{"a/8", "a/9"}},
		{"alpha OR beta -gamma", []string{"a/10"}},
		{"alpha OR nothinglikethis", []string{"a/8", "a/10"}},
		{"alpha nothinglikethis", nil},
		{"WithCancel", []string{"a/6"}},
		{"withcancel cancel context", []string{"a/6"}},
		{`"with cancel"`, []string{"a/6"}},
		{"context.With*", []string{"a/6"}},
		{"header.go", []string{"a/7"}},
		{"parse_ledger_header", []string{"a/7"}},
		{"parseLedger*", []string{"a/7"}},
		{"東京都", []string{"a/11"}},
		{"f(x)", nil},
		// A phrase every hit must hold is checked when a document would make the page, also
		// beside other words (whichever side of the intersection is smaller) and other phrases.
		{`fox "quick brown"`, []string{"a/0"}},
		{`"quick brown" fox`, []string{"a/0"}},
		{`the "quick brown"`, []string{"a/0"}},
		{`"quick brown" "brown fox"`, []string{"a/0"}},
		{`"quick brown" "fox brown"`, nil},
		{`"dry run" deploy`, []string{"a/2"}},
		{`"run dry" dry`, []string{"a/5"}},
		{`"dry run" OR "run dry"`, []string{"a/2", "a/5"}},
	}
	for _, tt := range tests {
		got := hitNames(search(t, m, tt.query, Options{}))
		slices.Sort(got)
		want := slices.Clone(tt.want)
		slices.Sort(want)
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s: hits %v, want %v", tt.query, got, want)
		}
	}
}

// bm25 is the score of a term of document frequency df, tf times in a document of length dl,
// over n documents of average length avg: the formula, written out again.
func bm25(n, df, tf, dl int, avg float64) float64 {
	idf := math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
	return idf * float64(tf) * (k1 + 1) / (float64(tf) + k1*(1-b+b*float64(dl)/avg))
}

func TestRun_Ranking(t *testing.T) {
	t.Run("rarer term ranks higher", func(t *testing.T) {
		m := newMemSource()
		seed(m, "a", "common rare", "common other", "common more", "common again", "filler text")
		seed(m, "b", "common other")
		got := hitNames(search(t, m, "common OR rare", Options{}))
		if got[0] != "a/0" {
			t.Errorf("hits %v: the turn with the rare term is not first", got)
		}
		m = newMemSource()
		seed(m, "a", "alpha x", "alpha y", "alpha z", "beta w")
		if got := hitNames(search(t, m, "alpha OR beta", Options{})); got[0] != "a/3" {
			t.Errorf("hits %v: the rarer term's turn is not first", got)
		}
	})
	t.Run("higher tf ranks higher", func(t *testing.T) {
		m := newMemSource()
		seed(m, "a", "deploy one two three", "deploy deploy deploy two", "deploy deploy two three")
		if got := hitNames(search(t, m, "deploy", Options{})); !slices.Equal(got, []string{"a/1", "a/2", "a/0"}) {
			t.Errorf("hits %v, want a/1 a/2 a/0 by term frequency", got)
		}
	})
	t.Run("shorter turn ranks higher", func(t *testing.T) {
		m := newMemSource()
		seed(m, "a", "deploy one two three four five", "deploy", "deploy one two")
		if got := hitNames(search(t, m, "deploy", Options{})); !slices.Equal(got, []string{"a/1", "a/2", "a/0"}) {
			t.Errorf("hits %v, want a/1 a/2 a/0 by length", got)
		}
	})
	t.Run("scores are BM25", func(t *testing.T) {
		m := newMemSource()
		seed(m, "a", "deploy deploy key", "deploy now", "other words here", "key")
		avg := float64(m.stats.Terms) / float64(m.stats.Docs) // 3+2+3+1 over 4
		page := search(t, m, "deploy", Options{})
		want := map[string]float64{"a/0": bm25(4, 2, 2, 3, avg), "a/1": bm25(4, 2, 1, 2, avg)}
		for _, h := range page.Hits {
			name := fmt.Sprintf("%s/%d", h.Doc.Session, h.Doc.Seq)
			if math.Abs(h.Score-want[name]) > 1e-12 {
				t.Errorf("%s: score %v, want %v", name, h.Score, want[name])
			}
		}
		// Clauses add up; an OR's alternatives that both match add up too.
		page = search(t, m, "deploy key", Options{})
		if len(page.Hits) != 1 || math.Abs(page.Hits[0].Score-(bm25(4, 2, 2, 3, avg)+bm25(4, 2, 1, 3, avg))) > 1e-12 {
			t.Errorf("deploy key: %+v", page.Hits)
		}
		page = search(t, m, "deploy OR key", Options{})
		if len(page.Hits) != 3 || hitNames(page)[0] != "a/0" || math.Abs(page.Hits[0].Score-(bm25(4, 2, 2, 3, avg)+bm25(4, 2, 1, 3, avg))) > 1e-12 {
			t.Errorf("deploy OR key: %v %+v", hitNames(page), page.Hits)
		}
	})
	t.Run("each prefix term has its own df", func(t *testing.T) {
		m := newMemSource()
		seed(m, "a", "deploy", "deploy", "deploy", "deployment")
		page := search(t, m, "depl*", Options{})
		if got := hitNames(page); got[0] != "a/3" {
			t.Errorf("hits %v: the rarer completion does not rank first", got)
		}
	})
	t.Run("ties by session then seq", func(t *testing.T) {
		m := newMemSource()
		seed(m, "b", "same words")
		seed(m, "a", "same words", "same words")
		if got := hitNames(search(t, m, "same", Options{})); !slices.Equal(got, []string{"a/0", "a/1", "b/0"}) {
			t.Errorf("hits %v, want equal scores ordered a/0 a/1 b/0", got)
		}
	})
}

func TestRun_Filters(t *testing.T) {
	m := newMemSource()
	m.add("a", 0, "user", t0, "deploy one")
	m.add("a", 1, "assistant", t0.Add(time.Hour), "deploy two")
	m.add("b", 0, "tool", t0.Add(2*time.Hour), "deploy three")
	m.add("c", 0, "user", time.Time{}, "deploy timeless")
	m.add("c", 1, "system", t0.Add(3*time.Hour), "deploy four")
	tests := []struct {
		name string
		o    Options
		want []string
	}{
		{"none", Options{}, []string{"a/0", "a/1", "b/0", "c/0", "c/1"}},
		{"role", Options{Role: "user"}, []string{"a/0", "c/0"}},
		{"role tool", Options{Role: "tool"}, []string{"b/0"}},
		{"since", Options{Since: t0.Add(time.Hour)}, []string{"a/1", "b/0", "c/1"}},
		{"until is exclusive", Options{Until: t0.Add(time.Hour)}, []string{"a/0"}},
		{"range", Options{Since: t0.Add(time.Hour), Until: t0.Add(3 * time.Hour)}, []string{"a/1", "b/0"}},
		{"role and range", Options{Role: "assistant", Since: t0}, []string{"a/1"}},
		{"allow", Options{Allow: func(s string) (bool, error) { return s != "a", nil }}, []string{"b/0", "c/0", "c/1"}},
	}
	for _, tt := range tests {
		got := hitNames(search(t, m, "deploy", tt.o))
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: hits %v, want %v", tt.name, got, tt.want)
		}
	}

	// A filter leaves the ranking as the whole scope gives it: idf counts every turn.
	all := search(t, m, "deploy", Options{})
	some := search(t, m, "deploy", Options{Role: "tool"})
	for _, h := range all.Hits {
		if h.Doc == some.Hits[0].Doc && h.Score != some.Hits[0].Score {
			t.Errorf("b/0 scores %v filtered, %v not", some.Hits[0].Score, h.Score)
		}
	}

	// Allow is asked once per session, and its error ends the search.
	calls := map[string]int{}
	search(t, m, "deploy OR one OR two", Options{Allow: func(s string) (bool, error) { calls[s]++; return true, nil }})
	for s, n := range calls {
		if n != 1 {
			t.Errorf("Allow(%q) called %d times, want once", s, n)
		}
	}
	boom := errors.New("boom")
	q, _ := Parse("deploy")
	if _, err := Run(t.Context(), m, q, Options{Allow: func(string) (bool, error) { return false, boom }}); !errors.Is(err, boom) {
		t.Errorf("Allow's error: %v, want boom", err)
	}
	// A done context ends the search with its error.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Run(ctx, m, q, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

func TestRun_Hits(t *testing.T) {
	m := newMemSource()
	m.add("a", 7, "assistant", t0, "rotate the key, then deploy")
	page := search(t, m, "deploy", Options{Clean: strings.ToUpper})
	if len(page.Hits) != 1 {
		t.Fatalf("hits: %v", hitNames(page))
	}
	h := page.Hits[0]
	if h.Doc != (Doc{"a", 7}) || h.Role != "assistant" || !h.At.Equal(t0) || h.Score <= 0 {
		t.Errorf("hit %+v", h)
	}
	if h.Snippet != "ROTATE THE KEY, THEN **DEPLOY**" {
		t.Errorf("snippet %q: not cleaned, or the match not marked", h.Snippet)
	}
	for _, tt := range []struct{ limit, want int }{{0, DefaultLimit}, {-1, DefaultLimit}, {5, 5}, {MaxLimit + 50, MaxLimit}} {
		m := newMemSource()
		for i := range MaxLimit + 10 {
			m.add("a", uint64(i), "user", t0, "word")
		}
		if got := len(search(t, m, "word", Options{Limit: tt.limit}).Hits); got != tt.want {
			t.Errorf("Limit %d: %d hits, want %d", tt.limit, got, tt.want)
		}
	}
	// Texts are read for the page's hits only.
	m = newMemSource()
	for i := range 100 {
		m.add("a", uint64(i), "user", t0, "word")
	}
	search(t, m, "word", Options{Limit: 10})
	if m.texts != 10 {
		t.Errorf("read %d texts for a page of 10", m.texts)
	}
}

// pages runs query page by page until the last, calling between after each page but the last,
// and returns every hit in order.
func pages(t *testing.T, src Source, query string, o Options, between func(page int)) []string {
	t.Helper()
	var out []string
	for page := 0; ; page++ {
		p := search(t, src, query, o)
		if len(p.Hits) > max(o.Limit, 1) {
			t.Fatalf("page %d: %d hits, limit %d", page, len(p.Hits), o.Limit)
		}
		out = append(out, hitNames(p)...)
		if p.Cursor == "" {
			return out
		}
		if page > 1000 {
			t.Fatal("pages do not end")
		}
		if between != nil {
			between(page)
		}
		o.Cursor = p.Cursor
	}
}

func TestRun_Pages(t *testing.T) {
	m := newMemSource()
	// Many ties, several prefix completions per turn, and scores of many sizes.
	words := []string{"deploy", "deployed", "deployment", "deploys", "other"}
	for i := range 60 {
		var b strings.Builder
		for j := range 1 + i%7 {
			b.WriteString(words[(i+j)%len(words)] + " ")
		}
		m.add(fmt.Sprintf("s%d", i%4), uint64(i), "user", t0, b.String())
	}
	for _, query := range []string{"deploy", "depl*", "deploy OR deployment other", "other -deploys"} {
		full := hitNames(search(t, m, query, Options{Limit: MaxLimit}))
		if len(full) == 0 {
			t.Fatalf("%s: no hits", query)
		}
		for _, limit := range []int{1, 3, 7} {
			for range 20 { // postings come in a random order each time
				got := pages(t, m, query, Options{Limit: limit}, nil)
				if !slices.Equal(got, full) {
					t.Fatalf("%s, pages of %d:\n%v\nwant %v", query, limit, got, full)
				}
			}
		}
	}
}

// TestRun_PagesWhileWriting: turns indexed after the first page, better matches included, do not
// shift, repeat or drop what later pages hold; a new search sees them.
func TestRun_PagesWhileWriting(t *testing.T) {
	m := newMemSource()
	for i := range 30 {
		m.add("a", uint64(i), "user", t0, strings.Repeat("deploy ", 1+i%5)+"x y z")
	}
	full := hitNames(search(t, m, "depl*", Options{Limit: MaxLimit}))
	next := uint64(100)
	got := pages(t, m, "depl*", Options{Limit: 4}, func(page int) {
		for range 3 {
			m.add("b", next, "user", t0, "deploy deployment deploy")
			m.add("a", next, "user", t0, "deploy x")
			next++
		}
	})
	if !slices.Equal(got, full) {
		t.Errorf("pages while writing:\n%v\nwant %v", got, full)
	}
	if after := search(t, m, "depl*", Options{Limit: MaxLimit}); len(after.Hits) <= len(full) {
		t.Errorf("a new search after the writes: %d hits, want more than %d", len(after.Hits), len(full))
	}
}

// TestRun_PagesWhileDeleting: turns deleted between pages (a session deleted) are left out of
// later pages, and the others keep their order: no hit is repeated or skipped, although the
// deletions change every remaining turn's score.
func TestRun_PagesWhileDeleting(t *testing.T) {
	for _, query := range []string{"deploy", "depl*", "deploy rollout"} {
		m := newMemSource()
		for i := range 40 {
			m.add(fmt.Sprint("s", i%5), uint64(i), "user", t0, strings.Repeat("deploy ", 1+i%4)+"deployment rollout "+strings.Repeat("x ", i%3))
		}
		full := hitNames(search(t, m, query, Options{Limit: MaxLimit}))
		gone := map[string]bool{}
		next := 0
		got := pages(t, m, query, Options{Limit: 3}, func(int) {
			// Delete the turns of session s4 one by one, shown already or not.
			for next < 40 && next%5 != 4 {
				next++
			}
			if next < 40 {
				m.remove(Doc{"s4", uint64(next)})
				gone[fmt.Sprintf("s4/%d", next)] = true
				next++
			}
		})
		seen := map[string]bool{}
		var want []string
		for _, h := range full {
			if !gone[h] || slices.Contains(got, h) {
				want = append(want, h)
			}
		}
		for _, h := range got {
			if seen[h] {
				t.Errorf("%s: %s shown twice", query, h)
			}
			seen[h] = true
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: pages while deleting:\n%v\nwant %v", query, got, want)
		}
	}
}

func TestRun_Cursor(t *testing.T) {
	m := newMemSource()
	for i := range 10 {
		m.add("a", uint64(i), "user", t0, "deploy key")
	}
	first := search(t, m, "deploy", Options{Limit: 2, Bind: "family a"})
	if first.Cursor == "" {
		t.Fatal("no cursor on the first of several pages")
	}
	wrong := []struct {
		name, query, cursor string
		o                   Options
	}{
		{"another query", "key", first.Cursor, Options{}},
		{"the query as a prefix", "deploy*", first.Cursor, Options{}},
		{"another role", "deploy", first.Cursor, Options{Role: "user", Bind: "family a"}},
		{"another binding", "deploy", first.Cursor, Options{Bind: "family b"}},
		{"not base64", "deploy", "!!not a cursor!!", Options{Bind: "family a"}},
		{"not JSON", "deploy", base64.RawURLEncoding.EncodeToString([]byte("{oops")), Options{Bind: "family a"}},
		{"another version", "deploy", base64.RawURLEncoding.EncodeToString([]byte(`{"v":99}`)), Options{Bind: "family a"}},
		{"truncated", "deploy", first.Cursor[:len(first.Cursor)/2], Options{Bind: "family a"}},
	}
	for _, tt := range wrong {
		q, err := Parse(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		tt.o.Cursor = tt.cursor
		_, err = Run(t.Context(), m, q, tt.o)
		var ce *CursorError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a CursorError", tt.name, err)
		}
	}
	// The same query with the same filters takes it, whatever the page size.
	second := search(t, m, "deploy", Options{Limit: 5, Cursor: first.Cursor, Bind: "family a"})
	if got := hitNames(second); len(got) != 5 || slices.Contains(got, hitNames(first)[0]) {
		t.Errorf("second page %v after %v", got, hitNames(first))
	}
	// A later page keeps the first page's time range whatever it is given: a range relative to
	// now ("24h") resolves to another time on every call.
	moved := search(t, m, "deploy", Options{Limit: 5, Cursor: first.Cursor, Bind: "family a", Since: t0.Add(1000 * time.Hour)})
	if !slices.Equal(hitNames(moved), hitNames(second)) {
		t.Errorf("with another since, the second page is %v, want %v", hitNames(moved), hitNames(second))
	}
	// The last page has no cursor; an empty result neither.
	if p := search(t, m, "deploy", Options{Limit: 10}); p.Cursor != "" {
		t.Errorf("a single page has a cursor")
	}
	if p := search(t, m, "absent", Options{}); p.Cursor != "" || len(p.Hits) != 0 {
		t.Errorf("no hits: %+v", p)
	}
}

// TestRun_PhrasePages: pages of a phrase query, whose candidates are checked for the phrase only
// as they would make a page, hold each hit once and together all of them, also when candidates
// holding the words apart rank between the hits.
func TestRun_PhrasePages(t *testing.T) {
	m := newMemSource()
	var want []string
	for i := range 12 {
		if i%3 == 0 {
			seed(m, "p", strings.Repeat("filler ", i)+"failed to open the file") // the phrase
			want = append(want, fmt.Sprintf("p/%d", i))
		} else {
			seed(m, "p", "open it: failed, to "+strings.Repeat("filler ", i)) // the words apart
		}
	}
	for _, limit := range []int{1, 2, 3} {
		var got []string
		cursor := ""
		for range 20 {
			page := search(t, m, `"failed to open"`, Options{Limit: limit, Cursor: cursor})
			got = append(got, hitNames(page)...)
			if cursor = page.Cursor; cursor == "" {
				break
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: pages hold %v, want %v", limit, got, want)
		}
	}
}

// A phrase's document scores as its words ANDed do (the same BM25 terms), whatever clauses come
// before it: the later clauses only read the earlier ones' documents, and must lose no score.
func TestRun_PhraseScoresAsItsWords(t *testing.T) {
	m := newMemSource()
	seed(m, "a",
		"failed to open the ledger file",
		"could not open it: failed, try to",
		"ledger failed to open again and again to open",
		"nothing relevant here",
	)
	score := func(query string) map[string]float64 {
		out := map[string]float64{}
		for _, h := range search(t, m, query, Options{}).Hits {
			out[fmt.Sprintf("%s/%d", h.Doc.Session, h.Doc.Seq)] = h.Score
		}
		return out
	}
	for _, pair := range [][2]string{
		{`"failed to open"`, `failed to open`},
		{`ledger "failed to open"`, `ledger failed to open`},
		{`"failed to open" ledger`, `failed to open ledger`},
	} {
		phrase, words := score(pair[0]), score(pair[1])
		if len(phrase) == 0 {
			t.Fatalf("%s: no hits", pair[0])
		}
		for doc, s := range phrase {
			if w, ok := words[doc]; !ok || math.Abs(w-s) > 1e-9 {
				t.Errorf("%s scores %s %v; %s scores it %v (found %v)", pair[0], doc, s, pair[1], w, ok)
			}
		}
	}
}

// Options.Sessions reads those sessions' turns only, with document frequencies counted over
// them, the same through a SessionSource as through a plain Source.
func TestRun_Sessions(t *testing.T) {
	m := newMemSource()
	seed(m, "parent", "the ledger header is cached", "ledger compaction", "unrelated words")
	seed(m, "child", "header parsing in the ledger")
	for i := range 20 {
		seed(m, fmt.Sprintf("other%d", i), "ledger ledger everywhere")
	}
	family := []string{"parent", "child"}
	plain := search(t, m, "ledger OR header", Options{Sessions: family})
	ss := &memSessionSource{memSource: m}
	q, err := Parse("ledger OR header")
	if err != nil {
		t.Fatal(err)
	}
	viaSessions, err := Run(t.Context(), ss, q, Options{Sessions: family})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"child/0", "parent/0", "parent/1"}
	for name, p := range map[string]Page{"Source": plain, "SessionSource": viaSessions} {
		got := hitNames(p)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("through a %s: hits %v, want %v", name, got, want)
		}
	}
	for i := range plain.Hits {
		if plain.Hits[i].Doc != viaSessions.Hits[i].Doc || plain.Hits[i].Score != viaSessions.Hits[i].Score {
			t.Errorf("hit %d: %+v through a Source, %+v through a SessionSource", i, plain.Hits[i], viaSessions.Hits[i])
		}
	}
	if ss.read != 5 {
		t.Errorf("the SessionSource read %d postings, want the family's 5", ss.read)
	}
	// ledger is in 3 of the family's 4 turns but in 23 of all 24: counted over the family, it
	// weighs less than header (2 of 4), whatever the other sessions hold.
	all := search(t, m, "ledger OR header", Options{})
	if len(all.Hits) != 20 {
		t.Fatalf("unfiltered: %d hits, want a full page", len(all.Hits))
	}
	if top := plain.Hits[0].Doc; top.Session == "parent" && top.Seq == 1 {
		t.Errorf("the family's best hit is the turn with ledger alone: %v", hitNames(plain))
	}
}

// TestRun_MaxDocFreq: a term in more of the family's turns than MaxDocFreq is left out of the
// query, its postings read no further than that; the other terms rank as before; a prefix is
// not cut; a query of only such terms finds nothing.
func TestRun_MaxDocFreq(t *testing.T) {
	m := newMemSource()
	var texts []string
	for i := range 50 {
		texts = append(texts, fmt.Sprintf("export job %d finished", i))
	}
	texts[20] = "export drops rows for large tenants"
	texts[30] = "tenants list refreshed"
	seed(m, "parent", texts...)
	ss := &memSessionSource{memSource: m}
	run := func(query string, maxDF int) Page {
		t.Helper()
		q, err := Parse(query)
		if err != nil {
			t.Fatal(err)
		}
		ss.read = 0
		p, err := Run(t.Context(), ss, q, Options{Sessions: []string{"parent"}, MaxDocFreq: maxDF})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := run("export OR tenants", 0)
	if got := len(full.Hits); got != 20 {
		t.Fatalf("without a bound: %d hits, want a full page of 20", got)
	}
	bounded := run("export OR tenants", 10)
	if got := hitNames(bounded); !slices.Equal(got, []string{"parent/20", "parent/30"}) && !slices.Equal(got, []string{"parent/30", "parent/20"}) {
		t.Errorf("with export (50 turns) over the bound of 10: hits %v, want only the tenants turns", got)
	}
	if ss.read > 11+2 {
		t.Errorf("read %d postings, want export's cut after 11 and tenants' 2", ss.read)
	}
	if p := run("export", 10); len(p.Hits) != 0 {
		t.Errorf("a query of one too-common term: %v, want no hits", hitNames(p))
	}
	if p := run("expo*", 10); len(p.Hits) == 0 {
		t.Error("a prefix was cut by MaxDocFreq; it reads the whole term list")
	}
}
