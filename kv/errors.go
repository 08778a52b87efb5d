package kv

import "errors"

// Sentinel errors returned (wrapped, with the operation and the record's identity) by Store
// methods. Check them with errors.Is.
var (
	// ErrNotFound means the session a method names is not stored.
	ErrNotFound = errors.New("not found")

	// ErrLocked means another process (or another Store in this one) has the data directory
	// open. Open returns it at once instead of waiting.
	ErrLocked = errors.New("store locked")

	// ErrSchemaTooNew means the data directory was written by a newer heirloom whose schema
	// version this binary does not know. Nothing is changed on disk.
	ErrSchemaTooNew = errors.New("schema too new")

	// ErrClosed means the Store is not open: Open was not called, failed, or Close ran.
	ErrClosed = errors.New("store closed")
)
