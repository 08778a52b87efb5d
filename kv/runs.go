package kv

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// RunFilter selects runs in ListRuns. Zero fields match everything.
type RunFilter struct {
	RootID   string // only runs spawned within this top-level session
	ParentID string // only runs this session asked for
	ChildID  string // only the run paired with this sub-agent session
	Status   string // only runs with this status
	Harness  string // only runs of this harness
	Type     string // only runs of this sub-agent type
	// Since keeps runs created at or after it; zero keeps all. The runs are walked newest
	// first, so the walk stops at the first older one.
	Since time.Time
	Limit int // at most this many; 0 or less: all
}

func (f *RunFilter) match(r *Run) bool {
	return (f.RootID == "" || r.RootID == f.RootID) &&
		(f.ParentID == "" || r.ParentID == f.ParentID) &&
		(f.ChildID == "" || r.ChildID == f.ChildID) &&
		(f.Status == "" || r.Status == f.Status) &&
		(f.Harness == "" || r.Harness == f.Harness) &&
		(f.Type == "" || r.Type == f.Type) &&
		(f.Since.IsZero() || !r.CreatedAt.Before(f.Since))
}

// UpdateRun reads, changes and writes one run atomically, like UpdateSession: fn receives the
// stored run, or a zero Run with Scope and ID filled in and exists false. If fn returns an error
// nothing is written and that error is returned as is. CreatedAt is kept from the stored run
// (set from Now when a new run has none). In the same synced batch it keeps the indexes true:
// a pending run is listed among its root session's spawns, a paired run is found from its child,
// a provisionally paired run among its root's provisional runs, every run among its parent's.
// Another run already paired with the same ChildID is an error (nothing written). A change to
// a run and the sessions it pairs is one Tx (see Update).
func (s *Store) UpdateRun(ctx context.Context, scope, id string, fn func(r *Run, exists bool) error) (Run, error) {
	if err := checkRef(scope, id); err != nil {
		return Run{}, fmt.Errorf("update run: %w", err)
	}
	var out Run
	err := s.update(ctx, false, func(tx *Tx) error {
		var err error
		out, err = tx.UpdateRun(scope, id, fn)
		return err
	})
	if err != nil {
		return Run{}, err
	}
	return out, nil
}

