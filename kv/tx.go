package kv

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Tx is one atomic change to sessions and runs, made inside Store.Update. Reads through it see
// the store as it stood when the change began plus the change's own writes; every write lands
// in one synced batch when the function given to Update returns nil, or not at all. All its
// writes share one timestamp (UpdatedAt). A Tx is valid only inside that function and is not
// safe for concurrent use.
//
// A change that must hold together is one Tx: pairing a run with its sub-agent session, or
// correcting a provisional pairing (two runs swap children and both sessions take their new
// parents). A crash or an error can then leave the store before the change or after it, never
// in between.
type Tx struct {
	s   *Store
	b   *pebble.Batch // indexed: reads see the batch's own writes
	r   countedReader // reads through b
	now time.Time
	// changes are the records written, for Store.OnCommit (collected only when it is set).
	changes []Change
}

// Update runs fn with a Tx and commits what it wrote in one synced batch. If fn returns an
// error nothing is written and that error is returned as is. Writes of other callers wait
// until Update returns. fn must not call the Store's own methods (it would deadlock): it uses
// the Tx.
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) error {
	return s.update(ctx, true, fn)
}

// update is Update. A change of one record, which reads it before writing it, needs no
// indexed batch (one that can read its own writes, at the cost of an index per write): it
// reads the database, which no other writer changes while s.mu is held.
func (s *Store) update(ctx context.Context, indexed bool, fn func(tx *Tx) error) error {
	db, err := s.acquire(ctx)
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	defer s.release()
	s.mu.Lock()
	defer s.mu.Unlock()

	var b *pebble.Batch
	var r pebble.Reader = db
	if indexed {
		b = db.NewIndexedBatch()
		r = b
	} else {
		b = db.NewBatch()
	}
	defer b.Close()
	tx := &Tx{s: s, b: b, r: s.counted(r), now: s.now()}
	if err := fn(tx); err != nil {
		return err
	}
	if b.Empty() {
		return nil
	}
	if err := s.commit(ctx, b); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	s.observe(tx.changes)
	return nil
}

// GetSession returns the session (scope, id) as the transaction sees it, or an error wrapping
// ErrNotFound.
func (tx *Tx) GetSession(scope, id string) (Session, error) {
	if err := checkRef(scope, id); err != nil {
		return Session{}, fmt.Errorf("get session: %w", err)
	}
	if err := tx.s.fault("read session"); err != nil {
		return Session{}, err
	}
	sess, ok, err := getSession(tx.r, scope, id)
	if err == nil && !ok {
		err = ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("get session %s/%s: %w", scope, id, err)
	}
	return sess, nil
}

// UpdateSession is Store.UpdateSession inside the transaction: fn receives the session as the
// transaction sees it (or a zero Session with Scope and ID set, exists false) and changes it;
// an error from fn is returned as is and nothing is put. It returns the session as it will be
// written.
func (tx *Tx) UpdateSession(scope, id string, fn func(sess *Session, exists bool) error) (Session, error) {
	if err := checkRef(scope, id); err != nil {
		return Session{}, fmt.Errorf("update session: %w", err)
	}
	if err := tx.s.fault("read session"); err != nil {
		return Session{}, err
	}
	old, exists, err := getSession(tx.r, scope, id)
	if err != nil {
		return Session{}, fmt.Errorf("update session %s/%s: %w", scope, id, err)
	}
	sess := old
	if !exists {
		sess = Session{Scope: scope, ID: id}
	}
	if err := fn(&sess, exists); err != nil {
		return Session{}, err
	}
	if sess.Scope != scope || sess.ID != id {
		return Session{}, fmt.Errorf("update session %s/%s: changed to %s/%s", scope, id, sess.Scope, sess.ID)
	}
	if err := tx.putSession(&sess, old, exists); err != nil {
		return Session{}, fmt.Errorf("update session %s/%s: %w", scope, id, err)
	}
	return sess, nil
}

