package kv

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// DefaultSyncEvery is how long a write committed under Unsynced waits for the disk at most
// when Store.SyncEvery is zero: what a machine crash (not a process crash) may lose of them.
const DefaultSyncEvery = 100 * time.Millisecond

// DefaultSyncBytes is how many bytes of unsynced writes start a sync at once when
// Store.SyncBytes is zero.
const DefaultSyncBytes = 4 << 20

// unsyncedKey marks a context whose writes need not wait for the disk.
type unsyncedKey struct{}

// Unsynced returns ctx marked so that the store's writes made with it are committed without
// waiting for the disk: they are applied and readable at once, in the write-ahead log in
// commit order, and synced by the store's group sync within SyncEvery (or sooner, once
// SyncBytes of them wait, or by any synced write after them, which syncs the log up to
// itself). A process crash loses none of them once the log has written them out; a machine
// crash loses at most the last SyncEvery of them. Use it for writes nobody was told are
// durable: events read from a harness's stream, which a resync repairs.
func Unsynced(ctx context.Context) context.Context {
	return context.WithValue(ctx, unsyncedKey{}, true)
}

// isUnsynced reports whether ctx was marked by Unsynced.
func isUnsynced(ctx context.Context) bool {
	v, _ := ctx.Value(unsyncedKey{}).(bool)
	return v
}

// groupSync syncs the write-ahead log for the writes committed unsynced: on an interval, or
// at once when enough bytes wait. Started by Open, stopped by Close.
type groupSync struct {
	pending chan struct{} // holds a token while unsynced writes wait; cap 1
	full    chan struct{} // a token asks for a sync now; cap 1
	waiting atomic.Int64  // bytes committed unsynced since the last sync
	limit   int64         // waiting bytes that ask for a sync at once
	stop    chan struct{}
	done    chan struct{}
}

// startSync starts the group sync of db. Called by Open with s.life held.
func (s *Store) startSync(db *pebble.DB) {
	every := s.SyncEvery
	if every <= 0 {
		every = DefaultSyncEvery
	}
	g := &groupSync{pending: make(chan struct{}, 1), full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		limit: int64(s.SyncBytes)}
	if g.limit <= 0 {
		g.limit = DefaultSyncBytes
	}
	s.gs = g
	go s.syncLoop(db, g, every)
}

// stopSync stops the group sync and syncs what still waits. Called by Close with s.life
// held, before the database closes.
func (s *Store) stopSync(db *pebble.DB) error {
	g := s.gs
	if g == nil {
		return nil
	}
	close(g.stop)
	<-g.done
	s.gs = nil
	return db.LogData(nil, pebble.Sync)
}

// syncLoop waits for unsynced writes, then syncs them once SyncEvery has passed since the
// first of them or SyncBytes of them wait, until stopped.
func (s *Store) syncLoop(db *pebble.DB, g *groupSync, every time.Duration) {
	defer close(g.done)
	timer := time.NewTimer(every)
	timer.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-g.pending:
		}
		timer.Reset(every)
		select {
		case <-g.stop:
			timer.Stop()
			return
		case <-timer.C:
		case <-g.full:
			timer.Stop()
		}
		g.waiting.Store(0)
		select { // a nudge already served by this sync
		case <-g.full:
		default:
		}
		// Pebble takes a failed log write or sync as fatal (Store.Logf's Fatalf panics, as on
		// any commit); an error returned here is one it survived (the database closing).
		if err := db.LogData(nil, pebble.Sync); err != nil {
			s.counts.syncErrors.Add(1)
			if s.Logf != nil {
				s.Logf("store %s: group sync: %v", s.Dir, err)
			}
			g.note(1) // still unsynced: try again after the next interval
			continue
		}
		s.counts.syncs.Add(1)
	}
}

// note records n bytes committed unsynced and wakes the loop.
func (g *groupSync) note(n int64) {
	w := g.waiting.Add(n)
	select {
	case g.pending <- struct{}{}:
	default:
	}
	if w >= g.limit {
		select {
		case g.full <- struct{}{}:
		default:
		}
	}
}
