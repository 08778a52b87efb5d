package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestReplace: an existing file is backed up with its bits and replaced; nil after removes it;
// a new file (nil before) gets newMode, its directory, and no backup.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "config")
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	if b, err := Replace(path, nil, []byte("one"), 0o640, now); err != nil || b != "" {
		t.Fatalf("new file: backup %q, %v", b, err)
	}
	mustHold(t, path, "one", 0o640)
	b, err := Replace(path, []byte("one"), []byte("two"), 0o600, now)
	if err != nil || b == "" {
		t.Fatalf("replace: backup %q, %v", b, err)
	}
	mustHold(t, path, "two", 0o640)
	mustHold(t, b, "one", 0o640)
	b2, err := Replace(path, []byte("two"), nil, 0o600, now)
	if err != nil || b2 == "" {
		t.Fatalf("remove: backup %q, %v", b2, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("file still there after a nil replacement: %v", err)
	}
	// Both backups share the second: the later got ".1"; newest first.
	got, err := Backups(path)
	if err != nil || !slices.Equal(got, []string{b2, b}) || b2 != b+".1" {
		t.Errorf("backups %q (%v), want [%s %s]", got, err, b+".1", b)
	}
}

// TestBackups orders by stamp, then by the ".N" suffix numerically (".10" after ".9").
func TestBackups(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c[1].toml")
	for _, n := range []string{".bak-20261127T100000Z", ".bak-20261127T100000Z.9", ".bak-20261127T100000Z.10", ".bak-20261128T090000Z", ".bakery"} {
		mustWriteFile(t, path+n, "x", 0o600)
	}
	got, err := Backups(path)
	want := []string{path + ".bak-20261128T090000Z", path + ".bak-20261127T100000Z.10", path + ".bak-20261127T100000Z.9", path + ".bak-20261127T100000Z"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("got %q (%v), want %q", got, err, want)
	}
}
