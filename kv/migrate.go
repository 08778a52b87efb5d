package kv

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// SchemaVersion is the version of the key layout and value shapes (doc.go) that this binary
// reads and writes. Open upgrades older stores to it and refuses newer ones with
// ErrSchemaTooNew.
//
// Upgrades keep history, and a test proves it: testdata/upgrade keeps a store written at every
// schema version and Pebble format heirloom released (schema<V>-pebble<F>.tar.gz, with the
// .want of what it held), and TestUpgrade_Fixtures opens every one with the current code. So
// when SchemaVersion or PebbleFormatMajorVersion changes, write the new release's fixture
// (HEIRLOOM_WRITE_UPGRADE_FIXTURE=1 go test ./kv -run TestUpgrade_WriteFixture; the test fails
// until it exists) and keep every old one: never edit, regenerate or delete a released fixture.
const SchemaVersion = 3

// migration upgrades a store by one schema version. It reads through r (the database, before
// the upgrade) and puts every change in b, which Open commits with Sync together with the new
// schema version, so a migration either happens whole or not at all.
type migration func(r pebble.Reader, b *pebble.Batch) error

// migrations[v] upgrades a store from schema version v to v+1; len(migrations) must equal
// SchemaVersion. To change the layout: bump SchemaVersion, append one func, and describe the
// new layout in doc.go. Never edit or reorder a released entry.
var migrations = []migration{
	0: func(pebble.Reader, *pebble.Batch) error { return nil }, // a new, empty store: nothing to build
	1: indexRunsByParent,                                       // version 2: the run-parent (v) and provisional-run (q) indexes
	2: indexRunLifecycle,                                       // version 3: the open-run (a), active-children (g) and full-result (w) indexes
}

// indexRunLifecycle builds, for every stored run, its entries in the open-run, active-children
// and full-result indexes.
func indexRunLifecycle(r pebble.Reader, b *pebble.Batch) error {
	return eachStoredRun(r, func(run Run) error {
		return putRunLifecycle(b, &run, Run{}, false)
	})
}

// eachStoredRun calls fn for every run stored, in key order.
func eachStoredRun(r pebble.Reader, fn func(Run) error) error {
	prefix := []byte{prefixRun}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		run, err := decodeRun(v)
		if err != nil {
			return fmt.Errorf("run at %q: %w", it.Key(), err)
		}
		if err := fn(run); err != nil {
			return err
		}
	}
	return it.Error()
}

// indexRunsByParent builds, for every stored run, its entry in the runs-by-parent index and,
// when it is paired by an unconfirmed guess, in its root's provisional-run index.
func indexRunsByParent(r pebble.Reader, b *pebble.Batch) error {
	return eachStoredRun(r, func(run Run) error {
		if run.ParentID != "" {
			if err := b.Set(runParentKey(run.Scope, run.ParentID, run.CreatedAt, run.ID), nil, nil); err != nil {
				return err
			}
		}
		if run.provisionallyPaired() {
			return b.Set(provisionalKey(run.Scope, run.RootID, run.CreatedAt, run.ID), nil, nil)
		}
		return nil
	})
}

// migrate reads the store's schema version and runs the migrations from it up to
// SchemaVersion, each in its own synced batch.
func migrate(db *pebble.DB) error {
	if len(migrations) != SchemaVersion {
		return fmt.Errorf("schema: %d migrations for version %d", len(migrations), SchemaVersion)
	}
	v, err := readSchema(db)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return fmt.Errorf("schema version %d, this heirloom knows up to %d: %w", v, SchemaVersion, ErrSchemaTooNew)
	}
	for ; v < SchemaVersion; v++ {
		if err := runMigration(db, v); err != nil {
			return fmt.Errorf("migrate schema %d to %d: %w", v, v+1, err)
		}
	}
	return nil
}

func runMigration(db *pebble.DB, from uint64) error {
	b := db.NewBatch()
	defer b.Close()
	if err := migrations[from](db, b); err != nil {
		return err
	}
	if err := b.Set(schemaKey, encodeUint(from+1), nil); err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
}

// readSchema returns the stored schema version: 0 for a new, empty database. A database that
// holds keys but no schema version was not written by heirloom (or lost its metadata) and is
// refused rather than written into.
func readSchema(r pebble.Reader) (uint64, error) {
	b, closer, err := r.Get(schemaKey)
	if errors.Is(err, pebble.ErrNotFound) {
		it, err := r.NewIter(nil)
		if err != nil {
			return 0, fmt.Errorf("read schema version: %w", err)
		}
		empty := !it.First()
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return 0, fmt.Errorf("read schema version: %w", err)
		}
		if !empty {
			return 0, fmt.Errorf("no schema version, but the database holds data: not a heirloom store")
		}
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	defer closer.Close()
	v, err := decodeUint(b)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}
