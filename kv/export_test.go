package kv

// What the package's external tests (kv_test) need of its insides: the upgrade fixtures'
// test reads the version a store was left at, and their generator flushes the memtable so a
// fixture holds sstables as well as a write-ahead log.

// StoredSchema returns the schema version stored in the open store s.
func StoredSchema(s *Store) (uint64, error) { return readSchema(s.db) }

// PebbleFormat returns the Pebble format major version the open store s is at.
func PebbleFormat(s *Store) uint64 { return uint64(s.db.FormatMajorVersion()) }

// Flush writes the open store's memtable to sstables, as Pebble does when it fills.
func Flush(s *Store) error { return s.db.Flush() }
