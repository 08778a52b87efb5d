package kv

import (
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// RunFilter selects runs in ListRuns. Zero fields match everything.
type RunFilter struct {
	RootID   string // only runs spawned within this top-level session
	ParentID string // only runs this session asked for
	ChildID  string // only the run paired with this sub-agent session
	Status   string // only runs with this status
	Limit    int    // at most this many; 0 or less: all
}

func (f *RunFilter) match(r *Run) bool {
	return (f.RootID == "" || r.RootID == f.RootID) &&
		(f.ParentID == "" || r.ParentID == f.ParentID) &&
		(f.ChildID == "" || r.ChildID == f.ChildID) &&
		(f.Status == "" || r.Status == f.Status)
}

// UpdateRun reads, changes and writes one run atomically, like UpdateSession: fn receives the
// stored run, or a zero Run with Scope and ID filled in and exists false. If fn returns an error
// nothing is written and that error is returned as is. CreatedAt is kept from the stored run
// (set from Now when a new run has none). In the same synced batch it keeps the indexes true:
// a pending run is listed among its root session's spawns, a paired run is found from its child.
// Another run already paired with the same ChildID is an error (nothing written).
func (s *Store) UpdateRun(ctx context.Context, scope, id string, fn func(r *Run, exists bool) error) (Run, error) {
	if err := checkRef(scope, id); err != nil {
		return Run{}, fmt.Errorf("update run: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return Run{}, fmt.Errorf("update run %s/%s: %w", scope, id, err)
	}
	defer s.release()
	s.mu.Lock()
	defer s.mu.Unlock()

	old, exists, err := getRun(db, scope, id)
	if err != nil {
		return Run{}, fmt.Errorf("update run %s/%s: %w", scope, id, err)
	}
	r := old
	if !exists {
		r = Run{Scope: scope, ID: id}
	}
	if err := fn(&r, exists); err != nil {
		return Run{}, err
	}
	if r.Scope != scope || r.ID != id {
		return Run{}, fmt.Errorf("update run %s/%s: changed to %s/%s", scope, id, r.Scope, r.ID)
	}
	if exists {
		r.CreatedAt = old.CreatedAt
		if old.RootID != r.RootID {
			return Run{}, fmt.Errorf("update run %s/%s: root cannot change", scope, id)
		}
	} else if r.CreatedAt.IsZero() {
		r.CreatedAt = s.now()
	}
	// Times are kept in UTC without a monotonic reading, so the run returned is the run stored.
	r.CreatedAt, r.StartedAt, r.EndedAt = r.CreatedAt.UTC(), r.StartedAt.UTC(), r.EndedAt.UTC()
	if err := r.Validate(); err != nil {
		return Run{}, fmt.Errorf("update run: %w", err)
	}
	if r.ChildID != "" && (!exists || old.ChildID != r.ChildID) {
		other, err := getIndexValue(db, runChildKey(scope, r.ChildID))
		if err != nil {
			return Run{}, fmt.Errorf("update run %s/%s: %w", scope, id, err)
		}
		if other != "" && other != id {
			return Run{}, fmt.Errorf("update run %s/%s: child %s already paired with run %s", scope, id, r.ChildID, other)
		}
	}

	if err := commitRun(db, &r, old, exists); err != nil {
		return Run{}, fmt.Errorf("update run %s/%s: %w", scope, id, err)
	}
	return r, nil
}

// commitRun writes r and moves its index entries from old (the stored run, when exists) in one
// synced batch. The caller holds s.mu and has checked r.
func commitRun(db *pebble.DB, r *Run, old Run, exists bool) error {
	b := db.NewBatch()
	defer b.Close()
	v, err := encodeRun(r)
	if err != nil {
		return err
	}
	if err := b.Set(runKey(r.Scope, r.ID), v, nil); err != nil {
		return err
	}
	if !exists {
		if err := b.Set(runRecencyKey(r.Scope, r.CreatedAt, r.ID), nil, nil); err != nil {
			return err
		}
		if err := b.Set(runRootKey(r.Scope, r.RootID, r.CreatedAt, r.ID), nil, nil); err != nil {
			return err
		}
	}
	if exists && old.Pending() && !r.Pending() {
		if err := b.Delete(spawnKey(r.Scope, old.RootID, old.CreatedAt, r.ID), nil); err != nil {
			return err
		}
	}
	if r.Pending() && (!exists || !old.Pending()) {
		if err := b.Set(spawnKey(r.Scope, r.RootID, r.CreatedAt, r.ID), nil, nil); err != nil {
			return err
		}
	}
	if exists && old.ChildID != "" && old.ChildID != r.ChildID {
		if err := b.Delete(runChildKey(r.Scope, old.ChildID), nil); err != nil {
			return err
		}
	}
	if r.ChildID != "" {
		if err := b.Set(runChildKey(r.Scope, r.ChildID), []byte(r.ID), nil); err != nil {
			return err
		}
	}
	return b.Commit(pebble.Sync)
}

// GetRun returns the run (scope, id), or an error wrapping ErrNotFound.
func (s *Store) GetRun(ctx context.Context, scope, id string) (Run, error) {
	if err := checkRef(scope, id); err != nil {
		return Run{}, fmt.Errorf("get run: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return Run{}, fmt.Errorf("get run %s/%s: %w", scope, id, err)
	}
	defer s.release()
	r, ok, err := getRun(db, scope, id)
	if err == nil && !ok {
		err = ErrNotFound
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run %s/%s: %w", scope, id, err)
	}
	return r, nil
}

// RunByChild returns the run paired with sub-agent session childID, or an error wrapping
// ErrNotFound when none is.
func (s *Store) RunByChild(ctx context.Context, scope, childID string) (Run, error) {
	if err := checkRef(scope, childID); err != nil {
		return Run{}, fmt.Errorf("run by child: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return Run{}, fmt.Errorf("run by child %s/%s: %w", scope, childID, err)
	}
	defer s.release()
	id, err := getIndexValue(db, runChildKey(scope, childID))
	if err == nil && id == "" {
		err = ErrNotFound
	}
	if err != nil {
		return Run{}, fmt.Errorf("run by child %s/%s: %w", scope, childID, err)
	}
	r, ok, err := getRun(db, scope, id)
	if err == nil && !ok {
		err = fmt.Errorf("index names run %s, which is not stored", id)
	}
	if err != nil {
		return Run{}, fmt.Errorf("run by child %s/%s: %w", scope, childID, err)
	}
	return r, nil
}

// PendingRuns returns the runs of top-level session rootID that no sub-agent has started for
// yet, oldest first. The cost is one step per pending run of that session.
func (s *Store) PendingRuns(ctx context.Context, scope, rootID string) ([]Run, error) {
	if err := checkRef(scope, rootID); err != nil {
		return nil, fmt.Errorf("pending runs: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("pending runs of %s/%s: %w", scope, rootID, err)
	}
	defer s.release()
	snap := db.NewSnapshot()
	defer snap.Close()
	out := []Run{}
	err = scanPrefix(ctx, snap, spawnsPrefix(scope, rootID), func(k []byte) (bool, error) {
		_, _, _, id, err := decodeSpawnKey(k)
		if err != nil {
			return false, err
		}
		r, err := indexedRun(snap, scope, id)
		if err != nil {
			return false, err
		}
		out = append(out, r)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("pending runs of %s/%s: %w", scope, rootID, err)
	}
	return out, nil
}

// ListRuns returns the runs of scope that match f, newest first (by CreatedAt, then ID). With
// f.RootID set it walks only that session's runs; otherwise every run of the scope, until Limit
// matches are found.
func (s *Store) ListRuns(ctx context.Context, scope string, f RunFilter) ([]Run, error) {
	if err := checkScope(scope); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	if f.RootID != "" {
		if err := checkRef(scope, f.RootID); err != nil {
			return nil, fmt.Errorf("list runs: root: %w", err)
		}
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("list runs %s: %w", scope, err)
	}
	defer s.release()
	snap := db.NewSnapshot()
	defer snap.Close()
	prefix, decode := runRecencyPrefix(scope), func(k []byte) (string, error) {
		_, _, id, err := decodeRunRecencyKey(k)
		return id, err
	}
	if f.RootID != "" {
		prefix, decode = runRootPrefix(scope, f.RootID), func(k []byte) (string, error) {
			_, _, _, id, err := decodeRunRootKey(k)
			return id, err
		}
	}
	out := []Run{}
	err = scanPrefix(ctx, snap, prefix, func(k []byte) (bool, error) {
		id, err := decode(k)
		if err != nil {
			return false, err
		}
		r, err := indexedRun(snap, scope, id)
		if err != nil {
			return false, err
		}
		if f.match(&r) {
			out = append(out, r)
		}
		return f.Limit <= 0 || len(out) < f.Limit, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list runs %s: %w", scope, err)
	}
	return out, nil
}

// getRun reads one run; ok is false when it is not stored.
func getRun(r pebble.Reader, scope, id string) (Run, bool, error) {
	return getRecord(r, runKey(scope, id), decodeRun)
}

// indexedRun reads a run an index entry points at (see indexedRecord).
func indexedRun(r pebble.Reader, scope, id string) (Run, error) {
	return indexedRecord(r, "run", scope, id, runKey(scope, id), decodeRun)
}

// getIndexValue reads an index entry's value as a string; "" when the entry is absent.
func getIndexValue(r pebble.Reader, key []byte) (string, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer closer.Close()
	return string(v), nil
}
