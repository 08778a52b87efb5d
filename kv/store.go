package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// PebbleFormatMajorVersion is the Pebble on-disk format version the store is opened with (24:
// FormatValueSeparation, the newest that pebble v2.1.7 supports).
//
// It is pinned rather than left to Pebble because a format version is a one-way ratchet: once
// a store is opened at version N, binaries whose Pebble only knows versions below N cannot open
// it. Pebble's own default moves with every Pebble release, so a routine dependency bump could
// strand users who roll back. Pinning makes a format upgrade an explicit change here, made
// together with a release note that downgrades past it are not possible. A store already at a
// higher version (written by a newer heirloom) still opens while this Pebble supports it.
const PebbleFormatMajorVersion = uint64(pebble.FormatValueSeparation)

// pebbleDirName is the sub-directory of the data directory that holds the Pebble database; the
// data directory itself holds the lock file and room for files that are not Pebble's.
const pebbleDirName = "pebble"

// Store is heirloom's durable store: sessions, their lineage and their transcript turns, kept
// in Pebble. Create it with NewStore, then Open it; Close releases it.
//
// Every method is safe for concurrent use. Reads take no lock shared with writers and see a
// consistent point-in-time view; operations that read, then write (every write) are serialised
// by one mutex. Every write is one batch, committed with Sync before the method returns, so
// anything a method acknowledged survives a crash; a write whose context is marked Unsynced
// is made durable by the group sync soon after (see Unsynced). Calls made before Open or after
// Close return an error wrapping ErrClosed.
type Store struct {
	// Dir is the data directory, set by NewStore. Open creates it (mode 0700, parents too) and
	// holds an exclusive lock on it until Close. Changing it while open has no effect.
	Dir string

	// FS, when non-nil, is the filesystem the database's files are kept on instead of the
	// operating system's; the directory lock is then not taken (it guards against other
	// processes). Tests use it to simulate crashes and failing disks with Pebble's own
	// crash-testing filesystems. Set it before Open.
	FS vfs.FS

	// Now returns the current time. It stamps CreatedAt and UpdatedAt, once per write. NewStore
	// sets it to time.Now; nil also means time.Now.
	Now func() time.Time

	// Logf, when non-nil, receives the storage engine's error reports (failed background
	// flushes or compactions, slow disks), one message per call. Nil drops them. The engine's
	// informational messages are always dropped. An engine invariant failure is reported here
	// and then panics, as the engine cannot continue.
	Logf func(format string, args ...any)

	// Fault, when non-nil, is called before each step of a write (a record read or written
	// inside a transaction, and the commit) with the step's name, e.g. "write run"; an error
	// aborts the write with that error and nothing of it is stored. It exists for tests that
	// inject a failure at every step of a change to prove the change is atomic; nil otherwise.
	Fault func(step string) error

	// SyncEvery is the longest a write committed under Unsynced waits for the disk: what a
	// machine crash may lose of such writes. Zero: DefaultSyncEvery. SyncBytes of them waiting
	// start a sync at once; zero: DefaultSyncBytes. Set both before Open.
	SyncEvery time.Duration
	SyncBytes int

	// Reserve is the free space the store leaves on its filesystem: while less is free, writes
	// fail at once with ErrDiskFull (reads go on) and resume by themselves when space returns,
	// so Pebble never meets a full disk, which it cannot survive. Zero: DefaultReserve;
	// negative: no check. SpaceEvery is how often the free space is read (DefaultSpaceEvery
	// when zero); DiskFree, when non-nil, reads it instead of the filesystem (tests). Set them
	// before Open.
	Reserve    int64
	SpaceEvery time.Duration
	DiskFree   func(dir string) (free, total uint64, err error)

	// OnCommit, when non-nil, is called after every committed write that created or changed
	// sessions, runs or checkpoints, with those records as they were and are (see Change), in
	// commit order. It runs while the store's write lock is held, so it must return at once and
	// must not call the Store: hand the changes on (the engine turns them into its live feed).
	// Set it before the first write.
	OnCommit func([]Change)

	// Index, when non-nil, is the analysis the search index is built with: every stored turn
	// gets its postings in the batch that stores it. Set it before Open. When the store's index
	// was built under another version, or not at all, Open marks it due and Reindex builds it.
	Index Indexer
	// Ledger, when non-nil, keeps each session's facts ledger (a record of its own, read with
	// Store.Facts or a View) as its turns are stored, in the same batch. Set it before Open.
	Ledger FactFinder

	counts    counters     // see Stats
	compacted compactions  // see Health
	life      sync.RWMutex // read-held by every call while it runs; held by Open and Close
	mu        sync.Mutex   // serialises read-modify-write operations
	// Held under mu: a reindex is due or under way (ixBuilding), and the last turn key it has
	// indexed (ixPos; nil before the first). Turns past ixPos are left for the reindex.
	ixBuilding      bool
	ixRunning       bool
	ixPos           []byte
	ixDone, ixTotal uint64
	db              *pebble.DB                 // nil unless open
	gs              *groupSync                 // the group sync of Unsynced writes; nil unless open
	space           atomic.Pointer[spaceGuard] // set while open; Pebble's callbacks read it too
	lock            *os.File                   // the held lock file; nil unless open
}

