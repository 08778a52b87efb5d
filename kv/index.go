package kv

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Indexer is what the search index asks of the text analysis it is built with (package
// search's Analyzer): the terms a turn is found by. The store keeps one posting per term and
// turn, written in the same batch as the turn.
type Indexer interface {
	// Terms calls add once for every occurrence of a term in text, derived forms included.
	Terms(text string, add func(term string))
	// Version names the rules Terms follows. A store indexed under another version is reindexed.
	Version() int
}

// MaxTermBytes bounds an indexed term; longer ones, and terms holding a NUL, are not indexed.
const MaxTermBytes = 128

// Index states, as m"index" records them.
const (
	indexReady    = "ready"    // every stored turn is indexed under Version
	indexBuilding = "building" // a reindex was started and has not finished
)

// indexState is the value of m"index".
type indexState struct {
	Version int    `json:"version"`
	State   string `json:"state"`
}

// IndexStatus says how far the search index is: Building while a reindex runs (or is due),
// with Done of Total turns indexed so far.
type IndexStatus struct {
	Enabled  bool // the store was opened with an Indexer
	Version  int  // the Indexer's version
	Building bool // a (re)index is due or running: searches see only part of the turns
	Running  bool // a Reindex is running now
	Done     uint64
	Total    uint64
}

// indexFigures are one scope's collection figures, the value of its y key.
type indexFigures struct {
	Docs, Terms, Stamp uint64
}

func encodeFigures(f indexFigures) []byte {
	b := binary.AppendUvarint(nil, f.Docs)
	b = binary.AppendUvarint(b, f.Terms)
	return binary.AppendUvarint(b, f.Stamp)
}

func decodeFigures(v []byte) (indexFigures, error) {
	var f indexFigures
	for _, p := range []*uint64{&f.Docs, &f.Terms, &f.Stamp} {
		n, w := binary.Uvarint(v)
		if w <= 0 {
			return indexFigures{}, fmt.Errorf("index figures: %w", errBadValue)
		}
		*p, v = n, v[w:]
	}
	return f, nil
}

// errBadValue is wrapped when a stored value does not decode.
var errBadValue = errors.New("malformed value")

// Roles are stored in a posting as one byte.
var roleCodes = map[string]byte{"user": 'u', "assistant": 'a', "tool": 't', "system": 's'}

// roleNames is roleCodes the other way, indexed by the code: decoding is a lookup.
var roleNames = func() (names [256]string) {
	for r, code := range roleCodes {
		names[code] = r
	}
	return names
}()

func roleOf(c byte) string { return roleNames[c] }

// posting is a posting's value: the term's count in the turn, the turn's length in terms, its
// role and time, and the stamp it was indexed under.
type posting struct {
	TF, Len uint64
	Role    string
	At      time.Time
	Stamp   uint64
}

func encodePosting(p posting) []byte {
	b := binary.AppendUvarint(make([]byte, 0, 24), p.TF)
	b = binary.AppendUvarint(b, p.Len)
	b = append(b, roleCodes[p.Role])
	var at int64
	if !p.At.IsZero() {
		at = p.At.Unix()
	}
	b = binary.AppendVarint(b, at)
	return binary.AppendUvarint(b, p.Stamp)
}

func decodePosting(v []byte) (posting, error) {
	var p posting
	var w int
	if p.TF, w = binary.Uvarint(v); w <= 0 {
		return posting{}, fmt.Errorf("posting: %w", errBadValue)
	}
	v = v[w:]
	if p.Len, w = binary.Uvarint(v); w <= 0 || len(v) <= w {
		return posting{}, fmt.Errorf("posting: %w", errBadValue)
	}
	p.Role, v = roleOf(v[w]), v[w+1:]
	at, w := binary.Varint(v)
	if w <= 0 {
		return posting{}, fmt.Errorf("posting: %w", errBadValue)
	}
	if at != 0 {
		p.At = time.Unix(at, 0).UTC()
	}
	if p.Stamp, w = binary.Uvarint(v[w:]); w <= 0 {
		return posting{}, fmt.Errorf("posting: %w", errBadValue)
	}
	return p, nil
}

// IndexedText is what a turn is found by: its tool's name (on a line of its own, when it has
// one) and its text. Searches check phrases and cut snippets from this same text.
func IndexedText(t *Turn) string {
	if t.Tool == "" {
		return t.Text
	}
	return t.Tool + "\n" + t.Text
}

// termCounts runs the indexer over a turn: each term's count, and the turn's length.
func termCounts(ix Indexer, t *Turn, counts map[string]uint64) (length uint64) {
	clear(counts)
	if t.Unindexed {
		return 0
	}
	ix.Terms(IndexedText(t), func(term string) {
		if term == "" || len(term) > MaxTermBytes || strings.IndexByte(term, sep) >= 0 {
			return
		}
		counts[term]++
		length++
	})
	return length
}

// indexWriter adds and removes the postings of one batch's turns in one scope, and keeps the
// scope's figures, written once at the end. The caller holds Store.mu.
type indexWriter struct {
	ix      Indexer
	r       pebble.Reader
	b       *pebble.Batch
	scope   string
	fig     indexFigures
	loaded  bool
	changed bool
	counts  map[string]uint64
	// now dates the postings of turns the harness gave no time: when they were indexed, so that
	// a search's time filters do not leave them out.
	now time.Time
	// removed names, for each turn whose postings remove deleted, one term it was indexed
	// under: add reads that posting's stamp (the batch is not applied yet) to keep it.
	removed map[turnRef]string
}

// turnRef names one turn of the writer's scope.
type turnRef struct {
	id  string
	seq uint64
}

// indexWriter returns a writer for scope's postings in b, or nil when turns are not indexed now
// (no Indexer; or a reindex has not reached the key yet, and will index the turn itself).
// now is the batch's time (Store.now read once per write).
func (s *Store) indexWriter(r pebble.Reader, b *pebble.Batch, scope string, now time.Time) *indexWriter {
	if s.Index == nil {
		return nil
	}
	return &indexWriter{ix: s.Index, r: r, b: b, scope: scope, counts: map[string]uint64{}, now: now}
}

// covers reports whether the turn (scope, id, seq) is in the part of the store the index
// holds: everything, unless a reindex is under way and has not reached it.
func (s *Store) indexCovers(scope, id string, seq uint64) bool {
	if !s.ixBuilding {
		return true
	}
	return s.ixPos != nil && bytes.Compare(turnKey(scope, id, seq), s.ixPos) <= 0
}

func (w *indexWriter) load() error {
	if w.loaded {
		return nil
	}
	v, closer, err := w.r.Get(indexStatsKey(w.scope))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return err
	default:
		w.fig, err = decodeFigures(v)
		closer.Close()
		if err != nil {
			return err
		}
	}
	w.loaded = true
	return nil
}

