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

// What the package's external tests (kv_test) need of its insides: the upgrade fixtures'
// test reads the version a store was left at, and their generator flushes the memtable so a
// fixture holds sstables as well as a write-ahead log.

// StoredSchema returns the schema version stored in the open store s.
func StoredSchema(s *Store) (uint64, error) { return readSchema(s.db) }

// PebbleFormat returns the Pebble format major version the open store s is at.
func PebbleFormat(s *Store) uint64 { return uint64(s.db.FormatMajorVersion()) }

// Flush writes the open store's memtable to sstables, as Pebble does when it fills.
func Flush(s *Store) error { return s.db.Flush() }
