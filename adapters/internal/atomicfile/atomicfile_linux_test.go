package atomicfile

import (
	"bytes"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// A write that fails half-way (here: the file size limit, EFBIG) leaves the old file as it was
// and no temp file behind.
func TestWriteFailsHalfWayKeepsOld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	mustWriteFile(t, path, "old", 0o600)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	small := lim
	small.Cur = 1 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &small); err != nil {
		t.Skip(err)
	}
	err := Write(path, bytes.Repeat([]byte("x"), 64<<10), 0o644)
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); rerr != nil {
		t.Fatal(rerr)
	}
	if !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("got %v, want EFBIG", err)
	}
	mustHold(t, path, "old", 0o600)
	mustBeAlone(t, path)
}
