package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// pruneBatchSize bounds the index entries one PruneCheckpoints batch examines while it holds
// the store's write lock, so writers (hooks) wait for at most one small batch.
const pruneBatchSize = 256

// PutCheckpoint stores c as a new checkpoint and returns it as stored. It never reads and
// rewrites another record, so concurrent writers, of one session or many, never lose one
// another's checkpoints. It returns c's validation error, if any, without writing. The session
// need not be stored.
//
// When c.CreatedAt is zero it is set from Store.Now; it is kept in UTC. When c.ID is empty
// PutCheckpoint assigns "<T>-<N>": T is CreatedAt as 16 hex digits (UnixNano with the sign bit
// flipped, so T sorts as time does), and N, 8 hex digits, is one more than the greatest N a
// checkpoint of the scope already has with the same T (0 when none), found by one seek under
// the store's write lock. Assigned IDs are therefore unique in the scope even for writers
// stamped with the same nanosecond, across restarts too, and sort by CreatedAt, then by write
// order. When c.ID is given it is kept; a stored checkpoint with that ID is replaced, its
// index entries moved in the same batch.
//
// The record and its index entries (its session's, its project's when ProjectNorm is set, and
// the age index pruning walks) land in one synced batch.
func (s *Store) PutCheckpoint(ctx context.Context, c Checkpoint) (Checkpoint, error) {
	if err := c.Validate(); err != nil {
		return Checkpoint{}, fmt.Errorf("put checkpoint: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("put checkpoint %s/%s: %w", c.Scope, c.SessionID, err)
	}
	defer s.release()
	s.mu.Lock()
	defer s.mu.Unlock()

	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.now()
		if !keyTimeOK(c.CreatedAt) {
			return Checkpoint{}, fmt.Errorf("put checkpoint %s/%s: clock reads %v, which a key cannot hold", c.Scope, c.SessionID, c.CreatedAt)
		}
	}
	c.CreatedAt = c.CreatedAt.UTC()
	var old *Checkpoint
	if c.ID == "" {
		if c.ID, err = freeCheckpointID(s.counted(db), c.Scope, c.CreatedAt); err != nil {
			return Checkpoint{}, fmt.Errorf("put checkpoint %s/%s: %w", c.Scope, c.SessionID, err)
		}
	} else {
		prev, ok, err := getCheckpoint(s.counted(db), c.Scope, c.ID)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("put checkpoint %s/%s: %w", c.Scope, c.ID, err)
		}
		if ok {
			old = &prev
		}
	}

	b := db.NewBatch()
	defer b.Close()
	if old != nil {
		// Deleted first: a later Set of the same key in the batch wins.
		if err := deleteCheckpoint(b, old); err != nil {
			return Checkpoint{}, fmt.Errorf("put checkpoint %s/%s: %w", c.Scope, c.ID, err)
		}
	}
	if err := putCheckpoint(b, &c); err != nil {
		return Checkpoint{}, fmt.Errorf("put checkpoint %s/%s: %w", c.Scope, c.ID, err)
	}
	if err := s.commit(ctx, b); err != nil {
		return Checkpoint{}, fmt.Errorf("put checkpoint %s/%s: %w", c.Scope, c.ID, err)
	}
	if s.observing() {
		written := c
		s.observe([]Change{{Checkpoint: &written}})
	}
	return c, nil
}

// freeCheckpointID returns the ID "<T>-<N>" for created with N one more than the greatest N
// already used with that T in scope (0 when none): one backward seek over the IDs sharing T.
// Any used N greater than the one found would sort after it, so the result is free; the
// caller holds s.mu, so no other writer can take it before the commit.
func freeCheckpointID(r pebble.Reader, scope string, created time.Time) (id string, err error) {
	t := fmt.Sprintf("%016x-", timeBits(created))
	lower := checkpointKey(scope, t)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(lower)})
	if err != nil {
		return "", err
	}
	defer func() { err = errors.Join(err, it.Close()) }()
	next := uint64(0)
	for ok := it.Last(); ok; ok = it.Prev() {
		_, used, err := decodeCheckpointKey(it.Key())
		if err != nil {
			return "", err
		}
		if n, ok := assignedN(used[len(t):]); ok {
			next = n + 1
			break
		}
	}
	if err := it.Error(); err != nil {
		return "", err
	}
	if next > math.MaxUint32 {
		return "", fmt.Errorf("no free checkpoint id at %v", created)
	}
	return fmt.Sprintf("%s%08x", t, next), nil
}

// assignedN parses the N of an assigned ID: exactly 8 lowercase hex digits.
func assignedN(s string) (uint64, bool) {
	if len(s) != 8 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			n = n<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			n = n<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return n, true
}

