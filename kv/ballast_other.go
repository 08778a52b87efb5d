//go:build !linux

package kv

import (
	"errors"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// allocate is unsupported here: the ballast is written in full.
func allocate(vfs.File, int64) error { return errors.ErrUnsupported }
