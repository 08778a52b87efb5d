package kv

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Store-owned session fields. PutSession and UpdateSession apply these rules whatever the
// caller passed:
//   - CreatedAt: kept from the stored record; for a new session the caller's value, or the
//     write's timestamp when zero.
//   - UpdatedAt: the write's timestamp (Store.Now), on every write.
//   - TurnCount: kept from the stored record (0 for a new session); only AppendTurns moves it,
//     so a stale copy can never make two turns share a Seq.
//   - Prompts: kept from the stored record (0 for a new session); AppendTurns and UpsertTurns
//     count each user turn they append (a record stored again is not counted twice).
//   - Files: kept from the stored record (none for a new session); AppendTurns and UpsertTurns
//     keep it as turns are stored.
//
// Every other field, Transcript included, is the caller's and is written as given.

// SessionFilter selects sessions for ListSessions. Each zero field matches every session.
type SessionFilter struct {
	Harness     string // only sessions of this harness
	ProjectNorm string // only sessions of this normalised project
	ParentID    string // only direct children of this session
	Status      string // only sessions with this status (StatusActive, StatusEnded)
	TopLevel    bool   // only sessions without a parent in the scope (none, or one in another scope)
	Limit       int    // at most this many sessions; 0 or less means all
}

func (f *SessionFilter) match(s *Session) bool {
	return (f.Harness == "" || s.Harness == f.Harness) &&
		(f.ProjectNorm == "" || s.ProjectNorm == f.ProjectNorm) &&
		(f.ParentID == "" || s.ParentID == f.ParentID) &&
		(f.Status == "" || s.Status == f.Status) &&
		(!f.TopLevel || s.ParentID == "" || s.ParentScope != "")
}

// PutSession stores sess, replacing any stored session with its Scope and ID, except for the
// store-owned fields (see above). The recency and children indexes move with it in the same
// write. It returns sess's validation error, if any, without writing.
func (s *Store) PutSession(ctx context.Context, sess Session) error {
	if err := sess.Validate(); err != nil {
		return fmt.Errorf("put session: %w", err)
	}
	err := s.update(ctx, false, func(tx *Tx) error {
		old, exists, err := getSession(tx.r, sess.Scope, sess.ID)
		if err != nil {
			return err
		}
		return tx.putSession(&sess, old, exists)
	})
	if err != nil {
		return fmt.Errorf("put session %s/%s: %w", sess.Scope, sess.ID, err)
	}
	return nil
}

// UpdateSession reads, changes and writes one session atomically: no other write to the store
// runs in between. fn receives the stored session, or when there is none a zero Session with
// Scope and ID filled in and exists false. If fn returns an error nothing is written and that
// error is returned as is. fn must not change Scope or ID and must not call the Store. The
// store-owned fields follow the rules above; the indexes move as in PutSession. It returns the
// session as written. A change to several records at once is a Tx (see Update).
func (s *Store) UpdateSession(ctx context.Context, scope, id string, fn func(sess *Session, exists bool) error) (Session, error) {
	if err := checkRef(scope, id); err != nil {
		return Session{}, fmt.Errorf("update session: %w", err)
	}
	var out Session
	err := s.update(ctx, false, func(tx *Tx) error {
		var err error
		out, err = tx.UpdateSession(scope, id, fn)
		return err
	})
	if err != nil {
		return Session{}, err
	}
	return out, nil
}

// putSession stamps sess.UpdatedAt with now and puts sess and its index entries in b. prev is
// the stored record (nil when new): its recency entry and parent link are deleted when they
// moved.
func putSession(b *pebble.Batch, sess, prev *Session, now time.Time) error {
	if sess.ParentID != "" {
		if err := checkRef(sess.Scope, sess.ParentID); err != nil {
			return fmt.Errorf("parent: %w", err)
		}
	}
	sess.UpdatedAt = now
	v, err := encodeSession(sess)
	if err != nil {
		return err
	}
	if err := b.Set(sessionKey(sess.Scope, sess.ID), v, nil); err != nil {
		return err
	}
	if prev != nil {
		if !prev.UpdatedAt.Equal(sess.UpdatedAt) {
			if err := b.Delete(recencyKey(prev.Scope, prev.UpdatedAt, prev.ID), nil); err != nil {
				return err
			}
		}
		if prev.ParentID != "" && (prev.ParentID != sess.ParentID || prev.ParentScope != sess.ParentScope || !prev.CreatedAt.Equal(sess.CreatedAt)) {
			if err := b.Delete(parentLinkKey(prev), nil); err != nil {
				return err
			}
		}
	}
	if err := b.Set(recencyKey(sess.Scope, sess.UpdatedAt, sess.ID), nil, nil); err != nil {
		return err
	}
	if sess.ParentID != "" {
		return b.Set(parentLinkKey(sess), nil, nil)
	}
	return nil
}

