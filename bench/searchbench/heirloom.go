package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/search"
)

// scope is the memory scope every session of the corpus is stored under.
const scope = "bench"

// openHeirloom opens a heirloom store in dir as `heirloom serve` does (serve.go): with
// search.Analyzer as its Indexer, or with none when index is false.
func openHeirloom(dir string, index bool) (*kv.Store, error) {
	s := kv.NewStore(dir)
	if index {
		s.Index = search.Analyzer{}
	}
	if err := s.Open(); err != nil {
		return nil, err
	}
	if st := s.IndexStatus(); st.Building {
		s.Close()
		return nil, fmt.Errorf("%s: the search index is not whole (a reindex is due): load it again", dir)
	}
	return s, nil
}

// loadHeirloom stores the corpus through the calls heirloom's ingest makes: PutSession for each
// session, then AppendTurns with each exchange's turns (engine/ingest.go stores a hook's new
// turns with one AppendTranscript, a synced batch that carries their postings). It returns the
// time spent in those calls.
func loadHeirloom(ctx context.Context, s *kv.Store, corpus string) (time.Duration, loadCounts, error) {
	var spent time.Duration
	var n loadCounts
	_, err := readCorpus(corpus, func(rec corpusRecord) error {
		if rec.Session != nil {
			cs := rec.Session
			sess := kv.Session{
				Scope: scope, ID: cs.ID, Harness: cs.Harness, NativeID: cs.ID, ParentID: cs.Parent, Depth: cs.Depth,
				Project: cs.Project, ProjectNorm: cs.Project, Title: cs.Title, Objective: cs.Objective,
				Status: kv.StatusEnded, CreatedAt: time.Unix(cs.Start, 0).UTC(),
			}
			start := time.Now()
			err := s.PutSession(ctx, sess)
			spent += time.Since(start)
			n.Sessions++
			return err
		}
		turns := make([]kv.Turn, len(rec.Turns))
		for i, t := range rec.Turns {
			turns[i] = kv.Turn{SourceID: t.SourceID, Role: t.Role, Tool: t.Tool, Text: t.Text, Files: t.Files, At: time.Unix(t.At, 0).UTC()}
			n.Bytes += int64(len(t.indexedText()))
		}
		n.Batches++
		start := time.Now()
		added, err := s.AppendTurns(ctx, scope, rec.ID, turns, kv.TranscriptPos{Path: "/bench/" + rec.ID + ".jsonl", Offset: n.Bytes})
		spent += time.Since(start)
		n.Turns += int64(added)
		return err
	})
	return spent, n, err
}

// loadCounts are what a load stored.
type loadCounts struct {
	Sessions, Batches, Turns, Bytes int64
}

// compactHeirloom flushes the memtable and compacts the whole key space of the store's Pebble
// database (opened directly, with the store's format version), so that its size on disk and its
// reads are those of a settled store. It returns the bytes of turns and of postings Pebble
// estimates after.
func compactHeirloom(dir string) (turns, postings uint64, err error) {
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{
		FormatMajorVersion: pebble.FormatMajorVersion(kv.PebbleFormatMajorVersion),
		Logger:             quietLogger{},
	})
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	if err := db.Flush(); err != nil {
		return 0, 0, err
	}
	if err := db.Compact(context.Background(), []byte{0}, []byte{0xff}, true); err != nil {
		return 0, 0, err
	}
	turns, _ = db.EstimateDiskUsage([]byte{'t'}, []byte{'t' + 1})
	postings, _ = db.EstimateDiskUsage([]byte{'x'}, []byte{'y' + 1})
	return turns, postings, nil
}

// heirloomSearch runs one query as the search API does: engine.Search over the store (parse,
// one snapshot, BM25 over the postings, the sessions of the hits read, snippets cut and
// redacted), first page of 20.
func heirloomSearch(ctx context.Context, e *engine.Engine, q string) ([]hitSummary, error) {
	res, err := e.Search(ctx, engine.SearchQuery{Query: q, Limit: 20})
	if err != nil {
		return nil, err
	}
	out := make([]hitSummary, 0, len(res.Hits))
	for _, h := range res.Hits {
		out = append(out, hitSummary{Session: h.Session.ID, Seq: int64(h.Turn), Score: h.Score, Snippet: h.Snippet})
	}
	return out, nil
}

