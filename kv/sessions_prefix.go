package kv

import (
	"context"
	"errors"
	"fmt"
)

// SessionsByIDPrefix returns the sessions of scope whose id starts with prefix, in id order, at
// most limit (0 or less: all): what finds a session from the shortened id `heirloom sessions`
// shows. It walks the session records' own keys from prefix and decodes only those that match,
// so its cost does not grow with the sessions of the scope. An empty prefix is an error.
func (s *Store) SessionsByIDPrefix(ctx context.Context, scope, prefix string, limit int) ([]Session, error) {
	if err := checkScope(scope); err != nil {
		return nil, fmt.Errorf("sessions by id prefix: %w", err)
	}
	if prefix == "" {
		return nil, errors.New("sessions by id prefix: empty prefix")
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("sessions of %s whose id starts with %q: %w", scope, prefix, err)
	}
	defer s.release()
	snap := db.NewSnapshot()
	defer snap.Close()
	r := s.counted(snap)
	base := len(sessionKey(scope, ""))
	out := []Session{}
	err = scanPrefix(ctx, r, sessionKey(scope, prefix), func(k []byte) (bool, error) {
		sess, err := indexedSession(r, scope, string(k[base:]))
		if err != nil {
			return false, err
		}
		out = append(out, sess)
		return limit <= 0 || len(out) < limit, nil
	})
	if err != nil {
		return nil, fmt.Errorf("sessions of %s whose id starts with %q: %w", scope, prefix, err)
	}
	return out, nil
}
