//go:build !unix

package kv

import (
	"fmt"
	"os"
	"runtime"
)

// lockDir fails on systems without flock: the store refuses to run unlocked rather than risk
// two processes writing one directory.
func lockDir(dir string) (*os.File, error) {
	return nil, fmt.Errorf("lock data dir %s: not supported on %s", dir, runtime.GOOS)
}

func unlockDir(f *os.File) error {
	if f == nil {
		return nil
	}
	return f.Close()
}
