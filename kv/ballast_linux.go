package kv

import (
	"errors"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// allocate gives f size bytes of disk, its length included (fallocate without KEEP_SIZE, so
// its size shows what it holds). errors.ErrUnsupported when the filesystem or f cannot.
func allocate(f vfs.File, size int64) error {
	fd := f.Fd()
	if fd == vfs.InvalidFd {
		return errors.ErrUnsupported
	}
	err := syscall.Fallocate(int(fd), 0, 0, size)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return errors.ErrUnsupported
	}
	return err
}
