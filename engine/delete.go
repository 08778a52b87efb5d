package engine

import (
	"context"

	"github.com/heirloom-dev/heirloom/kv"
)

// DeleteSession removes session key of scope ("" means the engine's) with its turns, their
// search postings and its checkpoints (kv.Store.DeleteSession). It runs under the session's
// lock, the one stream consumption, hooks and inject take, so a delete lands between two events
// of the session, never inside one: an event either wrote all it writes before the delete (and
// it is removed) or starts after it, on a new record. A checkpoint of the session being
// written in the background is waited for first (within checkpointWait, or until ctx ends), so
// that it is removed too rather than stored after its session. The session's sub-agents and
// runs stay. It returns an error wrapping kv.ErrNotFound when the session is not stored.
func (e *Engine) DeleteSession(ctx context.Context, scope, key string) (kv.Deleted, error) {
	if scope == "" {
		scope = e.Scope
	}
	lk := lockKey(scope, key)
	unlock := e.locks.lock(lk)
	defer unlock()
	e.checkpoints.wait(ctx, lk, checkpointWait)
	return e.Store.DeleteSession(ctx, scope, key)
}
