package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrDiskFull means the data dir's filesystem has less free space than the store keeps in
// reserve (Store.Reserve): the write was refused and nothing of it stored. Reads go on, and
// writes resume by themselves once space returns.
var ErrDiskFull = errors.New("disk full")

// DefaultReserve is the free space the store leaves on its filesystem when Store.Reserve is
// zero: room for Pebble to flush its memtable, compact and rotate its log, which it cannot
// survive failing (a write-ahead log that cannot be written is fatal to it).
const DefaultReserve = 64 << 20

// DefaultSpaceEvery is how often the store reads its filesystem's free space when
// Store.SpaceEvery is zero; it also reads it at once after writing an eighth of the reserve.
const DefaultSpaceEvery = time.Second

// spaceLogEvery is how often, at most, a full disk is logged while writes are refused.
const spaceLogEvery = time.Minute

// ballastName is the file in the data directory that holds a quarter of the reserve on disk
// while space allows: when the disk fills before the guard saw it (another program filled it
// between two readings), Pebble's failed write frees it and is retried once, so the store
// never meets the full disk (see vfs.OnDiskFull). It is made again when space returns.
const ballastName = "heirloom.ballast"

// spaceGuard keeps the store's writes off a full disk: it reads the free space on an interval
// (and after every eighth of the reserve written), refuses writes while it is under the
// reserve, and says so in the log once a minute. A ballast file stands in for the last of the
// reserve (see ballastName).
type spaceGuard struct {
	reserve     int64
	ballast     atomic.Bool // the ballast file is in place, at its full size
	noBallast   bool        // the filesystem cannot hold one (not for want of space); loop-owned
	unreadable  bool        // the last reading failed, and was logged; loop-owned
	full        atomic.Bool
	free, total atomic.Uint64 // the last reading
	written     atomic.Int64  // bytes committed since the last reading
	refused     atomic.Int64  // writes refused since the last log line
	loggedAt    atomic.Int64  // UnixNano of that line
	read        chan struct{} // cap 1: read the free space now
	stop, done  chan struct{}
}

// startSpace takes the first reading and starts the guard. Called by Open with s.life held.
// A filesystem whose free space cannot be read is taken as never full.
func (s *Store) startSpace() {
	g := &spaceGuard{reserve: s.Reserve, read: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if g.reserve == 0 {
		g.reserve = DefaultReserve
		// On a small filesystem an eighth of it: a 64 MiB reserve would refuse every write.
		if _, total, err := s.diskFree(); err == nil && total > 0 {
			g.reserve = min(g.reserve, max(int64(total/8), 1<<20))
		}
	}
	every := s.SpaceEvery
	if every <= 0 {
		every = DefaultSpaceEvery
	}
	s.space.Store(g)
	if g.reserve < 0 {
		close(g.done)
		return
	}
	if fi, err := s.fs().Stat(s.ballastPath()); err == nil {
		if fi.Size() == g.ballastSize() {
			g.ballast.Store(true)
		} else { // cut short by a crash, or copied sparse: no room is held
			_ = s.fs().Remove(s.ballastPath())
		}
	}
	s.readSpace(g)
	go s.spaceLoop(g, every)
}

func (s *Store) ballastPath() string { return s.fs().PathJoin(s.Dir, ballastName) }

// ballastSize is the ballast file's size: a quarter of the reserve.
func (g *spaceGuard) ballastSize() int64 { return g.reserve / 4 }

// onDiskFull is Pebble's callback when the disk refused a write (ENOSPC; see vfs.OnDiskFull):
// the ballast goes, so that the write, retried once, succeeds, and writes are refused from now
// on until space returns. Writes wait while it runs: it must be quick.
func (s *Store) onDiskFull() {
	g := s.space.Load()
	if g == nil { // opening or closing: let the ballast go if there is one
		_ = s.fs().Remove(s.ballastPath())
		return
	}
	if g.reserve < 0 {
		return
	}
	g.full.Store(true)
	released := g.ballast.Swap(false) && s.fs().Remove(s.ballastPath()) == nil
	if s.Logf != nil {
		s.Logf("store %s: the disk refused a write (ENOSPC) before the guard saw it full; ballast released: %v; writes are refused until space returns", s.Dir, released)
	}
	select {
	case g.read <- struct{}{}:
	default:
	}
}

// placeBallast makes the ballast file, written in full (a preallocation holds no room on some
// systems, and zeros none on a compressing one), reporting whether it is in place. Called by
// the guard's loop alone, when the free space allows it. A filesystem that fails for another
// reason than space is marked as holding no ballast, and said once.
func (s *Store) placeBallast(g *spaceGuard) bool {
	fs, path := s.fs(), s.ballastPath()
	err := writeBallast(fs, path, g.ballastSize())
	if err == nil {
		g.ballast.Store(true)
		return true
	}
	_ = fs.Remove(path)
	if !isNoSpace(err) {
		g.noBallast = true
		if s.Logf != nil {
			s.Logf("store %s: no ballast file (%v): a disk that fills faster than the guard reads it may stop the store", s.Dir, err)
		}
	}
	return false
}

// writeBallast makes a file of size bytes that hold room on the disk at path: allocated where
// the filesystem can (fallocate), else written with incompressible data; written under a
// temporary name and renamed, so a ballast at path is always whole.
func writeBallast(fs vfs.FS, path string, size int64) error {
	tmp := path + ".tmp"
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if err = allocate(f, size); errors.Is(err, errors.ErrUnsupported) {
		err = fillFile(f, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, path)
	}
	if err != nil {
		_ = fs.Remove(tmp)
	}
	return err
}

// fillFile writes size bytes of incompressible data to f (zeros hold no room on a compressing
// filesystem).
func fillFile(f vfs.File, size int64) error {
	chunk := noise()
	for left := size; left > 0; left -= int64(len(chunk)) {
		if _, err := f.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
			return err
		}
	}
	return nil
}