// putRun puts r and moves its index entries from old (the stored run, when exists) in b. The
// caller has checked r.
func putRun(b *pebble.Batch, r *Run, old Run, exists bool) error {
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
	if exists && old.ParentID != r.ParentID {
		if err := b.Delete(runParentKey(r.Scope, old.ParentID, old.CreatedAt, r.ID), nil); err != nil {
			return err
		}
	}
	if !exists || old.ParentID != r.ParentID {
		if err := b.Set(runParentKey(r.Scope, r.ParentID, r.CreatedAt, r.ID), nil, nil); err != nil {
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
	if exists && old.provisionallyPaired() && !r.provisionallyPaired() {
		if err := b.Delete(provisionalKey(r.Scope, old.RootID, old.CreatedAt, r.ID), nil); err != nil {
			return err
		}
	}
	if r.provisionallyPaired() && (!exists || !old.provisionallyPaired()) {
		if err := b.Set(provisionalKey(r.Scope, r.RootID, r.CreatedAt, r.ID), nil, nil); err != nil {
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
	return putRunLifecycle(b, r, old, exists)
}

// putRunLifecycle moves r's entries in the open-run (a), active-children (g) and full-result (w)
// indexes from old's.
func putRunLifecycle(b *pebble.Batch, r *Run, old Run, exists bool) error {
	wasOpen := exists && old.Open()
	if wasOpen && (!r.Open() || old.ParentID != r.ParentID) {
		if err := b.Delete(runActiveKey(r.Scope, old.ParentID, r.ID), nil); err != nil {
			return err
		}
	}
	if wasOpen && !r.Open() {
		if err := b.Delete(runOpenKey(r.Scope, old.CreatedAt, r.ID), nil); err != nil {
			return err
		}
	}
	if r.Open() {
		if err := b.Set(runOpenKey(r.Scope, r.CreatedAt, r.ID), nil, nil); err != nil {
			return err
		}
		if err := b.Set(runActiveKey(r.Scope, r.ParentID, r.ID), nil, nil); err != nil {
			return err
		}
	}
	if exists && old.holdsFullResult() && (!r.holdsFullResult() || !old.EndedAt.Equal(r.EndedAt)) {
		if err := b.Delete(runResultKey(r.Scope, old.EndedAt, r.ID), nil); err != nil {
			return err
		}
	}
	if r.holdsFullResult() {
		if err := b.Set(runResultKey(r.Scope, r.EndedAt, r.ID), nil, nil); err != nil {
			return err
		}
	}
	return nil
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
	r, ok, err := getRun(s.counted(db), scope, id)
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
	snap := db.NewSnapshot()
	defer snap.Close()
	r, err := runByChild(s.counted(snap), scope, childID)
	if err != nil {
		return Run{}, fmt.Errorf("run by child %s/%s: %w", scope, childID, err)
	}
	return r, nil
}

// runByChild reads the run paired with childID through r, or an error wrapping ErrNotFound.
func runByChild(r pebble.Reader, scope, childID string) (Run, error) {
	id, err := getIndexValue(r, runChildKey(scope, childID))
	if err == nil && id == "" {
		err = ErrNotFound
	}
	if err != nil {
		return Run{}, err
	}
	run, ok, err := getRun(r, scope, id)
	if err == nil && !ok {
		err = fmt.Errorf("index names run %s, which is not stored", id)
	}
	return run, err
}

// PendingRuns returns the runs of top-level session rootID that no sub-agent has started for
// yet, oldest first. The cost is one step per pending run of that session.
func (s *Store) PendingRuns(ctx context.Context, scope, rootID string) ([]Run, error) {
	if err := checkRef(scope, rootID); err != nil {
		return nil, fmt.Errorf("pending runs: %w", err)
	}
	out, err := s.indexedRuns(ctx, scope, spawnsPrefix(scope, rootID), func(k []byte) (string, error) {
		_, _, _, id, err := decodeSpawnKey(k)
		return id, err
	}, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("pending runs of %s/%s: %w", scope, rootID, err)
	}
	return out, nil
}

// ProvisionalRuns returns the runs of top-level session rootID paired with a sub-agent by a
// guess not yet confirmed (Provisional), oldest first. The cost is one step per such run.
func (s *Store) ProvisionalRuns(ctx context.Context, scope, rootID string) ([]Run, error) {
	if err := checkRef(scope, rootID); err != nil {
		return nil, fmt.Errorf("provisional runs: %w", err)
	}
	out, err := s.indexedRuns(ctx, scope, provisionalPrefix(scope, rootID), func(k []byte) (string, error) {
		_, _, _, id, err := decodeProvisionalKey(k)
		return id, err
	}, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("provisional runs of %s/%s: %w", scope, rootID, err)
	}
	return out, nil
}

// ListRuns returns the runs of scope that match f, newest first (by CreatedAt, then ID). With
// f.ParentID set it walks only that session's runs, with f.RootID only that top-level session's;
// otherwise every run of the scope, until Limit matches are found.
func (s *Store) ListRuns(ctx context.Context, scope string, f RunFilter) ([]Run, error) {
	if err := checkScope(scope); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	// Each index is newest first and its keys hold CreatedAt: past Since, the walk stops.
	since := func(id string, created time.Time, err error) (string, error) {
		if err == nil && !f.Since.IsZero() && created.Before(f.Since) {
			return "", errPastRange
		}
		return id, err
	}
	prefix, decode := runRecencyPrefix(scope), func(k []byte) (string, error) {
		_, created, id, err := decodeRunRecencyKey(k)
		return since(id, created, err)
	}
	switch {
	case f.ParentID != "":
		if err := checkRef(scope, f.ParentID); err != nil {
			return nil, fmt.Errorf("list runs: parent: %w", err)
		}
		prefix, decode = runParentPrefix(scope, f.ParentID), func(k []byte) (string, error) {
			_, _, created, id, err := decodeRunParentKey(k)
			return since(id, created, err)
		}
	case f.RootID != "":
		if err := checkRef(scope, f.RootID); err != nil {
			return nil, fmt.Errorf("list runs: root: %w", err)
		}
		prefix, decode = runRootPrefix(scope, f.RootID), func(k []byte) (string, error) {
			_, _, created, id, err := decodeRunRootKey(k)
			return since(id, created, err)
		}
	}
	out, err := s.indexedRuns(ctx, scope, prefix, decode, f.match, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("list runs %s: %w", scope, err)
	}
	return out, nil
}

// errPastRange, from an index walk's decode, ends the walk there without an error.
var errPastRange = errors.New("past the range")

// indexedRuns reads, from one snapshot, the runs an index under prefix names (decode gives a
// key's run id, or errPastRange to stop), in key order, keeping those match accepts (nil: all)
// until limit are kept (0 or less: all).
func (s *Store) indexedRuns(ctx context.Context, scope string, prefix []byte, decode func(k []byte) (string, error), match func(*Run) bool, limit int) ([]Run, error) {
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
		id, err := decode(k)
		if errors.Is(err, errPastRange) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		run, err := indexedRun(r, scope, id)
		if err != nil {
			return false, err
		}
		if match == nil || match(&run) {
			out = append(out, run)
		}
		return limit <= 0 || len(out) < limit, nil
	})
	if err != nil {
		return nil, err
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