// GetSession returns the session (scope, id), or an error wrapping ErrNotFound.
func (s *Store) GetSession(ctx context.Context, scope, id string) (Session, error) {
	if err := checkRef(scope, id); err != nil {
		return Session{}, fmt.Errorf("get session: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return Session{}, fmt.Errorf("get session %s/%s: %w", scope, id, err)
	}
	defer s.release()
	sess, ok, err := getSession(s.counted(db), scope, id)
	if err == nil && !ok {
		err = ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("get session %s/%s: %w", scope, id, err)
	}
	return sess, nil
}

// ListSessions returns the sessions of scope that match f, most recently updated first (ties
// by ID). No sessions is an empty result, not an error. The cost is one index step per session
// of the scope until Limit matches are found.
func (s *Store) ListSessions(ctx context.Context, scope string, f SessionFilter) ([]Session, error) {
	if err := checkScope(scope); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sessions %s: %w", scope, err)
	}
	defer s.release()
	snap := db.NewSnapshot()
	defer snap.Close()

	r := s.counted(snap)
	out := []Session{}
	err = scanPrefix(ctx, r, recencyPrefix(scope), func(k []byte) (bool, error) {
		_, _, id, err := decodeRecencyKey(k)
		if err != nil {
			return false, err
		}
		sess, err := indexedSession(r, scope, id)
		if err != nil {
			return false, err
		}
		if f.match(&sess) {
			out = append(out, sess)
		}
		return f.Limit <= 0 || len(out) < f.Limit, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions %s: %w", scope, err)
	}
	return out, nil
}

// Children returns the sessions whose ParentID is parentID, oldest first (by CreatedAt, then
// ID), those of its scope first, then those in other scopes (a sub-agent spawned under another
// OpenClaw agent; its Scope says which). It returns an error wrapping ErrNotFound when the parent
// is not stored; a stored parent without children gives an empty result.
func (s *Store) Children(ctx context.Context, scope, parentID string) ([]Session, error) {
	if err := checkRef(scope, parentID); err != nil {
		return nil, fmt.Errorf("list children: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("list children of %s/%s: %w", scope, parentID, err)
	}
	defer s.release()
	snap := db.NewSnapshot()
	defer snap.Close()

	r := s.counted(snap)
	if _, ok, err := getSession(r, scope, parentID); err != nil || !ok {
		if err == nil {
			err = ErrNotFound
		}
		return nil, fmt.Errorf("list children of %s/%s: %w", scope, parentID, err)
	}
	out := []Session{}
	err = scanPrefix(ctx, r, childrenPrefix(scope, parentID), func(k []byte) (bool, error) {
		_, _, _, id, err := decodeChildKey(k)
		if err != nil {
			return false, err
		}
		sess, err := indexedSession(r, scope, id)
		if err != nil {
			return false, err
		}
		out = append(out, sess)
		return true, nil
	})
	if err == nil {
		err = scanPrefix(ctx, r, crossChildrenPrefix(scope, parentID), func(k []byte) (bool, error) {
			_, _, _, childScope, id, err := decodeCrossChildKey(k)
			if err != nil {
				return false, err
			}
			sess, err := indexedSession(r, childScope, id)
			if err != nil {
				return false, err
			}
			out = append(out, sess)
			return true, nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("list children of %s/%s: %w", scope, parentID, err)
	}
	return out, nil
}

// getSession reads one session; ok is false when it is not stored.
func getSession(r pebble.Reader, scope, id string) (Session, bool, error) {
	return getRecord(r, sessionKey(scope, id), decodeSession)
}

// indexedSession reads a session an index entry points at (see indexedRecord).
func indexedSession(r pebble.Reader, scope, id string) (Session, error) {
	return indexedRecord(r, "session", scope, id, sessionKey(scope, id), decodeSession)
}

// scanPrefix calls fn with each key starting with prefix, in order, until fn returns false or
// an error. It checks ctx every so often.
func scanPrefix(ctx context.Context, r pebble.Reader, prefix []byte, fn func(k []byte) (bool, error)) (err error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, it.Close()) }()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		more, err := fn(it.Key())
		if err != nil || !more {
			return err
		}
	}
	return it.Error()
}
