package kv

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// AppendTurns appends turns to the session (scope, id) and records pos as its transcript
// position, in one synced write. Turns whose non-empty SourceID is already stored for the
// session, or appears earlier in turns, are skipped, so re-reading a transcript from the start
// stores nothing twice; turns without a SourceID are always appended. Stored turns get Seq
// numbers from the session's TurnCount upward (any Seq passed in is ignored); TurnCount,
// Transcript and UpdatedAt move with them. The cost is proportional to len(turns), not to the
// session's length. With no turns it only records pos.
//
// It returns how many turns were stored; an error wrapping ErrNotFound when the session is not
// stored; a turn's validation error (nothing written).
func (s *Store) AppendTurns(ctx context.Context, scope, id string, turns []Turn, pos TranscriptPos) (added int, err error) {
	a, err := s.AppendTranscript(ctx, scope, id, turns, pos)
	return len(a.Turns), err
}

// Appended is what AppendTranscript wrote: the session as it now stands and the turns it
// stored, with their Seq, in order. A caller that read the session before can carry on from
// these without reading it again.
type Appended struct {
	Session Session
	Turns   []Turn
}

// AppendTranscript is AppendTurns, returning the session as written and the turns stored.
func (s *Store) AppendTranscript(ctx context.Context, scope, id string, turns []Turn, pos TranscriptPos) (Appended, error) {
	if err := checkRef(scope, id); err != nil {
		return Appended{}, fmt.Errorf("append turns: %w", err)
	}
	for i := range turns {
		if err := turns[i].Validate(); err != nil {
			return Appended{}, fmt.Errorf("append turns %s/%s: turns[%d]: %w", scope, id, i, err)
		}
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return Appended{}, fmt.Errorf("append turns %s/%s: %w", scope, id, err)
	}
	defer s.release()
	s.mu.Lock()
	defer s.mu.Unlock()

	a, _, err := s.appendTurns(ctx, db, scope, id, turns, &pos, false, nil)
	if err != nil {
		return Appended{}, fmt.Errorf("append turns %s/%s: %w", scope, id, err)
	}
	return a, nil
}

// UpsertTurns stores turns of the session (scope, id) in one synced write: a turn whose
// SourceID is already stored replaces that stored turn in place (same Seq), a new one is appended
// as in AppendTurns. It is for harnesses that stream a record several times as it grows (OpenCode
// message parts). The transcript position is left as it is. The cost is proportional to
// len(turns). It returns how many turns were appended and how many replaced; an error wrapping
// ErrNotFound when the session is not stored.
func (s *Store) UpsertTurns(ctx context.Context, scope, id string, turns []Turn) (added, replaced int, err error) {
	a, replaced, err := s.UpsertTranscript(ctx, scope, id, turns, nil)
	return len(a.Turns), replaced, err
}

// UpsertTranscript is UpsertTurns returning the session as written and the turns appended, as
// AppendTranscript does. When ensure is non-nil the session need not be stored: ensure gets it
// as stored (or a zero Session with Scope and ID set, exists false) and changes it in the same
// write, as Store.UpdateSession would (its counts, files and CreatedAt stay the store's); an
// error from it is returned (wrapped) and nothing is written. One write where a stream's event
// would otherwise take two.
func (s *Store) UpsertTranscript(ctx context.Context, scope, id string, turns []Turn, ensure func(sess *Session, exists bool) error) (a Appended, replaced int, err error) {
	if err := checkRef(scope, id); err != nil {
		return Appended{}, 0, fmt.Errorf("upsert turns: %w", err)
	}
	for i := range turns {
		if err := turns[i].Validate(); err != nil {
			return Appended{}, 0, fmt.Errorf("upsert turns %s/%s: turns[%d]: %w", scope, id, i, err)
		}
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return Appended{}, 0, fmt.Errorf("upsert turns %s/%s: %w", scope, id, err)
	}
	defer s.release()
	s.mu.Lock()
	defer s.mu.Unlock()

	a, replaced, err = s.appendTurns(ctx, db, scope, id, turns, nil, true, ensure)
	if err != nil {
		return Appended{}, 0, fmt.Errorf("upsert turns %s/%s: %w", scope, id, err)
	}
	return a, replaced, nil
}

