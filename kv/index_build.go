package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// reindexChunk bounds one reindex batch: the turns indexed under one hold of the write lock, so
// hooks wait at most for one chunk.
const (
	reindexChunkTurns = 512
	reindexChunkBytes = 4 << 20
)

// openIndex decides, at Open, whether the search index is whole. A store without turns starts
// with an empty index that is ready; one indexed under another version (or never) is marked
// due, and its turns are left for Reindex. Without an Indexer, a recorded index is forgotten,
// so that the next Open with one rebuilds what this one will not keep up to date.
func (s *Store) openIndex(db *pebble.DB) error {
	st, ok, err := readIndexState(db)
	if err != nil {
		return err
	}
	s.ixBuilding, s.ixPos, s.ixDone, s.ixTotal = false, nil, 0, 0
	if s.Index == nil {
		if ok {
			return db.Delete(indexKey, pebble.Sync)
		}
		return nil
	}
	if ok && st.Version == s.Index.Version() && st.State == indexReady {
		return nil
	}
	empty, err := noTurns(db)
	if err != nil {
		return err
	}
	if empty {
		b := db.NewBatch()
		defer b.Close()
		if err := b.DeleteRange([]byte{prefixPosting}, []byte{prefixIndexStats + 1}, nil); err != nil {
			return err
		}
		if err := setIndexState(b, indexState{Version: s.Index.Version(), State: indexReady}); err != nil {
			return err
		}
		return b.Commit(pebble.Sync)
	}
	s.ixBuilding = true
	return nil
}

// noTurns reports whether the store holds no turn.
func noTurns(r pebble.Reader) (bool, error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixTurn}, UpperBound: []byte{prefixTurn + 1}})
	if err != nil {
		return false, err
	}
	found := it.First()
	return !found, errors.Join(it.Error(), it.Close())
}

func setIndexState(b *pebble.Batch, st indexState) error {
	v, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return b.Set(indexKey, v, nil)
}

// ErrReindexRunning is returned by Reindex while another Reindex runs.
var ErrReindexRunning = errors.New("a reindex is already running")

// IndexStatus reports the search index's state.
func (s *Store) IndexStatus() IndexStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Total is counted when the rebuild starts; turns stored meanwhile past its position are
	// indexed by it too, so Done may pass Total: the progress shown stops at Total.
	st := IndexStatus{Enabled: s.Index != nil, Building: s.ixBuilding, Running: s.ixRunning, Done: min(s.ixDone, s.ixTotal), Total: s.ixTotal}
	if s.Index != nil {
		st.Version = s.Index.Version()
	}
	return st
}

// Reindex rebuilds the search index from every stored turn: BeginReindex, then ResumeReindex.
// It needs an Indexer.
func (s *Store) Reindex(ctx context.Context, progress func(done, total uint64)) error {
	if err := s.BeginReindex(ctx); err != nil {
		return err
	}
	return s.ResumeReindex(ctx, progress)
}

// BeginReindex starts a rebuild of the search index: it drops the postings, records the index
// as building and counts the turns to do. ResumeReindex does the work. It returns
// ErrReindexRunning while another rebuild runs.
func (s *Store) BeginReindex(ctx context.Context) error {
	if s.Index == nil {
		return errors.New("reindex: the store has no indexer")
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return fmt.Errorf("reindex: %w", err)
	}
	defer s.release()
	if err := s.startReindex(ctx, db); err != nil {
		return fmt.Errorf("reindex: %w", err)
	}
	return nil
}

// ResumeReindex indexes the turns a rebuild begun by BeginReindex has not reached, in key
// order, a chunk at a time, each chunk one synced batch, calling progress (when non-nil) after
// each with the turns done and the total. Hooks go on meanwhile: a turn stored before the
// rebuild reaches it is left for the rebuild, one after is indexed as usual. A search during the
// rebuild sees the turns indexed so far. When ctx ends it stops and returns ctx's error; the
// index stays due, and the next Open starts over.
func (s *Store) ResumeReindex(ctx context.Context, progress func(done, total uint64)) error {
	db, err := s.acquire(ctx)
	if err != nil {
		return fmt.Errorf("reindex: %w", err)
	}
	defer s.release()
	defer func() {
		s.mu.Lock()
		s.ixRunning = false
		s.mu.Unlock()
	}()
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reindex: %w", err)
		}
		more, err := s.reindexChunk(db)
		if err != nil {
			return fmt.Errorf("reindex: %w", err)
		}
		if progress != nil {
			st := s.IndexStatus()
			progress(st.Done, st.Total)
		}
		if !more {
			return nil
		}
	}
}

// startReindex drops the postings and figures, records the index as building, and counts the
// turns to do.
func (s *Store) startReindex(ctx context.Context, db *pebble.DB) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ixRunning {
		return ErrReindexRunning
	}
	var total uint64
	err := scanRange(ctx, db, []byte{prefixSession}, []byte{prefixSession + 1}, func(k, v []byte) (bool, error) {
		sess, err := decodeSession(v)
		if err != nil {
			return false, err
		}
		total += sess.TurnCount
		return true, nil
	})
	if err != nil {
		return err
	}
	b := db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange([]byte{prefixPosting}, []byte{prefixIndexStats + 1}, nil); err != nil {
		return err
	}
	if err := setIndexState(b, indexState{Version: s.Index.Version(), State: indexBuilding}); err != nil {
		return err
	}
	if err := s.commit(ctx, b); err != nil {
		return err
	}
	s.ixBuilding, s.ixPos, s.ixDone, s.ixTotal = true, nil, 0, total
	s.ixRunning = true
	return nil
}

// reindexChunk indexes the next chunk of turns after ixPos, under the write lock; when none is
// left it records the index as ready. It reports whether turns may remain.
func (s *Store) reindexChunk(db *pebble.DB) (more bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lower := []byte{prefixTurn}
	if s.ixPos != nil {
		lower = append(bytes.Clone(s.ixPos), 0) // the first key after ixPos
	}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: []byte{prefixTurn + 1}})
	if err != nil {
		return false, err
	}
	b := db.NewBatch()
	defer b.Close()
	writers := map[string]*indexWriter{}
	now := s.now()
	var last []byte
	turns, size := 0, 0
	for ok := it.First(); ok && turns < reindexChunkTurns && size < reindexChunkBytes; ok = it.Next() {
		scope, id, seq, err := decodeTurnKey(it.Key())
		if err != nil {
			return false, errors.Join(err, it.Close())
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return false, errors.Join(err, it.Close())
		}
		t, err := decodeTurn(seq, v)
		if err != nil {
			return false, errors.Join(err, it.Close())
		}
		w := writers[scope]
		if w == nil {
			w = s.indexWriter(db, b, scope, now)
			writers[scope] = w
		}
		if err := w.add(id, &t); err != nil {
			return false, errors.Join(err, it.Close())
		}
		last = append(last[:0], it.Key()...)
		turns++
		size += len(v)
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return false, err
	}
	for _, w := range writers {
		if err := w.flush(); err != nil {
			return false, err
		}
	}
	more = turns > 0
	if !more {
		if err := setIndexState(b, indexState{Version: s.Index.Version(), State: indexReady}); err != nil {
			return false, err
		}
	}
	if err := s.commit(context.Background(), b); err != nil {
		return false, err
	}
	if more {
		s.ixPos = last
		s.ixDone += uint64(turns)
	} else {
		s.ixBuilding = false
		s.ixDone = max(s.ixDone, s.ixTotal)
	}
	return more, nil
}
