package kv

import (
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// The sweeps of a run's lifecycle run over every scope (OpenClaw files each agent's sessions
// under its own): these name the scopes that have something to sweep, one seek per scope, so a
// sweep never walks a scope's runs to find out there is nothing to do.

// OpenRunScopes returns the scopes that have open runs (pending or running), in key order. The
// cost is one seek per scope returned.
func (s *Store) OpenRunScopes(ctx context.Context) ([]string, error) {
	out, err := s.indexScopes(ctx, runOpenAllPrefix(), runOpenPrefix, func(k []byte) (string, error) {
		scope, _, _, err := decodeRunOpenKey(k)
		return scope, err
	})
	if err != nil {
		return nil, fmt.Errorf("scopes with open runs: %w", err)
	}
	return out, nil
}

// FullResultScopes returns the scopes that have finished runs still holding their full result
// (see FullResultRuns), in key order. The cost is one seek per scope returned.
func (s *Store) FullResultScopes(ctx context.Context) ([]string, error) {
	out, err := s.indexScopes(ctx, runResultAllPrefix(), runResultPrefix, func(k []byte) (string, error) {
		scope, _, _, err := decodeRunResultKey(k)
		return scope, err
	})
	if err != nil {
		return nil, fmt.Errorf("scopes with full results: %w", err)
	}
	return out, nil
}

// indexScopes lists the scopes of the index under all: it reads the first key, takes its
// scope, then seeks past that scope's entries (scopePrefix) to the next.
func (s *Store) indexScopes(ctx context.Context, all []byte, scopePrefix func(scope string) []byte, scopeOf func(k []byte) (string, error)) (out []string, err error) {
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release()
	it, err := s.counted(db).NewIter(&pebble.IterOptions{LowerBound: all, UpperBound: prefixEnd(all)})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, it.Close()) }()
	out = []string{}
	for ok := it.First(); ok; ok = it.SeekGE(prefixEnd(scopePrefix(out[len(out)-1]))) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		scope, err := scopeOf(it.Key())
		if err != nil {
			return nil, err
		}
		out = append(out, scope)
	}
	return out, it.Error()
}
