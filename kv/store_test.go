package kv_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

var dump = flag.Bool("dump", false, "keep each test's data directory and log its path")

// MustOpenStore opens a Store in a fresh directory, closed when the test ends. Its clock starts
// at epoch and steps one second per write, so every write has a distinct, known timestamp.
func MustOpenStore(tb testing.TB) *kv.Store {
	tb.Helper()
	s := kv.NewStore(testDir(tb))
	s.Now = stepClock()
	if err := s.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// testDir returns an empty directory for one test: a temporary one, or with -dump one that is
// kept and whose path is logged.
func testDir(tb testing.TB) string {
	tb.Helper()
	if !*dump {
		return tb.TempDir()
	}
	dir, err := os.MkdirTemp("", "heirloom-kv-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("data dir kept: %s", dir)
	return dir
}

// epoch is when stepClock starts.
var epoch = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// stepClock returns a goroutine-safe clock whose n-th reading is epoch + n seconds.
func stepClock() func() time.Time {
	var n atomic.Int64
	return func() time.Time { return epoch.Add(time.Duration(n.Add(1)) * time.Second) }
}

func TestStore_Lifecycle(t *testing.T) {
	t.Run("CloseWithoutOpen", func(t *testing.T) {
		s := kv.NewStore(t.TempDir())
		if err := s.Close(); err != nil {
			t.Fatalf("got %v, want nil", err)
		}
	})
	t.Run("OpenCloseTwice", func(t *testing.T) {
		s := kv.NewStore(t.TempDir())
		for i := range 2 {
			if err := s.Open(); err != nil {
				t.Fatalf("open %d: %v", i, err)
			}
			if err := s.Check(t.Context()); err != nil {
				t.Fatalf("check %d: %v", i, err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("close %d: %v", i, err)
			}
		}
	})
	t.Run("CloseTwice", func(t *testing.T) {
		s := kv.NewStore(t.TempDir())
		if err := s.Open(); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if err := s.Close(); err != nil {
				t.Fatalf("close %d: got %v, want nil", i, err)
			}
		}
	})
	t.Run("OpenTwice", func(t *testing.T) {
		s := MustOpenStore(t)
		if err := s.Open(); err == nil {
			t.Fatal("second Open of an open Store: got nil error")
		}
	})
	t.Run("CreatesDir", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "b")
		s := kv.NewStore(dir)
		if err := s.Open(); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o700 {
			t.Fatalf("dir mode: got %v, want %v", got, os.FileMode(0o700))
		}
	})
}

func TestStore_ErrClosed(t *testing.T) {
	s := kv.NewStore(t.TempDir())
	ctx := t.Context()
	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, kv.ErrClosed) {
			t.Errorf("%s: got %v, want ErrClosed", name, err)
		}
	}
	run := func() {
		check("Check", s.Check(ctx))
		check("PutSession", s.PutSession(ctx, newSession("a", "x")))
		_, err := s.GetSession(ctx, "a", "x")
		check("GetSession", err)
		_, err = s.UpdateSession(ctx, "a", "x", func(*kv.Session, bool) error { return nil })
		check("UpdateSession", err)
		_, err = s.ListSessions(ctx, "a", kv.SessionFilter{})
		check("ListSessions", err)
		_, err = s.Children(ctx, "a", "x")
		check("Children", err)
		_, err = s.AppendTurns(ctx, "a", "x", nil, kv.TranscriptPos{})
		check("AppendTurns", err)
		_, err = s.Turns(ctx, "a", "x", 0, 0)
		check("Turns", err)
		_, err = s.LastTurns(ctx, "a", "x", 1)
		check("LastTurns", err)
	}
	run() // never opened
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	run() // closed
}

func TestStore_Locked(t *testing.T) {
	dir := t.TempDir()
	first := kv.NewStore(dir)
	if err := first.Open(); err != nil {
		t.Fatal(err)
	}
	defer first.Close()

	second := kv.NewStore(dir)
	start := time.Now()
	err := second.Open()
	if !errors.Is(err, kv.ErrLocked) {
		t.Fatalf("second Open: got %v, want ErrLocked", err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("second Open took %v, want it to fail at once", elapsed)
	}
	if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, "another heirloom holds it") {
		t.Errorf("error %q: want it to name %s and say another heirloom holds it", msg, dir)
	}
	if err := second.Close(); err != nil {
		t.Errorf("close after failed open: %v", err)
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := second.Open(); err != nil {
		t.Fatalf("open after the holder closed: %v", err)
	}
	defer second.Close()
}

func TestStore_Check(t *testing.T) {
	s := MustOpenStore(t)
	for i := range 3 {
		if err := s.Check(t.Context()); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
	}
}

func TestStore_Reopen(t *testing.T) {
	dir := testDir(t)
	ctx := t.Context()
	s := kv.NewStore(dir)
	s.Now = stepClock()
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	parent := newSession("main", "p")
	child := newSession("main", "c")
	child.ParentID = "p"
	for _, sess := range []kv.Session{parent, child} {
		if err := s.PutSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	turns := []kv.Turn{
		{SourceID: "u1", Role: "user", Text: "hello"},
		{SourceID: "a1", Role: "assistant", Text: "hi", Files: []string{"main.go"}},
	}
	pos := kv.TranscriptPos{Path: "/t.jsonl", Offset: 99, Ident: "1:2"}
	if _, err := s.AppendTurns(ctx, "main", "p", turns, pos); err != nil {
		t.Fatal(err)
	}
	wantParent, err := s.GetSession(ctx, "main", "p")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = kv.NewStore(dir)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	gotParent, err := s.GetSession(ctx, "main", "p")
	if err != nil {
		t.Fatal(err)
	}
	assertSession(t, gotParent, wantParent)
	gotTurns, err := s.Turns(ctx, "main", "p", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	assertTurns(t, gotTurns, withSeqs(turns, 0))
	kids, err := s.Children(ctx, "main", "p")
	if err != nil {
		t.Fatal(err)
	}
	assertIDs(t, kids, "c")
	list, err := s.ListSessions(ctx, "main", kv.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	assertIDs(t, list, "p", "c")
	// The dedupe index survived too.
	if n, err := s.AppendTurns(ctx, "main", "p", turns, pos); err != nil || n != 0 {
		t.Fatalf("re-append after reopen: got %d, %v; want 0, nil", n, err)
	}
}