// appendTurns does the work of AppendTurns (replace false: known source ids are skipped) and
// UpsertTurns (replace true: they are overwritten in place). A nil pos keeps the session's
// transcript position. It returns the session as written and the turns appended (not those
// replaced). The caller holds s.mu.
func (s *Store) appendTurns(ctx context.Context, db *pebble.DB, scope, id string, turns []Turn, pos *TranscriptPos, replace bool, ensure func(*Session, bool) error) (a Appended, replaced int, err error) {
	r := s.counted(db)
	prev, ok, err := getSession(r, scope, id)
	if err != nil {
		return Appended{}, 0, err
	}
	if !ok && ensure == nil {
		return Appended{}, 0, ErrNotFound
	}
	now := s.now()
	sess := prev
	if ensure != nil {
		if !ok {
			sess = Session{Scope: scope, ID: id}
		}
		if err := ensure(&sess, ok); err != nil {
			return Appended{}, 0, err
		}
		if sess.Scope != scope || sess.ID != id {
			return Appended{}, 0, fmt.Errorf("changed to %s/%s", sess.Scope, sess.ID)
		}
		if err := sess.Validate(); err != nil {
			return Appended{}, 0, err
		}
		if ok { // what the store keeps count of stays the store's
			sess.CreatedAt, sess.TurnCount, sess.Prompts, sess.Files = prev.CreatedAt, prev.TurnCount, prev.Prompts, prev.Files
		} else {
			if sess.CreatedAt.IsZero() {
				sess.CreatedAt = now
			}
			sess.CreatedAt, sess.TurnCount, sess.Prompts, sess.Files = sess.CreatedAt.UTC(), 0, 0, nil
		}
	}
	b := db.NewBatch()
	defer b.Close()
	ix := s.indexWriter(r, b, scope, now)
	facts := factsWriter{f: s.Ledger, r: r, scope: scope, id: id}

	// The last version of a record within turns wins when replacing; the first when skipping.
	if replace {
		turns = lastBySource(turns)
	}
	seen := make(map[string]bool, len(turns))
	for _, t := range turns {
		if t.SourceID != "" {
			if seen[t.SourceID] {
				continue
			}
			seen[t.SourceID] = true
			seq, stored, err := storedSeq(r, turnSourceKey(scope, id, t.SourceID))
			if err != nil {
				return Appended{}, 0, err
			}
			if stored && !replace {
				continue
			}
			if stored {
				t.Seq = seq
				v, err := encodeTurn(&t)
				if err != nil {
					return Appended{}, 0, err
				}
				if err := s.reindexTurn(r, ix, scope, id, &t); err != nil {
					return Appended{}, 0, err
				}
				if err := b.Set(turnKey(scope, id, seq), v, nil); err != nil {
					return Appended{}, 0, err
				}
				sess.touchFiles(t.Files)
				if err := facts.note(&t, true); err != nil {
					return Appended{}, 0, err
				}
				replaced++
				continue
			}
		}
		t.Seq = sess.TurnCount
		v, err := encodeTurn(&t)
		if err != nil {
			return Appended{}, 0, err
		}
		if ix != nil && s.indexCovers(scope, id, t.Seq) {
			if err := ix.add(id, &t); err != nil {
				return Appended{}, 0, err
			}
		}
		if err := b.Set(turnKey(scope, id, t.Seq), v, nil); err != nil {
			return Appended{}, 0, err
		}
		if t.SourceID != "" {
			if err := b.Set(turnSourceKey(scope, id, t.SourceID), encodeUint(t.Seq), nil); err != nil {
				return Appended{}, 0, err
			}
		}
		sess.touchFiles(t.Files)
		if err := facts.note(&t, false); err != nil {
			return Appended{}, 0, err
		}
		sess.TurnCount++
		if t.Role == "user" {
			sess.Prompts++
		}
		a.Turns = append(a.Turns, t)
	}
	if pos != nil {
		sess.Transcript = *pos
	}
	var old *Session
	if ok {
		old = &prev
	}
	if err := putSession(b, &sess, old, now); err != nil {
		return Appended{}, 0, err
	}
	if err := ix.flush(); err != nil {
		return Appended{}, 0, err
	}
	if err := facts.flush(b); err != nil {
		return Appended{}, 0, err
	}
	if err := s.commit(ctx, b); err != nil {
		return Appended{}, 0, err
	}
	if s.observing() {
		s.observe([]Change{{Session: &SessionChange{Old: prev, Existed: ok, New: sess}}})
	}
	a.Session = sess
	return a, replaced, nil
}

// Turns returns the session's turns with Seq ≥ fromSeq in ascending order, at most limit of
// them (0 or less: all). It returns an error wrapping ErrNotFound when the session is not
// stored; a stored session with no such turns gives an empty result.
func (s *Store) Turns(ctx context.Context, scope, id string, fromSeq uint64, limit int) ([]Turn, error) {
	if err := checkRef(scope, id); err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("read turns %s/%s: %w", scope, id, err)
	}
	defer s.release()
	snap := db.NewSnapshot()
	defer snap.Close()

	if limit < 0 {
		limit = 0 // all
	}
	out, err := readTurns(ctx, s.counted(snap), scope, id, func(it *pebble.Iterator) bool {
		return it.SeekGE(turnKey(scope, id, fromSeq))
	}, (*pebble.Iterator).Next, limit)
	if err != nil {
		return nil, fmt.Errorf("read turns %s/%s: %w", scope, id, err)
	}
	return out, nil
}