// heirloomCount counts the turns a query matches in heirloom's index (untimed, for the report):
// the same clauses search.Run evaluates, from the postings (a phrase by its words' postings,
// then by its tokens in the turn's indexed text, as search's phrase check does).
func heirloomCount(ctx context.Context, s *kv.Store, q string) (int, error) {
	x, err := s.IndexReader(ctx, scope)
	if err != nil {
		return 0, err
	}
	defer x.Close()
	type doc struct {
		s   string
		seq uint64
	}
	docsOf := func(word string) (map[doc]bool, error) {
		prefix := strings.HasSuffix(word, "*")
		word = strings.TrimSuffix(word, "*")
		var terms []string
		if strings.HasPrefix(word, `"`) {
			search.Analyzer{}.Tokens(strings.Trim(word, `"`), func(t string) { terms = append(terms, strings.Clone(t)) })
		} else {
			t, phrase := search.Analyzer{}.Lookup(word)
			if t != "" {
				terms = []string{t}
			} else {
				terms = phrase
			}
		}
		var out map[doc]bool
		for _, t := range terms {
			got := map[doc]bool{}
			err := x.Postings(ctx, t, prefix, func(p kv.Posting) error {
				got[doc{p.Session, p.Seq}] = true
				return nil
			})
			if err != nil {
				return nil, err
			}
			if out == nil {
				out = got
				continue
			}
			for d := range out {
				if !got[d] {
					delete(out, d)
				}
			}
		}
		if len(terms) > 1 {
			for d := range out {
				t, err := x.Turn(ctx, d.s, d.seq)
				if err != nil {
					return nil, err
				}
				var seq []string
				search.Analyzer{}.Tokens(kv.IndexedText(&t), func(tok string) { seq = append(seq, strings.Clone(tok)) })
				found := false
				for i := 0; i+len(terms) <= len(seq) && !found; i++ {
					found = slices.Equal(seq[i:i+len(terms)], terms)
				}
				if !found {
					delete(out, d)
				}
			}
		}
		return out, nil
	}
	var matched map[doc]bool
	var not []map[doc]bool
	for _, clause := range splitClauses(q) {
		var docs map[doc]bool
		for _, alt := range clause.alts {
			got, err := docsOf(alt)
			if err != nil {
				return 0, err
			}
			if docs == nil {
				docs = got
			} else {
				for d := range got {
					docs[d] = true
				}
			}
		}
		switch {
		case clause.not:
			not = append(not, docs)
		case matched == nil:
			matched = docs
		default:
			for d := range matched {
				if !docs[d] {
					delete(matched, d)
				}
			}
		}
	}
	n := 0
	for d := range matched {
		if !slices.ContainsFunc(not, func(m map[doc]bool) bool { return m[d] }) {
			n++
		}
	}
	return n, nil
}

// clause is one ANDed part of a query of the fixed set: alternatives, or an exclusion.
type clause struct {
	not  bool
	alts []string
}

// splitClauses reads the simple syntax of the fixed query set: words and quoted phrases, OR
// between alternatives, -word.
func splitClauses(q string) []clause {
	var words []string
	for q = strings.TrimSpace(q); q != ""; q = strings.TrimSpace(q) {
		if strings.HasPrefix(q, `"`) {
			end := strings.Index(q[1:], `"`) + 2
			words = append(words, q[:end])
			q = q[end:]
			continue
		}
		w, rest, _ := strings.Cut(q, " ")
		words = append(words, w)
		q = rest
	}
	var out []clause
	for i := 0; i < len(words); i++ {
		if words[i] == "OR" && len(out) > 0 && i+1 < len(words) {
			out[len(out)-1].alts = append(out[len(out)-1].alts, words[i+1])
			i++
			continue
		}
		c := clause{}
		w := words[i]
		if strings.HasPrefix(w, "-") {
			c.not, w = true, w[1:]
		}
		c.alts = []string{w}
		out = append(out, c)
	}
	return out
}

// quietLogger drops Pebble's informational messages (the WALs it replays on open), as kv's does.
type quietLogger struct{}

func (quietLogger) Infof(format string, args ...any) {}

func (quietLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}

func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}