// NewStore returns a Store for the data directory dir with defaults set. It touches nothing on
// disk; call Open.
func NewStore(dir string) *Store {
	return &Store{Dir: dir, Now: time.Now}
}

// Open creates the data directory if needed, locks it, opens the database and brings its
// schema up to SchemaVersion. It fails at once, with an error wrapping ErrLocked, when another
// process or Store holds the directory; with ErrSchemaTooNew when a newer heirloom wrote it.
// On failure everything Open took is released, and Open may be called again.
func (s *Store) Open() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.db != nil {
		return fmt.Errorf("open store %s: already open", s.Dir)
	}
	if s.Dir == "" {
		return fmt.Errorf("open store: dir required")
	}
	if err := mkdirAllSynced(s.fs(), s.Dir); err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	var lock *os.File
	if s.FS == nil {
		var err error
		if lock, err = lockDir(s.Dir); err != nil {
			return fmt.Errorf("open store: %w", err)
		}
	}
	db, err := pebble.Open(filepath.Join(s.Dir, pebbleDirName), s.pebbleOptions())
	if err != nil {
		_ = unlockDir(lock)
		return fmt.Errorf("open store %s: %w", s.Dir, err)
	}
	if err := migrate(db); err != nil {
		_ = db.Close()
		_ = unlockDir(lock)
		return fmt.Errorf("open store %s: %w", s.Dir, err)
	}
	if err := s.openIndex(db); err != nil {
		_ = db.Close()
		_ = unlockDir(lock)
		return fmt.Errorf("open store %s: search index: %w", s.Dir, err)
	}
	s.db, s.lock = db, lock
	s.startSync(db)
	s.startSpace()
	return nil
}

// fs is the filesystem the store's files are on: FS, or the operating system's.
func (s *Store) fs() vfs.FS {
	if s.FS != nil {
		return s.FS
	}
	return vfs.Default
}

// mkdirAllSynced creates dir and its missing parents (mode 0700) and syncs the directories
// that got a new entry, so that a machine crash right after cannot lose the data directory
// with everything Pebble synced inside it.
func mkdirAllSynced(fs vfs.FS, dir string) error {
	if _, err := fs.Stat(dir); err == nil {
		return nil
	}
	var parents []string // from dir's parent up to its closest existing ancestor
	for p := fs.PathDir(dir); ; p = fs.PathDir(p) {
		parents = append(parents, p)
		if _, err := fs.Stat(p); err == nil || fs.PathDir(p) == p {
			break
		}
	}
	if err := fs.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, p := range parents {
		d, err := fs.OpenDir(p)
		if err != nil {
			return err
		}
		err = d.Sync()
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("sync directory %s: %w", p, err)
		}
	}
	return nil
}

// Close waits for calls in progress, closes the database and releases the directory lock. It
// is safe to call more than once, and without Open.
func (s *Store) Close() error {
	s.life.Lock()
	defer s.life.Unlock()
	var errs []error
	if s.db != nil {
		s.stopSpace()
		if err := s.stopSync(s.db); err != nil {
			errs = append(errs, err)
		}
		if err := s.db.Close(); err != nil {
			errs = append(errs, err)
		}
		s.db = nil
	}
	if s.lock != nil {
		if err := unlockDir(s.lock); err != nil {
			errs = append(errs, err)
		}
		s.lock = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store %s: %w", s.Dir, err)
	}
	return nil
}