// add writes the postings of turn t of session id. A turn that replaces one this writer
// removed keeps the stamp it was first indexed under: a search's later pages, which leave out
// turns indexed after their first page, then see the turn's new text rather than lose the turn,
// and the other turns' scores do not move.
func (w *indexWriter) add(id string, t *Turn) error {
	if err := w.load(); err != nil {
		return err
	}
	length := termCounts(w.ix, t, w.counts)
	if length == 0 {
		return nil
	}
	stamp, err := w.replacedStamp(id, t.Seq)
	if err != nil {
		return err
	}
	if stamp == 0 {
		w.fig.Stamp++
		stamp = w.fig.Stamp
	}
	w.fig.Docs++
	w.fig.Terms += length
	w.changed = true
	at := t.At
	if at.IsZero() {
		at = w.now
	}
	for term, tf := range w.counts {
		v := encodePosting(posting{TF: tf, Len: length, Role: t.Role, At: at, Stamp: stamp})
		if err := w.b.Set(postingKey(w.scope, term, id, t.Seq), v, nil); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the postings of turn t of session id, as it was stored.
func (w *indexWriter) remove(id string, t *Turn) error {
	if err := w.load(); err != nil {
		return err
	}
	length := termCounts(w.ix, t, w.counts)
	if length == 0 {
		return nil
	}
	w.fig.Docs = max(w.fig.Docs, 1) - 1
	w.fig.Terms -= min(w.fig.Terms, length)
	w.changed = true
	if w.removed == nil {
		w.removed = map[turnRef]string{}
	}
	for term := range w.counts {
		w.removed[turnRef{id, t.Seq}] = term
		if err := w.b.Delete(postingKey(w.scope, term, id, t.Seq), nil); err != nil {
			return err
		}
	}
	return nil
}

// replacedStamp returns the stamp of the turn (id, seq) this writer removed, from the store
// (the batch's deletions are not applied yet); 0 when it removed none.
func (w *indexWriter) replacedStamp(id string, seq uint64) (uint64, error) {
	term, ok := w.removed[turnRef{id, seq}]
	if !ok {
		return 0, nil
	}
	delete(w.removed, turnRef{id, seq})
	v, closer, err := w.r.Get(postingKey(w.scope, term, id, seq))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	p, err := decodePosting(v)
	if err != nil {
		return 0, err
	}
	return p.Stamp, nil
}

// flush writes the scope's figures when they changed.
func (w *indexWriter) flush() error {
	if w == nil || !w.changed {
		return nil
	}
	return w.b.Set(indexStatsKey(w.scope), encodeFigures(w.fig), nil)
}

// readIndexState reads m"index"; ok is false when the store holds none.
func readIndexState(r pebble.Reader) (st indexState, ok bool, err error) {
	v, closer, err := r.Get(indexKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return indexState{}, false, nil
	}
	if err != nil {
		return indexState{}, false, err
	}
	defer closer.Close()
	if err := json.Unmarshal(v, &st); err != nil {
		return indexState{}, false, fmt.Errorf("index state: %w", err)
	}
	return st, true, nil
}
