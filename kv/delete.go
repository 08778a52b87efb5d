package kv

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Deleted is what DeleteSession removed.
type Deleted struct {
	Turns       uint64
	Checkpoints int
}

// DeleteSession removes the session (scope, id) with its turns, their search postings, its facts
// ledger, the blocks of context delivered to it (and to its sub-agents, which quote it) and its
// checkpoints, in one synced batch: for a user who pasted a secret. Its sub-agents
// stay (their ParentID then names no stored session), and so do the runs it asked for or was
// spawned by. It
// returns an error wrapping ErrNotFound when the session is not stored.
func (s *Store) DeleteSession(ctx context.Context, scope, id string) (Deleted, error) {
	if err := checkRef(scope, id); err != nil {
		return Deleted{}, fmt.Errorf("delete session: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return Deleted{}, fmt.Errorf("delete session %s/%s: %w", scope, id, err)
	}
	defer s.release()
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.deleteSession(ctx, db, scope, id)
	if err != nil {
		return Deleted{}, fmt.Errorf("delete session %s/%s: %w", scope, id, err)
	}
	return d, nil
}

func (s *Store) deleteSession(ctx context.Context, db *pebble.DB, scope, id string) (Deleted, error) {
	r := s.counted(db)
	sess, ok, err := getSession(r, scope, id)
	if err != nil {
		return Deleted{}, err
	}
	if !ok {
		return Deleted{}, ErrNotFound
	}
	b := db.NewBatch()
	defer b.Close()
	var d Deleted

	ix := s.indexWriter(r, b, scope, time.Time{}) // deletes only: no posting is written
	prefix := turnsPrefix(scope, id)
	err = scanRange(ctx, r, prefix, prefixEnd(prefix), func(k, v []byte) (bool, error) {
		_, _, seq, err := decodeTurnKey(k)
		if err != nil {
			return false, err
		}
		d.Turns++
		if ix == nil || !s.indexCovers(scope, id, seq) {
			return true, nil
		}
		t, err := decodeTurn(seq, v)
		if err != nil {
			return false, err
		}
		return true, ix.remove(id, &t)
	})
	if err != nil {
		return Deleted{}, err
	}
	if err := ix.flush(); err != nil {
		return Deleted{}, err
	}
	if err := b.DeleteRange(prefix, prefixEnd(prefix), nil); err != nil {
		return Deleted{}, err
	}
	sources := turnSourceKey(scope, id, "")
	if err := b.DeleteRange(sources, prefixEnd(sources), nil); err != nil {
		return Deleted{}, err
	}
	blocks := blocksPrefix(scope, id)
	if err := b.DeleteRange(blocks, prefixEnd(blocks), nil); err != nil {
		return Deleted{}, err
	}
	// Its sub-agents' delivery records quote it (their inherited blocks): they go too, so a
	// secret deleted with the session does not stay in them.
	for _, p := range [][]byte{childrenPrefix(scope, id), crossChildrenPrefix(scope, id)} {
		err := scanPrefix(ctx, r, p, func(k []byte) (bool, error) {
			cscope, cid := scope, ""
			if k[0] == prefixCrossChild {
				_, _, _, cs, c, err := decodeCrossChildKey(k)
				if err != nil {
					return false, err
				}
				cscope, cid = cs, c
			} else {
				_, _, _, c, err := decodeChildKey(k)
				if err != nil {
					return false, err
				}
				cid = c
			}
			kb := blocksPrefix(cscope, cid)
			return true, b.DeleteRange(kb, prefixEnd(kb), nil)
		})
		if err != nil {
			return Deleted{}, err
		}
	}

	var cps []Checkpoint
	err = scanCheckpoints(ctx, r, scope, id, func(c Checkpoint) bool {
		cps = append(cps, c)
		return true
	})
	if err != nil {
		return Deleted{}, err
	}
	for i := range cps {
		if err := deleteCheckpoint(b, &cps[i]); err != nil {
			return Deleted{}, err
		}
	}
	d.Checkpoints = len(cps)

	if err := b.Delete(factsKey(scope, id), nil); err != nil {
		return Deleted{}, err
	}
	if err := b.Delete(sessionKey(scope, id), nil); err != nil {
		return Deleted{}, err
	}
	if err := b.Delete(recencyKey(scope, sess.UpdatedAt, id), nil); err != nil {
		return Deleted{}, err
	}
	if sess.ParentID != "" {
		if err := b.Delete(parentLinkKey(&sess), nil); err != nil {
			return Deleted{}, err
		}
	}
	if err := s.commit(ctx, b); err != nil {
		return Deleted{}, err
	}
	return d, nil
}
