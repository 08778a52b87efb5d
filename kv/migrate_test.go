package kv

import (
	"errors"
	"path/filepath"
	"slices"
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
	if v != SchemaVersion {
		t.Fatalf("schema version: got %d, want %d", v, SchemaVersion)
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

// TestSchema_Upgrade1To2 opens a store written at version 1 (runs without the run-parent and
// provisional-run indexes) and finds both built.
func TestSchema_Upgrade1To2(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir)
	ctx := t.Context()
	for _, r := range []Run{
		{ID: "t1", RootID: "root", ParentID: "root", Status: RunPending},
		{ID: "t2", RootID: "root", ParentID: "root:a", ChildID: "root:b", Provisional: true, Status: RunRunning},
		{ID: "t3", RootID: "root", ParentID: "root", ChildID: "root:a", Status: RunCompleted},
	} {
		if _, err := s.UpdateRun(ctx, "default", r.ID, func(run *Run, _ bool) error {
			r.Scope, r.Harness = "default", "claude-code"
			*run = r
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Back to version 1: no v or q keys.
	db, err := pebble.Open(filepath.Join(dir, pebbleDirName), &pebble.Options{Logger: pebbleLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []byte{prefixRunParent, prefixRunGuess} {
		if err := db.DeleteRange([]byte{p}, []byte{p + 1}, pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Set(schemaKey, encodeUint(1), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s = openAt(t, dir)
	if v, _ := readSchema(s.db); v != SchemaVersion {
		t.Fatalf("schema version after upgrade: got %d, want %d", v, SchemaVersion)
	}
	byRoot, err := s.ListRuns(ctx, "default", RunFilter{ParentID: "root"})
	if err != nil {
		t.Fatal(err)
	}
	if got := runIDs(byRoot); !slices.Equal(got, []string{"t3", "t1"}) {
		t.Errorf("runs of parent root: got %v, want [t3 t1]", got)
	}
	byChild, err := s.ListRuns(ctx, "default", RunFilter{ParentID: "root:a"})
	if err != nil {
		t.Fatal(err)
	}
	if got := runIDs(byChild); !slices.Equal(got, []string{"t2"}) {
		t.Errorf("runs of parent root:a: got %v, want [t2]", got)
	}
	guessed, err := s.ProvisionalRuns(ctx, "default", "root")
	if err != nil {
		t.Fatal(err)
	}
	if got := runIDs(guessed); !slices.Equal(got, []string{"t2"}) {
		t.Errorf("provisional runs: got %v, want [t2]", got)
	}
}

func runIDs(list []Run) []string {
	var ids []string
	for _, r := range list {
		ids = append(ids, r.ID)
	}
	return ids
}