// Check proves the store can write durably and read back, for readiness probes: it writes a
// probe key with Sync and reads it. It returns an error wrapping ErrClosed when not open.
func (s *Store) Check(ctx context.Context) error {
	db, err := s.acquire(ctx)
	if err != nil {
		return fmt.Errorf("check store: %w", err)
	}
	defer s.release()
	if err := s.allowWrite(); err != nil {
		return fmt.Errorf("check store: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	want, err := json.Marshal(s.now().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("check store: %w", err)
	}
	if err := db.Set(probeKey, want, pebble.Sync); err != nil {
		return fmt.Errorf("check store %s: write probe: %w", s.Dir, err)
	}
	got, closer, err := db.Get(probeKey)
	if err != nil {
		return fmt.Errorf("check store %s: read probe: %w", s.Dir, err)
	}
	defer closer.Close()
	if !bytes.Equal(got, want) {
		return fmt.Errorf("check store %s: probe read back %q, wrote %q", s.Dir, got, want)
	}
	return nil
}

// Sync makes every write committed so far durable: those committed unsynced (see Unsynced)
// included. It returns an error wrapping ErrClosed when not open.
func (s *Store) Sync(ctx context.Context) error {
	db, err := s.acquire(ctx)
	if err != nil {
		return fmt.Errorf("sync store: %w", err)
	}
	defer s.release()
	// An empty log record committed with Sync syncs the write-ahead log up to it, and so every
	// write before it (Pebble's own checkpoints sync this way).
	if err := db.LogData(nil, pebble.Sync); err != nil {
		return fmt.Errorf("sync store %s: %w", s.Dir, err)
	}
	return nil
}

// acquire returns the open database and read-holds s.life until release, so Close waits for
// the call. It fails with ctx's error or ErrClosed. Never call it while already holding it:
// a waiting Close would deadlock the second read-hold.
func (s *Store) acquire(ctx context.Context) (*pebble.DB, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.life.RLock()
	if s.db == nil {
		s.life.RUnlock()
		return nil, ErrClosed
	}
	return s.db, nil
}

func (s *Store) release() { s.life.RUnlock() }

// fault runs the Fault hook for step, if one is set.
func (s *Store) fault(step string) error {
	if s.Fault == nil {
		return nil
	}
	if err := s.Fault(step); err != nil {
		return fmt.Errorf("%s: %w", step, err)
	}
	return nil
}

// commit commits b, after the Fault hook, and counts it: with Sync, or without waiting for
// the disk when ctx is Unsynced (the group sync makes it durable soon after).
func (s *Store) commit(ctx context.Context, b *pebble.Batch) error {
	if err := s.fault("commit"); err != nil {
		return err
	}
	if err := s.allowWrite(); err != nil {
		return err
	}
	unsynced := isUnsynced(ctx) && s.gs != nil
	// Counted before the commit, so that anyone who sees the batch's writes also sees it
	// counted; taken back if the commit fails.
	s.counts.commits.Add(1)
	opts := pebble.Sync
	if unsynced {
		s.counts.unsynced.Add(1)
		opts = pebble.NoSync
	}
	if err := b.Commit(opts); err != nil {
		s.counts.commits.Add(-1)
		if unsynced {
			s.counts.unsynced.Add(-1)
		}
		return err
	}
	if unsynced {
		s.gs.note(int64(b.Len()))
	}
	s.space.Load().wrote(b.Len())
	return nil
}

// now is the one timestamp of a write: Now, in UTC, without a monotonic reading.
func (s *Store) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

func (s *Store) pebbleOptions() *pebble.Options {
	listener := s.compacted.listener()
	return &pebble.Options{
		FormatMajorVersion: pebble.FormatMajorVersion(PebbleFormatMajorVersion),
		Logger:             pebbleLogger{logf: s.Logf},
		EventListener:      &listener,
		// A write the disk refuses frees the ballast and is tried once more (see onDiskFull).
		FS: vfs.OnDiskFull(s.fs(), s.onDiskFull),
	}
}

// pebbleLogger hands Pebble's error reports to Store.Logf and drops its chatter (it announces
// the WALs it finds on every open).
type pebbleLogger struct {
	logf func(format string, args ...any)
}

func (l pebbleLogger) Infof(format string, args ...any) {}

func (l pebbleLogger) Errorf(format string, args ...any) {
	if l.logf != nil {
		l.logf("pebble: "+format, args...)
	}
}

func (l pebbleLogger) Fatalf(format string, args ...any) {
	l.Errorf(format, args...)
	panic(fmt.Sprintf("pebble: "+format, args...))
}