// LastTurns returns the session's last n turns in ascending order (fewer when it has fewer; none
// when n ≤ 0), reading backwards from the end so the cost is proportional to n. It returns an
// error wrapping ErrNotFound when the session is not stored.
func (s *Store) LastTurns(ctx context.Context, scope, id string, n int) ([]Turn, error) {
	if err := checkRef(scope, id); err != nil {
		return nil, fmt.Errorf("read last turns: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("read last turns %s/%s: %w", scope, id, err)
	}
	defer s.release()
	snap := db.NewSnapshot()
	defer snap.Close()

	if n <= 0 {
		n = -1 // read nothing, but still check the session exists
	}
	out, err := readTurns(ctx, s.counted(snap), scope, id, (*pebble.Iterator).Last, (*pebble.Iterator).Prev, n)
	if err != nil {
		return nil, fmt.Errorf("read last turns %s/%s: %w", scope, id, err)
	}
	slices.Reverse(out)
	return out, nil
}

// readTurns checks that the session exists, then collects up to limit of its turns (0: all; -1:
// none), positioning an iterator bounded to the session's turns with first and stepping with
// next.
func readTurns(ctx context.Context, r pebble.Reader, scope, id string, first, next func(*pebble.Iterator) bool, limit int) (out []Turn, err error) {
	sess, ok, err := getSession(r, scope, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNotFound
	}
	if limit < 0 {
		return []Turn{}, nil
	}
	capHint := sess.TurnCount
	if limit > 0 && uint64(limit) < capHint {
		capHint = uint64(limit)
	}
	out = make([]Turn, 0, min(capHint, 1024))
	err = scanTurns(ctx, r, scope, id, first, next, func(got []Turn) bool { return limit == 0 || len(got) < limit }, &out)
	return out, err
}

// scanTurns appends the session's turns to out, positioning an iterator bounded to them with
// first and stepping with next, while more (given what out holds) says to go on.
func scanTurns(ctx context.Context, r pebble.Reader, scope, id string, first, next func(*pebble.Iterator) bool, more func([]Turn) bool, out *[]Turn) (err error) {
	prefix := turnsPrefix(scope, id)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, it.Close()) }()
	for ok := first(it); ok && more(*out); ok = next(it) {
		if len(*out)%256 == 255 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		_, _, seq, err := decodeTurnKey(it.Key())
		if err != nil {
			return err
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		t, err := decodeTurn(seq, v)
		if err != nil {
			return err
		}
		countDecoded(r, it.Key())
		*out = append(*out, t)
	}
	return it.Error()
}

// lastBySource keeps, for each non-empty SourceID, only its last version in turns, at the place
// of its first appearance; turns without a SourceID are kept as they are.
func lastBySource(turns []Turn) []Turn {
	last := map[string]int{}
	for i, t := range turns {
		if t.SourceID != "" {
			last[t.SourceID] = i
		}
	}
	out := make([]Turn, 0, len(turns))
	placed := map[string]bool{}
	for _, t := range turns {
		if t.SourceID == "" {
			out = append(out, t)
			continue
		}
		if !placed[t.SourceID] {
			placed[t.SourceID] = true
			out = append(out, turns[last[t.SourceID]])
		}
	}
	return out
}

// storedSeq reads a turn-source index entry: the Seq of the stored turn with that source id.
func storedSeq(r pebble.Reader, key []byte) (seq uint64, ok bool, err error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer closer.Close()
	seq, err = decodeUint(v)
	return seq, err == nil, err
}

// reindexTurn replaces the postings of the stored turn that t replaces (same Seq) with t's, when
// the index covers it. The caller holds s.mu.
func (s *Store) reindexTurn(r pebble.Reader, ix *indexWriter, scope, id string, t *Turn) error {
	if ix == nil || !s.indexCovers(scope, id, t.Seq) {
		return nil
	}
	v, closer, err := r.Get(turnKey(scope, id, t.Seq))
	if err != nil {
		return err
	}
	old, err := decodeTurn(t.Seq, v)
	closer.Close()
	if err != nil {
		return err
	}
	if err := ix.remove(id, &old); err != nil {
		return err
	}
	return ix.add(id, t)
}