// putCheckpoint puts c and its index entries in b.
func putCheckpoint(b *pebble.Batch, c *Checkpoint) error {
	v, err := encodeCheckpoint(c)
	if err != nil {
		return err
	}
	if err := b.Set(checkpointKey(c.Scope, c.ID), v, nil); err != nil {
		return err
	}
	if err := b.Set(checkpointSessionKey(c.Scope, c.SessionID, c.CreatedAt, c.ID), nil, nil); err != nil {
		return err
	}
	if c.ProjectNorm != "" {
		if err := b.Set(checkpointProjectKey(c.Scope, c.ProjectNorm, c.CreatedAt, c.ID), []byte(c.SessionID), nil); err != nil {
			return err
		}
	}
	return b.Set(checkpointAgeKey(c.Scope, c.CreatedAt, c.ID), []byte(c.SessionID), nil)
}

// deleteCheckpoint puts the deletion of the stored c and its index entries in b.
func deleteCheckpoint(b *pebble.Batch, c *Checkpoint) error {
	if err := b.Delete(checkpointKey(c.Scope, c.ID), nil); err != nil {
		return err
	}
	if err := b.Delete(checkpointSessionKey(c.Scope, c.SessionID, c.CreatedAt, c.ID), nil); err != nil {
		return err
	}
	if c.ProjectNorm != "" {
		if err := b.Delete(checkpointProjectKey(c.Scope, c.ProjectNorm, c.CreatedAt, c.ID), nil); err != nil {
			return err
		}
	}
	return b.Delete(checkpointAgeKey(c.Scope, c.CreatedAt, c.ID), nil)
}

// GetCheckpoint returns the checkpoint (scope, id), or an error wrapping ErrNotFound.
func (s *Store) GetCheckpoint(ctx context.Context, scope, id string) (Checkpoint, error) {
	if err := checkRef(scope, id); err != nil {
		return Checkpoint{}, fmt.Errorf("get checkpoint: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("get checkpoint %s/%s: %w", scope, id, err)
	}
	defer s.release()
	c, ok, err := getCheckpoint(s.counted(db), scope, id)
	if err == nil && !ok {
		err = ErrNotFound
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("get checkpoint %s/%s: %w", scope, id, err)
	}
	return c, nil
}

// LatestCheckpoint returns the newest checkpoint of session sessionID (greatest CreatedAt,
// then ID), or an error wrapping ErrNotFound when it has none. The session itself need not be
// stored. The cost is one index seek.
func (s *Store) LatestCheckpoint(ctx context.Context, scope, sessionID string) (Checkpoint, error) {
	list, err := s.checkpoints(ctx, "latest checkpoint", scope, sessionID, 1)
	if err == nil && len(list) == 0 {
		err = fmt.Errorf("latest checkpoint of %s/%s: %w", scope, sessionID, ErrNotFound)
	}
	if err != nil {
		return Checkpoint{}, err
	}
	return list[0], nil
}

// Checkpoints returns the checkpoints of session sessionID, newest first (by CreatedAt, then
// ID, descending), at most limit of them (0 or less: all). A session without checkpoints,
// stored or not, gives an empty result, not an error. The cost is one index step per result.
func (s *Store) Checkpoints(ctx context.Context, scope, sessionID string, limit int) ([]Checkpoint, error) {
	return s.checkpoints(ctx, "list checkpoints", scope, sessionID, limit)
}

func (s *Store) checkpoints(ctx context.Context, op, scope, sessionID string, limit int) ([]Checkpoint, error) {
	if err := checkRef(scope, sessionID); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s of %s/%s: %w", op, scope, sessionID, err)
	}
	defer s.release()
	snap := db.NewSnapshot()
	defer snap.Close()
	out := []Checkpoint{}
	err = scanCheckpoints(ctx, s.counted(snap), scope, sessionID, func(c Checkpoint) bool {
		out = append(out, c)
		return limit <= 0 || len(out) < limit
	})
	if err != nil {
		return nil, fmt.Errorf("%s of %s/%s: %w", op, scope, sessionID, err)
	}
	return out, nil
}

