package kv

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Health is what `heirloom doctor` shows of the store: its size on disk and its compactions.
type Health struct {
	Dir         string
	DiskBytes   uint64    // the store's files on disk, WAL included
	Compactions int64     // compactions since the store opened
	LastCompact time.Time // when the latest of them ended; zero before the first
	// The data dir's filesystem at the last reading (zero when unknown), the reserve the store
	// keeps on it, and whether writes are refused for want of it (see ErrDiskFull).
	FreeBytes, TotalBytes uint64
	Reserve               int64
	DiskFull              bool
	Ballast               bool // the ballast file holds its part of the reserve
}

// compactions counts the store's compactions and keeps when the latest ended (Pebble's event
// listener feeds it).
type compactions struct {
	n    atomic.Int64
	last atomic.Int64 // UnixNano
}

func (c *compactions) listener() pebble.EventListener {
	return pebble.EventListener{CompactionEnd: func(info pebble.CompactionInfo) {
		if info.Err == nil {
			c.n.Add(1)
			c.last.Store(time.Now().UnixNano())
		}
	}}
}

// Health reports the store's size and compactions.
func (s *Store) Health(ctx context.Context) (Health, error) {
	db, err := s.acquire(ctx)
	if err != nil {
		return Health{}, fmt.Errorf("store health: %w", err)
	}
	defer s.release()
	h := Health{Dir: s.Dir, DiskBytes: db.Metrics().DiskSpaceUsage(), Compactions: s.compacted.n.Load()}
	if ns := s.compacted.last.Load(); ns != 0 {
		h.LastCompact = time.Unix(0, ns).UTC()
	}
	if g := s.space.Load(); g != nil {
		h.FreeBytes, h.TotalBytes, h.Reserve, h.DiskFull, h.Ballast = g.free.Load(), g.total.Load(), g.reserve, g.full.Load(), g.ballast.Load()
	}
	return h, nil
}
