package kv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/cockroachdb/pebble/v2"
)

// StoreDigest hashes every key and value the store holds, for the crash tests: two stores with the
// same digest hold the same records, indexes and postings.
func StoreDigest(ctx context.Context, s *Store) (string, error) {
	db, err := s.acquire(ctx)
	if err != nil {
		return "", err
	}
	defer s.release()
	it, err := db.NewIter(&pebble.IterOptions{})
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return "", err
		}
		h.Write(encodeUint(uint64(len(it.Key()))))
		h.Write(it.Key())
		h.Write(encodeUint(uint64(len(v))))
		h.Write(v)
	}
	if err := it.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// StoreDump returns every key and value, for the crash tests' failure messages.
func StoreDump(ctx context.Context, s *Store) (map[string]string, error) {
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release()
	it, err := db.NewIter(&pebble.IterOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for ok := it.First(); ok; ok = it.Next() {
		v, _ := it.ValueAndErr()
		out[string(it.Key())] = string(v)
	}
	return out, it.Close()
}
