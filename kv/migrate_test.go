package kv

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// openAt opens a Store on dir for tests inside the package.
func openAt(t *testing.T, dir string) *Store {
	t.Helper()
	s := NewStore(dir)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// setSchema writes version v into the store at dir, which must be closed.
func setSchema(t *testing.T, dir string, v uint64) {
	t.Helper()
	db, err := pebble.Open(filepath.Join(dir, pebbleDirName), &pebble.Options{Logger: pebbleLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Set(schemaKey, encodeUint(v), pebble.Sync); err != nil {
		t.Fatal(err)
	}
}

func TestMigrations_MatchSchemaVersion(t *testing.T) {
	if len(migrations) != SchemaVersion {
		t.Fatalf("migrations: got %d, want SchemaVersion (%d)", len(migrations), SchemaVersion)
	}
}

func TestSchema_Fresh(t *testing.T) {
	s := openAt(t, t.TempDir())
	v, err := readSchema(s.db)
	if err != nil {
		t.Fatal(err)
	}
	if v != 1 {
		t.Fatalf("schema version: got %d, want 1", v)
	}
}

func TestSchema_Upgrade(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	setSchema(t, dir, 0)
	s = openAt(t, dir)
	v, err := readSchema(s.db)
	if err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion {
		t.Fatalf("schema version after upgrade: got %d, want %d", v, SchemaVersion)
	}
}

func TestSchema_TooNew(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	setSchema(t, dir, SchemaVersion+1)

	err := s.Open()
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("open: got %v, want ErrSchemaTooNew", err)
	}
	// The half-failed Open released everything: the Store is closed and the lock is free, so
	// another Store gets the same answer rather than ErrLocked.
	if s.db != nil || s.lock != nil {
		t.Fatalf("after failed open: got db %v, lock %v; want both nil", s.db, s.lock)
	}
	if err := NewStore(dir).Open(); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("second store: got %v, want ErrSchemaTooNew", err)
	}
	// Nothing was rewritten.
	db, err := pebble.Open(filepath.Join(dir, pebbleDirName), &pebble.Options{Logger: pebbleLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := readSchema(db); err != nil || v != SchemaVersion+1 {
		t.Fatalf("schema version after refusal: got %d, %v; want %d, nil", v, err, SchemaVersion+1)
	}
}

func TestSchema_Foreign(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(filepath.Join(dir, pebbleDirName), &pebble.Options{Logger: pebbleLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("someone else's"), []byte("data"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s := NewStore(dir)
	if err := s.Open(); err == nil {
		s.Close()
		t.Fatal("open of a database without a schema version but with data: got nil error")
	}
}
