package kv_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/heirloom-dev/heirloom/kv"
)

const mib = 1 << 20

// spaceStore opens a store on fs whose filesystem reports free bytes free (reserve 64 MiB,
// read every 5 ms), logging into the returned log.
func spaceStore(tb testing.TB, fs vfs.FS, free *atomic.Uint64) (*kv.Store, *lines) {
	tb.Helper()
	log := &lines{}
	s := kv.NewStore(crashDir)
	s.FS, s.Reserve, s.SpaceEvery = fs, 64*mib, 5*time.Millisecond
	s.DiskFree = func(string) (uint64, uint64, error) { return free.Load(), 1 << 30, nil }
	s.Logf = log.logf
	s.Now = stepClock()
	if err := s.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s, log
}

// lines collects log lines.
type lines struct {
	mu sync.Mutex
	l  []string
}

func (l *lines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.l = append(l.l, fmt.Sprintf(format, args...))
}

// count returns how many lines hold sub.
func (l *lines) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.l {
		if strings.Contains(line, sub) {
			n++
		}
	}
	return n
}

func TestDiskFull(t *testing.T) {
	ctx := t.Context()
	fs := vfs.NewMem()
	var free atomic.Uint64
	free.Store(1 << 30)
	s, log := spaceStore(t, fs, &free)
	if _, err := fs.Stat(crashDir + "/heirloom.ballast"); err != nil {
		t.Fatalf("no ballast with space to spare: %v", err)
	}
	mustSession(t, s, "sc", "before")

	free.Store(40 * mib) // under three quarters of the reserve: the rest of it is the ballast
	waitFor(t, func() bool { h, _ := s.Health(ctx); return h.DiskFull })
	for i := range 50 {
		err := s.PutSession(kv.Unsynced(ctx), newSession("sc", fmt.Sprintf("refused-%d", i)))
		if !errors.Is(err, kv.ErrDiskFull) {
			t.Fatalf("write %d on a full disk: %v, want ErrDiskFull", i, err)
		}
	}
	if _, err := s.GetSession(ctx, "sc", "refused-0"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("a refused write was stored: %v", err)
	}
	if _, err := s.GetSession(ctx, "sc", "before"); err != nil {
		t.Fatalf("reads must go on: %v", err)
	}
	err := s.Check(ctx)
	if !errors.Is(err, kv.ErrDiskFull) || !strings.Contains(err.Error(), "40.0 MiB free") || !strings.Contains(err.Error(), "64.0 MiB") {
		t.Fatalf("Check on a full disk: %v", err)
	}
	if n := log.count("disk full"); n != 1 {
		t.Fatalf("50 refused writes logged %d times, want once (a minute)", n)
	}

	free.Store(50 * mib) // over the line it stopped at, under the one it resumes at
	time.Sleep(50 * time.Millisecond)
	if h, _ := s.Health(ctx); !h.DiskFull {
		t.Fatal("resumed at the line it stopped at: a disk hovering there would flap")
	}
	free.Store(1 << 30)
	waitFor(t, func() bool { return s.Check(ctx) == nil })
	mustSession(t, s, "sc", "after")
	if log.count("writes resume") != 1 {
		t.Fatalf("log: %q", log.l)
	}
}

// A ballast cut short (a crash while writing it, a sparse copy) holds no room: it is made
// again in full at Open. A filesystem that cannot hold one at all (not for want of space)
// still takes writes, guarded by the same lines, and says so once.
func TestBallastFile(t *testing.T) {
	t.Run("cut short", func(t *testing.T) {
		fs := vfs.NewMem()
		if err := fs.MkdirAll(crashDir, 0o700); err != nil {
			t.Fatal(err)
		}
		f, err := fs.Create(crashDir+"/heirloom.ballast", vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		var free atomic.Uint64
		free.Store(1 << 30)
		spaceStore(t, fs, &free)
		fi, err := fs.Stat(crashDir + "/heirloom.ballast")
		if err != nil || fi.Size() != 16*mib {
			t.Fatalf("ballast after Open: %v, %v; want 16 MiB", fi, err)
		}
	})
	t.Run("unsupported", func(t *testing.T) {
		fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
			if op.Kind == errorfs.OpCreate && strings.Contains(op.Path, "heirloom.ballast") {
				return syscall.EOPNOTSUPP
			}
			return nil
		}))
		var free atomic.Uint64
		free.Store(1 << 30)
		s, log := spaceStore(t, fs, &free)
		mustSession(t, s, "sc", "ok")
		if err := s.Check(t.Context()); err != nil {
			t.Fatalf("a filesystem without a ballast refuses writes: %v", err)
		}
		time.Sleep(30 * time.Millisecond)
		if n := log.count("no ballast file"); n != 1 {
			t.Fatalf("said %d times, want once: %q", n, log.l)
		}
		free.Store(10 * mib)
		waitFor(t, func() bool { return errors.Is(s.Check(t.Context()), kv.ErrDiskFull) })
	})
}

// TestDiskFullBeforeTheGuardSawIt: the disk refuses a write of Pebble's log (ENOSPC, injected)
// while the guard still thinks there is room (another program filled the disk between two
// readings). The ballast goes, the write is tried again and succeeds, the store stays up, and
// writes are refused until space returns; the ballast comes back with it.
func TestDiskFullBeforeTheGuardSawIt(t *testing.T) {
	ctx := t.Context()
	mem := vfs.NewMem()
	var enospc atomic.Int64 // writes to Pebble's log still to refuse
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if (op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileWriteAt) && strings.HasSuffix(op.Path, ".log") && enospc.Add(-1) >= 0 {
			return syscall.ENOSPC
		}
		return nil
	}))
	var free atomic.Uint64
	free.Store(60 * mib) // room enough with the ballast in place, too little to make it again
	s, log := spaceStore(t, fs, &free)
	if _, err := mem.Stat(crashDir + "/heirloom.ballast"); err != nil {
		// 60 MiB free is under the 64 MiB reserve: no ballast yet. Give it one first.
		free.Store(1 << 30)
		waitFor(t, func() bool { h, _ := s.Health(ctx); return h.Ballast })
		free.Store(60 * mib)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	enospc.Store(1)
	mustSession(t, s, "sc", "acknowledged") // refused once by the disk, then written
	if enospc.Load() >= 0 {
		t.Fatal("the disk never refused a write: the test proves nothing")
	}
	if _, err := mem.Stat(crashDir + "/heirloom.ballast"); err == nil {
		t.Fatal("the ballast is still there")
	}
	if _, err := s.GetSession(ctx, "sc", "acknowledged"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSession(ctx, newSession("sc", "next")); !errors.Is(err, kv.ErrDiskFull) {
		t.Fatalf("a write after the disk refused one: %v, want ErrDiskFull", err)
	}
	if log.count("ENOSPC") != 1 {
		t.Fatalf("log: %q", log.l)
	}
	free.Store(1 << 30)
	waitFor(t, func() bool { return s.Check(ctx) == nil })
	if _, err := mem.Stat(crashDir + "/heirloom.ballast"); err != nil {
		t.Fatal("the ballast did not come back with the space")
	}
	mustSession(t, s, "sc", "next")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Nothing corrupted: it reopens with everything acknowledged.
	r := kv.NewStore(crashDir)
	r.FS = mem
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, id := range []string{"acknowledged", "next"} {
		if _, err := r.GetSession(context.Background(), "sc", id); err != nil {
			t.Fatalf("%s after reopening: %v", id, err)
		}
	}
}
