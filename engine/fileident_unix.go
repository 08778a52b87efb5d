//go:build unix

package engine

import (
	"fmt"
	"os"
	"syscall"
)

// fileIdent names the file behind fi (device and inode), so a transcript replaced under the same
// path is noticed and re-read from the start.
func fileIdent(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return ""
}