// putSession validates sess, applies the store-owned fields from old (the record as the
// transaction sees it, when exists) and puts it with its index entries.
func (tx *Tx) putSession(sess *Session, old Session, exists bool) error {
	if err := sess.Validate(); err != nil {
		return err
	}
	if exists {
		sess.CreatedAt = old.CreatedAt
		sess.TurnCount = old.TurnCount
		sess.Prompts = old.Prompts
		sess.Files = old.Files
	} else {
		if sess.CreatedAt.IsZero() {
			sess.CreatedAt = tx.now
		}
		sess.CreatedAt = sess.CreatedAt.UTC()
		sess.TurnCount = 0
		sess.Prompts = 0
		sess.Files = nil
	}
	if err := tx.s.fault("write session"); err != nil {
		return err
	}
	var prev *Session
	if exists {
		prev = &old
	}
	if err := putSession(tx.b, sess, prev, tx.now); err != nil {
		return err
	}
	if tx.s.observing() {
		tx.changes = append(tx.changes, Change{Session: &SessionChange{Old: old, Existed: exists, New: *sess}})
	}
	return nil
}

// GetRun returns the run (scope, id) as the transaction sees it, or an error wrapping
// ErrNotFound.
func (tx *Tx) GetRun(scope, id string) (Run, error) {
	if err := checkRef(scope, id); err != nil {
		return Run{}, fmt.Errorf("get run: %w", err)
	}
	if err := tx.s.fault("read run"); err != nil {
		return Run{}, err
	}
	r, ok, err := getRun(tx.r, scope, id)
	if err == nil && !ok {
		err = ErrNotFound
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run %s/%s: %w", scope, id, err)
	}
	return r, nil
}

// RunByChild returns the run paired with sub-agent session childID as the transaction sees
// it, or an error wrapping ErrNotFound when none is.
func (tx *Tx) RunByChild(scope, childID string) (Run, error) {
	if err := checkRef(scope, childID); err != nil {
		return Run{}, fmt.Errorf("run by child: %w", err)
	}
	if err := tx.s.fault("read run"); err != nil {
		return Run{}, err
	}
	r, err := runByChild(tx.r, scope, childID)
	if err != nil {
		return Run{}, fmt.Errorf("run by child %s/%s: %w", scope, childID, err)
	}
	return r, nil
}

// UpdateRun is Store.UpdateRun inside the transaction. The rule that one child is paired with
// at most one run is checked against the transaction's view, so a change moves a child from
// one run to another by releasing it from the first before giving it to the second.
func (tx *Tx) UpdateRun(scope, id string, fn func(r *Run, exists bool) error) (Run, error) {
	if err := checkRef(scope, id); err != nil {
		return Run{}, fmt.Errorf("update run: %w", err)
	}
	if err := tx.s.fault("read run"); err != nil {
		return Run{}, err
	}
	old, exists, err := getRun(tx.r, scope, id)
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
		r.CreatedAt = tx.now
	}
	// Times are kept in UTC without a monotonic reading, so the run returned is the run stored.
	r.CreatedAt, r.StartedAt, r.EndedAt = r.CreatedAt.UTC(), r.StartedAt.UTC(), r.EndedAt.UTC()
	if err := r.Validate(); err != nil {
		return Run{}, fmt.Errorf("update run: %w", err)
	}
	if r.ChildID != "" && (!exists || old.ChildID != r.ChildID) {
		other, err := getIndexValue(tx.r, runChildKey(scope, r.ChildID))
		if err != nil {
			return Run{}, fmt.Errorf("update run %s/%s: %w", scope, id, err)
		}
		if other != "" && other != id {
			return Run{}, fmt.Errorf("update run %s/%s: child %s already paired with run %s", scope, id, r.ChildID, other)
		}
	}
	if err := tx.s.fault("write run"); err != nil {
		return Run{}, err
	}
	if err := putRun(tx.b, &r, old, exists); err != nil {
		return Run{}, fmt.Errorf("update run %s/%s: %w", scope, id, err)
	}
	if tx.s.observing() {
		tx.changes = append(tx.changes, Change{Run: &RunChange{Old: old, Existed: exists, New: r}})
	}
	return r, nil
}

// ClearFacts removes session (scope, id)'s facts ledger in the transaction's batch: what its
// turns stated no longer holds (the harness reset the session under its key).
func (tx *Tx) ClearFacts(scope, id string) error {
	if err := checkRef(scope, id); err != nil {
		return fmt.Errorf("clear facts: %w", err)
	}
	return tx.b.Delete(factsKey(scope, id), nil)
}