// noise is 1 MiB of pseudo-random bytes, made once.
var noise = sync.OnceValue(func() []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 1<<20)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	return b
})

// isNoSpace reports whether err is the filesystem being out of space.
func isNoSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }

// stopSpace stops the guard. Called by Close with s.life held.
func (s *Store) stopSpace() {
	g := s.space.Swap(nil)
	if g == nil {
		return
	}
	if g.reserve >= 0 {
		close(g.stop)
	}
	<-g.done
}

func (s *Store) spaceLoop(g *spaceGuard, every time.Duration) {
	defer close(g.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		case <-g.read:
		}
		s.readSpace(g)
	}
}

// readSpace reads the free space and updates full. Writes stop when less than three quarters
// of the reserve is free beside the ballast, and resume at seven eighths, so a disk hovering at
// the line does not flap; a released ballast is made again first, which takes the whole
// reserve free. A filesystem that cannot hold a ballast keeps the same lines without it.
func (s *Store) readSpace(g *spaceGuard) {
	free, total, err := s.diskFree()
	if err != nil {
		if !g.unreadable && s.Logf != nil {
			s.Logf("store %s: free space unreadable (%v); the guard keeps its last reading", s.Dir, err)
		}
		g.unreadable = true
		return
	}
	g.unreadable = false
	g.written.Store(0)
	if !g.ballast.Load() && !g.noBallast && free >= uint64(g.reserve) && s.placeBallast(g) {
		if free, total, err = s.diskFree(); err != nil {
			return
		}
	}
	g.free.Store(free)
	g.total.Store(total)
	low := uint64(g.reserve - g.ballastSize())
	held := g.ballast.Load() || g.noBallast
	switch full := g.full.Load(); {
	case !full && free < low:
		g.full.Store(true)
	case full && held && free >= low+uint64(g.ballastSize()/2):
		g.full.Store(false)
		if s.Logf != nil {
			s.Logf("store %s: %s free again; writes resume (%d were refused since the last message)",
				s.Dir, sizeOf(free), g.refused.Swap(0))
		}
	}
}

// diskFree reads the free space (available to this user) and size of the data dir's
// filesystem, through Store.DiskFree when set.
func (s *Store) diskFree() (free, total uint64, err error) {
	if s.DiskFree != nil {
		return s.DiskFree(s.Dir)
	}
	u, err := s.fs().GetDiskUsage(s.Dir)
	return u.AvailBytes, u.TotalBytes, err
}

// allowWrite returns an error wrapping ErrDiskFull while the disk is under the reserve,
// logging it once a minute at most.
func (s *Store) allowWrite() error {
	g := s.space.Load()
	if g == nil || !g.full.Load() {
		return nil
	}
	err := s.fullError(g)
	g.refused.Add(1)
	if now, last := time.Now().UnixNano(), g.loggedAt.Load(); now-last >= int64(spaceLogEvery) && g.loggedAt.CompareAndSwap(last, now) && s.Logf != nil {
		s.Logf("store %s: %v (%d writes refused since the last message; said once a minute)", s.Dir, err, g.refused.Swap(0))
	}
	return err
}

// fullError says why writes are refused; without the data dir's path, so that /readyz, which
// needs no token, can say it.
func (s *Store) fullError(g *spaceGuard) error {
	return fmt.Errorf("%w: %s free of %s on the data dir's filesystem, under the %s heirloom keeps in reserve; writes are refused (reads go on) and resume by themselves when space returns",
		ErrDiskFull, sizeOf(g.free.Load()), sizeOf(g.total.Load()), sizeOf(uint64(g.reserve)))
}

// wrote counts n bytes committed, asking for a reading once an eighth of the reserve was
// written since the last.
func (g *spaceGuard) wrote(n int) {
	if g == nil || g.reserve < 0 {
		return
	}
	if g.written.Add(int64(n)) >= g.reserve/8 {
		select {
		case g.read <- struct{}{}:
		default:
		}
	}
}

// sizeOf formats n bytes for people: "3.1 MiB".
func sizeOf(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
