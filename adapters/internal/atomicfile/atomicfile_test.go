package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	t.Run("Create", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settings.json")
		if err := Write(path, []byte("new"), 0o640); err != nil {
			t.Fatal(err)
		}
		mustHold(t, path, "new", 0o640)
		mustBeAlone(t, path)
	})
	t.Run("Replace", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settings.json")
		mustWriteFile(t, path, "old", 0o600)
		if err := Write(path, []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		mustHold(t, path, "new", 0o644)
		mustBeAlone(t, path)
	})
	t.Run("PermIgnoresUmask", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "plugin.ts")
		if err := Write(path, []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
		mustHold(t, path, "x", 0o666)
	})
	t.Run("ErrNoDir", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "missing", "settings.json")
		if err := Write(path, []byte("x"), 0o600); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("got %v, want an error wrapping fs.ErrNotExist", err)
		}
	})
	t.Run("ErrPlaceKeepsOld", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settings.json")
		mustWriteFile(t, path, "old", 0o600)
		boom := errors.New("rename failed")
		err := write(path, []byte("new"), 0o644, func(tmp, path string) error {
			if b, err := os.ReadFile(tmp); err != nil || string(b) != "new" {
				t.Errorf("temp file before the rename: got %q, %v; want the new data", b, err)
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("got %v, want %v", err, boom)
		}
		mustHold(t, path, "old", 0o600)
		mustBeAlone(t, path)
	})
	t.Run("ErrTargetIsDir", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settings.json")
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
		mustWriteFile(t, filepath.Join(path, "inside"), "kept", 0o600)
		if err := Write(path, []byte("new"), 0o644); err == nil {
			t.Fatal("got nil, want an error")
		}
		mustHold(t, filepath.Join(path, "inside"), "kept", 0o600)
		mustBeAlone(t, path)
	})
}

func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.bak")
	if err := WriteNew(path, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := WriteNew(path, []byte("second"), 0o600)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second WriteNew: got %v, want an error wrapping fs.ErrExist", err)
	}
	mustHold(t, path, "first", 0o600)
	mustBeAlone(t, path)
}

func TestBackup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	now := time.Date(2026, 11, 22, 6, 30, 0, 0, time.FixedZone("CET", 3600))
	want := []string{path + ".bak-20261122T053000Z", path + ".bak-20261122T053000Z.1", path + ".bak-20261122T053000Z.2"}
	for i, w := range want {
		data := string(rune('a' + i))
		got, err := Backup(path, []byte(data), 0o640, now)
		if err != nil || got != w {
			t.Fatalf("backup %d: got %q, %v; want %q", i, got, err, w)
		}
		mustHold(t, got, data, 0o640)
	}
	mustHold(t, want[0], "a", 0o640) // not replaced by the later ones
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(want) {
		t.Errorf("dir holds %d entries, want %d (no temp files)", len(entries), len(want))
	}
}

func TestPerm(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if got := Perm(path, 0o600); got != 0o600 {
		t.Errorf("missing file: got %v, want the default", got)
	}
	mustWriteFile(t, path, "x", 0o640)
	if got := Perm(path, 0o600); got != 0o640 {
		t.Errorf("got %v, want 0640", got)
	}
}

func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing dir: got nil, want an error")
	}
}

func mustWriteFile(tb testing.TB, path, data string, perm fs.FileMode) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		tb.Fatal(err)
	}
}

// mustHold fails unless path holds data with permission bits perm.
func mustHold(tb testing.TB, path, data string, perm fs.FileMode) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != data {
		tb.Fatalf("%s: got %q, %v; want %q", path, b, err, data)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != perm {
		tb.Fatalf("%s: mode %v, %v; want %v", path, fi.Mode().Perm(), err, perm)
	}
}

// mustBeAlone fails when a temp file is left beside path.
func mustBeAlone(tb testing.TB, path string) {
	tb.Helper()
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"))
	if len(left) != 0 {
		tb.Fatalf("temp files left: %q", left)
	}
}
