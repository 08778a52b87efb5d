package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Posting is one turn's entry in a term's posting list.
type Posting struct {
	Session string // the session's ID
	Seq     uint64 // the turn's Seq
	Term    string // the indexed term
	TF      int    // the term's count in the turn
	Len     int    // the turn's length in terms
	Role    string
	At      time.Time // the turn's time; zero when unknown
	Stamp   uint64    // the scope's index counter when the turn was indexed
}

// IndexFigures are a scope's collection figures: indexed turns, their lengths summed, and the
// newest Posting.Stamp.
type IndexFigures struct {
	Docs, Terms, Stamp uint64
}

// IndexReader reads one scope's search index, turns and sessions from one snapshot. Close it.
type IndexReader struct {
	s     *Store
	snap  *pebble.Snapshot
	r     pebble.Reader
	scope string
}

// IndexReader opens a read of scope's index at this moment. It holds the store open (Close
// waits for it) until its own Close.
func (s *Store) IndexReader(ctx context.Context, scope string) (*IndexReader, error) {
	if err := checkScope(scope); err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	snap := db.NewSnapshot()
	return &IndexReader{s: s, snap: snap, r: s.counted(snap), scope: scope}, nil
}

// Close releases the snapshot and the store.
func (x *IndexReader) Close() error {
	if x.snap == nil {
		return nil
	}
	err := x.snap.Close()
	x.snap = nil
	x.s.release()
	return err
}

// Figures returns the scope's collection figures (zero when nothing is indexed).
func (x *IndexReader) Figures(ctx context.Context) (IndexFigures, error) {
	if err := ctx.Err(); err != nil {
		return IndexFigures{}, err
	}
	v, closer, err := x.r.Get(indexStatsKey(x.scope))
	if errors.Is(err, pebble.ErrNotFound) {
		return IndexFigures{}, nil
	}
	if err != nil {
		return IndexFigures{}, fmt.Errorf("read index figures: %w", err)
	}
	defer closer.Close()
	f, err := decodeFigures(v)
	if err != nil {
		return IndexFigures{}, fmt.Errorf("read index figures: %w", err)
	}
	return IndexFigures(f), nil
}

// Postings calls fn for each posting of term, or with prefix of every term starting with term,
// in key order (term, session, Seq). An error from fn stops the walk and is returned.
func (x *IndexReader) Postings(ctx context.Context, term string, prefix bool, fn func(Posting) error) (err error) {
	lower := termPrefix(x.scope, term)
	if !prefix {
		lower = append(lower, sep)
	}
	it, err := x.r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(lower)})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, it.Close()) }()
	n := 0
	var keys postingKeys
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := x.emitPosting(it, &keys, term, fn); err != nil {
			return err
		}
	}
	return it.Error()
}

// SessionPostings calls fn for each posting of term (a whole term) in the sessions ids, in key
// order (session, Seq): one seek per session, so the rest of the term's list is not read. An
// error from fn stops the walk and is returned.
func (x *IndexReader) SessionPostings(ctx context.Context, term string, ids []string, fn func(Posting) error) (err error) {
	base := appendPart(termPrefix(x.scope, term), "")
	it, err := x.r.NewIter(&pebble.IterOptions{LowerBound: base, UpperBound: prefixEnd(base)})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, it.Close()) }()
	sorted := slices.Compact(slices.Sorted(slices.Values(ids)))
	var keys postingKeys
	n := 0
	for _, id := range sorted {
		if err := checkRef(x.scope, id); err != nil {
			return fmt.Errorf("read postings of %q: %w", term, err)
		}
		lower := appendPart(slices.Clip(base), id)
		upper := prefixEnd(lower)
		for ok := it.SeekGE(lower); ok && bytes.Compare(it.Key(), upper) < 0; ok = it.Next() {
			if n++; n%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := x.emitPosting(it, &keys, term, fn); err != nil {
				return err
			}
		}
		// Checked per session: the next SeekGE clears the iterator's error.
		if err := it.Error(); err != nil {
			return fmt.Errorf("read postings of %q in session %s: %w", term, id, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// emitPosting decodes the posting it is at and calls fn with it.
func (x *IndexReader) emitPosting(it *pebble.Iterator, keys *postingKeys, term string, fn func(Posting) error) error {
	t, id, seq, err := keys.decode(it.Key())
	if err != nil {
		return fmt.Errorf("read postings of %q: %w", term, err)
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return err
	}
	p, err := decodePosting(v)
	if err != nil {
		return fmt.Errorf("read postings of %q: %w", term, err)
	}
	return fn(Posting{Session: id, Seq: seq, Term: t, TF: int(p.TF), Len: int(p.Len), Role: p.Role, At: p.At, Stamp: p.Stamp})
}

// Turn reads one turn of session id; an error wrapping ErrNotFound when it is not stored.
func (x *IndexReader) Turn(ctx context.Context, id string, seq uint64) (Turn, error) {
	if err := ctx.Err(); err != nil {
		return Turn{}, err
	}
	if err := checkRef(x.scope, id); err != nil {
		return Turn{}, fmt.Errorf("read turn: %w", err)
	}
	k := turnKey(x.scope, id, seq)
	v, closer, err := x.r.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return Turn{}, fmt.Errorf("read turn %s/%s/%d: %w", x.scope, id, seq, ErrNotFound)
	}
	if err != nil {
		return Turn{}, fmt.Errorf("read turn %s/%s/%d: %w", x.scope, id, seq, err)
	}
	defer closer.Close()
	countDecoded(x.r, k)
	return decodeTurn(seq, v)
}

// Session reads session id; an error wrapping ErrNotFound when it is not stored.
func (x *IndexReader) Session(ctx context.Context, id string) (Session, error) {
	if err := ctx.Err(); err != nil {
		return Session{}, err
	}
	if err := checkRef(x.scope, id); err != nil {
		return Session{}, fmt.Errorf("read session: %w", err)
	}
	sess, ok, err := getSession(x.r, x.scope, id)
	if err != nil {
		return Session{}, fmt.Errorf("read session %s/%s: %w", x.scope, id, err)
	}
	if !ok {
		return Session{}, fmt.Errorf("read session %s/%s: %w", x.scope, id, ErrNotFound)
	}
	return sess, nil
}

// Children returns the IDs of session id's direct children, oldest first.
func (x *IndexReader) Children(ctx context.Context, id string) ([]string, error) {
	if err := checkRef(x.scope, id); err != nil {
		return nil, fmt.Errorf("read children: %w", err)
	}
	var out []string
	err := scanPrefix(ctx, x.r, childrenPrefix(x.scope, id), func(k []byte) (bool, error) {
		_, _, _, child, err := decodeChildKey(k)
		if err != nil {
			return false, err
		}
		out = append(out, child)
		return true, nil
	})
	return out, err
}
