//go:build unix

package kv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFileName is the file in the data directory whose exclusive flock marks the directory as
// in use. It is never removed: the lock, not the file, is what counts, and it is released by
// the kernel when its holder exits, however it exits.
const lockFileName = "heirloom.lock"

// lockDir takes the exclusive, non-blocking lock on dir's lock file and records our pid in it
// for people reading the file. When another open file holds the lock it fails at once with
// ErrLocked, naming dir (and the holder's pid when the file says).
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := ""
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data dir %s: another heirloom holds it%s: %w", dir, holder, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// unlockDir releases the lock taken by lockDir.
func unlockDir(f *os.File) error {
	if f == nil {
		return nil
	}
	// Closing the descriptor drops the flock.
	if err := f.Close(); err != nil {
		return fmt.Errorf("close lock file: %w", err)
	}
	return nil
}
