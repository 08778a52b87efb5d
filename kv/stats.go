package kv

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// Stats counts the work a Store has done since it was made: reads, records decoded and batches
// committed. Counters only grow. Tests take the difference around one operation to guard its
// complexity (a reply that must read a session once fails when it reads it twice), and main
// may export them as metrics.
type Stats struct {
	Gets      int64 // point reads of one key (records and index entries)
	Iterators int64 // range scans opened
	// Records decoded, by type: what a read cost beyond finding its keys.
	Sessions    int64
	Turns       int64
	Runs        int64
	Checkpoints int64
	Commits     int64 // batches committed (one per write method or transaction)
	// Of those, committed under Unsynced, and the group syncs that made them durable (or
	// failed to).
	Unsynced, Syncs, SyncErrors int64
}

// Sub returns the counts of s minus those of before: the work done between two snapshots.
func (s Stats) Sub(before Stats) Stats {
	return Stats{
		Gets: s.Gets - before.Gets, Iterators: s.Iterators - before.Iterators,
		Sessions: s.Sessions - before.Sessions, Turns: s.Turns - before.Turns,
		Runs: s.Runs - before.Runs, Checkpoints: s.Checkpoints - before.Checkpoints,
		Commits: s.Commits - before.Commits, Unsynced: s.Unsynced - before.Unsynced,
		Syncs: s.Syncs - before.Syncs, SyncErrors: s.SyncErrors - before.SyncErrors,
	}
}

// Stats returns a snapshot of the store's counters. Safe to call at any time.
func (s *Store) Stats() Stats {
	c := &s.counts
	return Stats{
		Gets: c.gets.Load(), Iterators: c.iters.Load(),
		Sessions: c.sessions.Load(), Turns: c.turns.Load(), Runs: c.runs.Load(),
		Checkpoints: c.checkpoints.Load(), Commits: c.commits.Load(),
		Unsynced: c.unsynced.Load(), Syncs: c.syncs.Load(), SyncErrors: c.syncErrors.Load(),
	}
}

// counters are a Store's Stats, updated atomically.
type counters struct {
	gets, iters                        atomic.Int64
	sessions, turns, runs, checkpoints atomic.Int64
	commits, unsynced                  atomic.Int64
	syncs, syncErrors                  atomic.Int64
}

// decoded counts one record of the type whose key starts with prefix.
func (c *counters) decoded(prefix byte) {
	switch prefix {
	case prefixSession:
		c.sessions.Add(1)
	case prefixTurn:
		c.turns.Add(1)
	case prefixRun:
		c.runs.Add(1)
	case prefixCheckpoint:
		c.checkpoints.Add(1)
	}
}

// countedReader is a pebble.Reader that counts the reads made through it. Every Store method
// reads through one (see Store.counted), so Stats sees all of them.
type countedReader struct {
	pebble.Reader
	c *counters
}

// counted wraps r so that reads through it are counted in s's Stats.
func (s *Store) counted(r pebble.Reader) countedReader {
	return countedReader{Reader: r, c: &s.counts}
}

func (r countedReader) Get(key []byte) ([]byte, io.Closer, error) {
	r.c.gets.Add(1)
	return r.Reader.Get(key)
}

func (r countedReader) NewIter(o *pebble.IterOptions) (*pebble.Iterator, error) {
	r.c.iters.Add(1)
	return r.Reader.NewIter(o)
}

func (r countedReader) NewIterWithContext(ctx context.Context, o *pebble.IterOptions) (*pebble.Iterator, error) {
	r.c.iters.Add(1)
	return r.Reader.NewIterWithContext(ctx, o)
}

// countDecoded counts a record of the type whose key starts with key[0], when r counts.
func countDecoded(r pebble.Reader, key []byte) {
	if cr, ok := r.(countedReader); ok && len(key) > 0 {
		cr.c.decoded(key[0])
	}
}
