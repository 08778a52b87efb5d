package kv

import (
	"context"
	"errors"
	"fmt"
)

// RunsByIDPrefix returns the runs of scope whose id starts with prefix, in id order, at most
// limit (0 or less: all): what finds a run from the start of its id (`heirloom runs show` with
// the shortened id its table shows). It walks the run records' own keys from prefix and reads
// only the runs that match, so its cost does not grow with the runs of the scope. An empty
// prefix is an error.
func (s *Store) RunsByIDPrefix(ctx context.Context, scope, prefix string, limit int) ([]Run, error) {
	if err := checkScope(scope); err != nil {
		return nil, fmt.Errorf("runs by id prefix: %w", err)
	}
	if prefix == "" {
		return nil, errors.New("runs by id prefix: empty prefix")
	}
	base := len(runKey(scope, ""))
	out, err := s.indexedRuns(ctx, scope, runKey(scope, prefix), func(k []byte) (string, error) {
		return string(k[base:]), nil
	}, nil, limit)
	if err != nil {
		return nil, fmt.Errorf("runs of %s whose id starts with %q: %w", scope, prefix, err)
	}
	return out, nil
}
