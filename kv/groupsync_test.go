package kv_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/heirloom-dev/heirloom/kv"
)

// crashDir is where the stores of the crash tests keep their files, on an in-memory FS.
const crashDir = "/data"

// openOnFS opens a store on fs with the group sync's interval every, closed when the test
// ends unless the test crashed it first (see crash).
func openOnFS(tb testing.TB, fs vfs.FS, every time.Duration, bytes int) *kv.Store {
	tb.Helper()
	s := kv.NewStore(crashDir)
	s.FS, s.SyncEvery, s.SyncBytes = fs, every, bytes
	s.Now = stepClock()
	if err := s.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// crash returns the store as a machine crash would leave it right now: fs's synced data and
// none of what was not synced, opened again (the original store is left open and unused, as a
// crashed process's would be).
func crash(tb testing.TB, fs *vfs.MemFS) *kv.Store {
	tb.Helper()
	return openOnFS(tb, fs.CrashClone(vfs.CrashCloneCfg{}), time.Hour, 0)
}

// hasTurns reports whether session (sc, id) is stored with n turns.
func hasTurns(tb testing.TB, s *kv.Store, id string, n int) bool {
	tb.Helper()
	turns, err := s.Turns(context.Background(), "sc", id, 0, 0)
	if errors.Is(err, kv.ErrNotFound) {
		return n == 0
	}
	if err != nil {
		tb.Fatal(err)
	}
	return len(turns) == n
}

func TestUnsyncedWrites(t *testing.T) {
	ctx := t.Context()
	streamed := func(tb testing.TB, s *kv.Store, id string) {
		tb.Helper()
		uctx := kv.Unsynced(ctx)
		if err := s.PutSession(uctx, newSession("sc", id)); err != nil {
			tb.Fatal(err)
		}
		if _, _, err := s.UpsertTurns(uctx, "sc", id, makeTurns("prt_", 0, 3)); err != nil {
			tb.Fatal(err)
		}
		if !hasTurns(tb, s, id, 3) {
			tb.Fatalf("%s: an unsynced write must be readable at once", id)
		}
	}

	t.Run("not synced until the group syncs them", func(t *testing.T) {
		fs := vfs.NewCrashableMem()
		s := openOnFS(t, fs, time.Hour, 0)
		before := s.Stats()
		streamed(t, s, "ses_1")
		st := s.Stats().Sub(before)
		if st.Commits != 2 || st.Unsynced != 2 || st.Syncs != 0 {
			t.Fatalf("stats: %+v, want 2 commits, both unsynced, no sync yet", st)
		}
		// The proof that the test can fail: without a sync, a crash loses them.
		if !hasTurns(t, crash(t, fs), "ses_1", 0) {
			t.Fatal("a crash kept writes nobody synced: the test would prove nothing")
		}
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if !hasTurns(t, crash(t, fs), "ses_1", 3) {
			t.Fatal("Sync did not make the unsynced writes durable")
		}
	})

	t.Run("the group syncs within SyncEvery", func(t *testing.T) {
		fs := vfs.NewCrashableMem()
		s := openOnFS(t, fs, 20*time.Millisecond, 0)
		streamed(t, s, "ses_1")
		waitFor(t, func() bool { return s.Stats().Syncs > 0 })
		if !hasTurns(t, crash(t, fs), "ses_1", 3) {
			t.Fatal("the group sync did not make the writes durable")
		}
	})

	t.Run("SyncBytes waiting start a sync at once", func(t *testing.T) {
		fs := vfs.NewCrashableMem()
		s := openOnFS(t, fs, time.Hour, 1024)
		streamed(t, s, "ses_1")
		if s.Stats().Syncs != 0 {
			t.Fatal("synced before SyncBytes waited")
		}
		big := makeTurns("big_", 0, 4)
		for i := range big {
			big[i].Text = fmt.Sprintf("%0400d", i)
		}
		if _, _, err := s.UpsertTurns(kv.Unsynced(ctx), "sc", "ses_1", big); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return s.Stats().Syncs > 0 })
		if !hasTurns(t, crash(t, fs), "ses_1", 7) {
			t.Fatal("the sync SyncBytes asked for did not make the writes durable")
		}
	})

	t.Run("a synced write makes those before it durable", func(t *testing.T) {
		fs := vfs.NewCrashableMem()
		s := openOnFS(t, fs, time.Hour, 0)
		streamed(t, s, "ses_1")
		mustSession(t, s, "sc", "ses_2") // synced: acknowledged to a harness
		c := crash(t, fs)
		if !hasTurns(t, c, "ses_1", 3) {
			t.Fatal("the unsynced writes before a synced one were lost")
		}
		if _, err := c.GetSession(ctx, "sc", "ses_2"); err != nil {
			t.Fatalf("the synced write: %v", err)
		}
	})
}

// waitFor polls cond for up to five seconds.
func waitFor(tb testing.TB, cond func() bool) {
	tb.Helper()
	for start := time.Now(); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			tb.Fatal("condition not met in five seconds")
		}
	}
}
