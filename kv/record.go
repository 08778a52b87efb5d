package kv

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// getRecord reads the value at key and decodes it; ok is false when the key is not stored.
func getRecord[T any](r pebble.Reader, key []byte, decode func([]byte) (T, error)) (rec T, ok bool, err error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	defer closer.Close()
	if rec, err = decode(v); err != nil {
		return rec, false, err
	}
	countDecoded(r, key)
	return rec, true, nil
}

// indexedRecord reads the record (a what, scope/id, at key) an index entry points at. Index
// entries are written in the same batch as their record, so a missing one means the store is
// damaged.
func indexedRecord[T any](r pebble.Reader, what, scope, id string, key []byte, decode func([]byte) (T, error)) (T, error) {
	rec, ok, err := getRecord(r, key, decode)
	if err == nil && !ok {
		err = fmt.Errorf("index names %s %s/%s, which is not stored", what, scope, id)
	}
	return rec, err
}