// LatestCheckpointWith returns the newest checkpoint with trigger among the session's newest
// within checkpoints (0 or less: all of them), or an error wrapping ErrNotFound when none of
// them has it. The cost is one index step and one decode per checkpoint looked at, newest
// first, so it stops at the first match.
func (s *Store) LatestCheckpointWith(ctx context.Context, scope, sessionID, trigger string, within int) (Checkpoint, error) {
	if err := checkRef(scope, sessionID); err != nil {
		return Checkpoint{}, fmt.Errorf("latest %s checkpoint: %w", trigger, err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("latest %s checkpoint of %s/%s: %w", trigger, scope, sessionID, err)
	}
	defer s.release()
	snap := db.NewSnapshot()
	defer snap.Close()
	var found *Checkpoint
	seen := 0
	err = scanCheckpoints(ctx, s.counted(snap), scope, sessionID, func(c Checkpoint) bool {
		seen++
		if c.Trigger == trigger {
			found = &c
			return false
		}
		return within <= 0 || seen < within
	})
	if err == nil && found == nil {
		err = ErrNotFound
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("latest %s checkpoint of %s/%s: %w", trigger, scope, sessionID, err)
	}
	return *found, nil
}

// scanCheckpoints calls fn with the session's checkpoints read through r, newest first, until
// fn returns false.
func scanCheckpoints(ctx context.Context, r pebble.Reader, scope, sessionID string, fn func(c Checkpoint) bool) error {
	prefix := checkpointSessionPrefix(scope, sessionID)
	return scanRange(ctx, r, prefix, prefixEnd(prefix), func(k, _ []byte) (bool, error) {
		_, _, _, id, err := decodeCheckpointSessionKey(k)
		if err != nil {
			return false, err
		}
		c, err := indexedCheckpoint(r, scope, id)
		if err != nil {
			return false, err
		}
		return fn(c), nil
	})
}

// LatestProjectCheckpoint returns the newest checkpoint (by CreatedAt, then ID) of any session
// of scope whose ProjectNorm is projectNorm, created at or after since, skipping the
// checkpoints of session exclude (the session asking; "" skips none). A zero since, or one
// before any time a key holds, sets no lower bound. It returns an error wrapping ErrNotFound
// when there is none. Only scope's checkpoints are ever considered. The cost is one index seek,
// plus one step per newer checkpoint of the excluded session.
func (s *Store) LatestProjectCheckpoint(ctx context.Context, scope, projectNorm string, since time.Time, exclude string) (Checkpoint, error) {
	if err := checkScope(scope); err != nil {
		return Checkpoint{}, fmt.Errorf("latest project checkpoint: %w", err)
	}
	if err := checkRef(scope, projectNorm); err != nil {
		return Checkpoint{}, fmt.Errorf("latest project checkpoint %s: project: %w", scope, err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("latest project checkpoint %s/%s: %w", scope, projectNorm, err)
	}
	defer s.release()
	snap := db.NewSnapshot()
	defer snap.Close()

	prefix := checkpointProjectPrefix(scope, projectNorm)
	end := prefixEnd(prefix)
	if !since.IsZero() {
		end = checkpointProjectSinceEnd(scope, projectNorm, clampKeyTime(since))
	}
	var found Checkpoint
	ok := false
	r := s.counted(snap)
	err = scanRange(ctx, r, prefix, end, func(k, v []byte) (bool, error) {
		if exclude != "" && string(v) == exclude {
			return true, nil
		}
		_, _, _, id, err := decodeCheckpointProjectKey(k)
		if err != nil {
			return false, err
		}
		found, err = indexedCheckpoint(r, scope, id)
		ok = err == nil
		return false, err
	})
	if err == nil && !ok {
		err = ErrNotFound
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("latest project checkpoint %s/%s: %w", scope, projectNorm, err)
	}
	return found, nil
}

// PruneCheckpoints deletes the checkpoints of scope created before olderThan, except the
// newest keepPerSession of each session, which are kept whatever their age. A scope of ""
// prunes every scope; a zero olderThan deletes nothing. It returns how many it deleted; a
// negative keepPerSession is an error.
//
// It works in batches of at most pruneBatchSize index entries, each examined and committed
// (synced) under the store's write lock, which is released between batches: other writes wait
// for one batch at most, never for the whole prune, and Close may end a prune between batches
// (the count so far is returned with an error wrapping ErrClosed). Each record goes with all its
// index entries in one batch. The cost is one step per checkpoint older than olderThan,
// kept ones included, plus keepPerSession steps per session met in each batch.
func (s *Store) PruneCheckpoints(ctx context.Context, scope string, olderThan time.Time, keepPerSession int) (deleted int, err error) {
	name := scope
	if scope == "" {
		name = "(all scopes)"
	} else if err := checkScope(scope); err != nil {
		return 0, fmt.Errorf("prune checkpoints: %w", err)
	}
	if keepPerSession < 0 {
		return 0, fmt.Errorf("prune checkpoints %s: keep %d per session: want 0 or more", name, keepPerSession)
	}
	olderThan = clampKeyTime(olderThan)
	from := checkpointAgeAllPrefix()
	if scope != "" {
		from = checkpointAgePrefix(scope)
	}
	end := prefixEnd(from)
	for from != nil {
		n, next, err := s.pruneCheckpointBatch(ctx, from, end, olderThan, keepPerSession)
		deleted += n
		if err != nil {
			return deleted, fmt.Errorf("prune checkpoints %s: %w", name, err)
		}
		from = next
	}
	return deleted, nil
}

// pruneCheckpointBatch examines at most pruneBatchSize age-index entries in [from, end) and
// deletes, in one synced batch, those older than olderThan that are not among the newest keep
// of their session. It returns where the next batch starts, nil when the range is done.
func (s *Store) pruneCheckpointBatch(ctx context.Context, from, end []byte, olderThan time.Time, keep int) (deleted int, next []byte, err error) {
	db, err := s.acquire(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer s.release()
	s.mu.Lock() // every checkpoint write holds it: nothing moves under this batch
	defer s.mu.Unlock()

	it, err := db.NewIter(&pebble.IterOptions{LowerBound: from, UpperBound: end})
	if err != nil {
		return 0, nil, err
	}
	defer func() { err = errors.Join(err, it.Close()) }()
	b := db.NewBatch()
	defer b.Close()
	keeps := map[[2]string]keepBound{}
	steps := 0
	for ok := it.First(); ok; {
		if steps == pruneBatchSize {
			next = bytes.Clone(it.Key()) // not examined yet: the next batch starts with it
			break
		}
		steps++
		scope, created, id, err := decodeCheckpointAgeKey(it.Key())
		if err != nil {
			return 0, nil, err
		}
		if !created.Before(olderThan) {
			// The rest of this scope is younger; go on with the next scope, if any.
			rest := prefixEnd(checkpointAgePrefix(scope))
			if rest == nil {
				break
			}
			ok = it.SeekGE(rest)
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return 0, nil, err
		}
		sessionID := string(v)
		kept, err := keptCheckpoint(ctx, db, keeps, scope, sessionID, created, id, keep)
		if err != nil {
			return 0, nil, err
		}
		if !kept {
			c, err := indexedCheckpoint(db, scope, id)
			if err != nil {
				return 0, nil, err
			}
			if err := deleteCheckpoint(b, &c); err != nil {
				return 0, nil, err
			}
			deleted++
		}
		ok = it.Next()
	}
	if err := it.Error(); err != nil {
		return 0, nil, err
	}
	if deleted > 0 {
		if err := s.commit(ctx, b); err != nil {
			return 0, nil, err
		}
	}
	return deleted, next, nil
}

// keepBound is the session-index key of a session's keep-th newest checkpoint: entries at or
// before it (newer) are kept. all means the session has no more than keep, so all are kept.
type keepBound struct {
	key []byte
	all bool
}

// keptCheckpoint reports whether checkpoint id of session sessionID, created at created, is
// among the newest keep of its session. bounds caches each session's keepBound for one batch:
// deleting checkpoints beyond the bound never moves it, and no other writer runs meanwhile.
func keptCheckpoint(ctx context.Context, r pebble.Reader, bounds map[[2]string]keepBound, scope, sessionID string, created time.Time, id string, keep int) (bool, error) {
	if keep == 0 {
		return false, nil
	}
	at := [2]string{scope, sessionID}
	bound, ok := bounds[at]
	if !ok {
		bound.all = true
		n := 0
		prefix := checkpointSessionPrefix(scope, sessionID)
		err := scanRange(ctx, r, prefix, prefixEnd(prefix), func(k, _ []byte) (bool, error) {
			if n++; n < keep {
				return true, nil
			}
			bound = keepBound{key: bytes.Clone(k)}
			return false, nil
		})
		if err != nil {
			return false, err
		}
		bounds[at] = bound
	}
	if bound.all {
		return true, nil
	}
	return bytes.Compare(checkpointSessionKey(scope, sessionID, created, id), bound.key) <= 0, nil
}

// getCheckpoint reads one checkpoint; ok is false when it is not stored.
func getCheckpoint(r pebble.Reader, scope, id string) (Checkpoint, bool, error) {
	return getRecord(r, checkpointKey(scope, id), decodeCheckpoint)
}

// indexedCheckpoint reads a checkpoint an index entry points at (see indexedRecord).
func indexedCheckpoint(r pebble.Reader, scope, id string) (Checkpoint, error) {
	return indexedRecord(r, "checkpoint", scope, id, checkpointKey(scope, id), decodeCheckpoint)
}

// scanRange calls fn with each key in [lower, upper) and its value, in order, until fn returns
// false or an error. A nil upper means no bound. It checks ctx every so often.
func scanRange(ctx context.Context, r pebble.Reader, lower, upper []byte, fn func(k, v []byte) (bool, error)) (err error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
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
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		more, err := fn(it.Key(), v)
		if err != nil || !more {
			return err
		}
	}
	return it.Error()
}
