package kv

import (
	"context"
	"fmt"
)

// LatestFinishedRuns returns at most n of the runs session parentID asked for that finished
// (neither open nor refused), the newest first (by CreatedAt, then ID): what a block casts of a
// session's finished sub-agents. It walks the session's runs newest first and stops at the n-th
// finished one, so its cost is one record per run newer than that (the open and refused among
// them too), however many runs the session finished before. n of 0 or less returns none.
func (s *Store) LatestFinishedRuns(ctx context.Context, scope, parentID string, n int) ([]Run, error) {
	if err := checkRef(scope, parentID); err != nil {
		return nil, fmt.Errorf("latest finished runs: %w", err)
	}
	if n <= 0 {
		return []Run{}, nil
	}
	out, err := s.indexedRuns(ctx, scope, runParentPrefix(scope, parentID), func(k []byte) (string, error) {
		_, _, _, id, err := decodeRunParentKey(k)
		return id, err
	}, func(r *Run) bool { return !r.Open() && r.Status != RunRefused }, n)
	if err != nil {
		return nil, fmt.Errorf("latest finished runs of %s/%s: %w", scope, parentID, err)
	}
	return out, nil
}
