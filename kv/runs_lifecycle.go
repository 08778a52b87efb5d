package kv

import (
	"context"
	"fmt"
	"time"
)

// The queries of a run's lifecycle: how many children a session has open (spawn.max_children),
// which runs are open (the watchdog and the ghost sweep), and which finished runs still hold
// their full result (the result-retention sweep). Each walks an index of exactly what it asks
// for, so its cost does not grow with the runs a scope has finished.

// ActiveChildren returns how many of session parentID's runs are open (pending or running),
// counting at most max (0 or less: all); each counted run costs one index step, and no record
// is read.
func (s *Store) ActiveChildren(ctx context.Context, scope, parentID string, max int) (int, error) {
	if err := checkRef(scope, parentID); err != nil {
		return 0, fmt.Errorf("active children: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("active children of %s/%s: %w", scope, parentID, err)
	}
	defer s.release()
	n := 0
	err = scanPrefix(ctx, s.counted(db), runActivePrefix(scope, parentID), func([]byte) (bool, error) {
		n++
		return max <= 0 || n < max, nil
	})
	if err != nil {
		return 0, fmt.Errorf("active children of %s/%s: %w", scope, parentID, err)
	}
	return n, nil
}

// OpenRuns returns the scope's open runs (pending or running) created before before (zero: all),
// oldest first, at most limit (0 or less: all). The walk stops at the first younger run.
func (s *Store) OpenRuns(ctx context.Context, scope string, before time.Time, limit int) ([]Run, error) {
	if err := checkScope(scope); err != nil {
		return nil, fmt.Errorf("open runs: %w", err)
	}
	out, err := s.runsUntil(ctx, scope, runOpenPrefix(scope), func(k []byte) (string, bool, error) {
		_, created, id, err := decodeRunOpenKey(k)
		return id, before.IsZero() || created.Before(before), err
	}, limit)
	if err != nil {
		return nil, fmt.Errorf("open runs of %s: %w", scope, err)
	}
	return out, nil
}

// FullResultRuns returns the scope's finished runs that still hold their full result and
// ended before before, the oldest end first, at most limit (0 or less: all). The walk stops at
// the first run that ended later.
func (s *Store) FullResultRuns(ctx context.Context, scope string, before time.Time, limit int) ([]Run, error) {
	if err := checkScope(scope); err != nil {
		return nil, fmt.Errorf("full-result runs: %w", err)
	}
	out, err := s.runsUntil(ctx, scope, runResultPrefix(scope), func(k []byte) (string, bool, error) {
		_, ended, id, err := decodeRunResultKey(k)
		return id, ended.Before(before), err
	}, limit)
	if err != nil {
		return nil, fmt.Errorf("full-result runs of %s: %w", scope, err)
	}
	return out, nil
}

// runsUntil reads, from one snapshot, the runs an index under prefix names, in key order, until
// decode says a key is past the range (ok false) or limit runs are read (0 or less: no limit).
func (s *Store) runsUntil(ctx context.Context, scope string, prefix []byte, decode func(k []byte) (id string, ok bool, err error), limit int) ([]Run, error) {
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release()
	snap := db.NewSnapshot()
	defer snap.Close()
	r := s.counted(snap)
	out := []Run{}
	err = scanPrefix(ctx, r, prefix, func(k []byte) (bool, error) {
		id, ok, err := decode(k)
		if err != nil || !ok {
			return false, err
		}
		run, err := indexedRun(r, scope, id)
		if err != nil {
			return false, err
		}
		out = append(out, run)
		return limit <= 0 || len(out) < limit, nil
	})
	return out, err
}
