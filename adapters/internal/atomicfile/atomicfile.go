// Package atomicfile writes the files the installers change (harness settings, plugin files and
// their backups) so that a reader, or a crash, sees the old content or the new, never a part:
// the data goes to a temp file in the same directory, is synced, gets its permission bits, and
// is renamed over the target; then the directory is synced so that the rename itself is durable.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// Write replaces the file at path with data, created or replaced with permission bits perm
// (exactly: the umask does not apply). The directory must exist. On an error the file at path
// is left as it was and no temp file remains; the error names path.
func Write(path string, data []byte, perm fs.FileMode) error {
	if err := write(path, data, perm, os.Rename); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteNew is Write for a file that must not exist yet: when path exists it fails with an error
// wrapping fs.ErrExist and leaves that file alone.
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	if err := write(path, data, perm, link); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Perm returns the permission bits of the file at path, or def when there is none or it cannot
// be read: what an installer that keeps a file's mode passes to Write.
func Perm(path string, def fs.FileMode) fs.FileMode {
	fi, err := os.Stat(path)
	if err != nil {
		return def
	}
	return fi.Mode().Perm()
}

// BackupStamp is the layout of the UTC time in a backup's name.
const BackupStamp = "20060102T150405Z"

// maxBackups bounds how many names Backup tries for one stamp.
const maxBackups = 100

// Backup writes data, as WriteNew does, to a new file beside path named path + ".bak-" + now in
// UTC as BackupStamp, or, when that name is taken, that name + ".N" for the first free N from 1
// to 99, and returns the name. It never replaces a file.
func Backup(path string, data []byte, perm fs.FileMode, now time.Time) (string, error) {
	base := path + ".bak-" + now.UTC().Format(BackupStamp)
	for i := range maxBackups {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s.%d", base, i)
		}
		err := WriteNew(name, data, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("back up %s: too many backups this second", path)
}

// SyncDir flushes the entries of dir (names created, renamed or removed in it) to disk, so a
// rename survives a crash. A file system that cannot sync a directory is not an error.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be opened for syncing there; NTFS journals renames
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// write writes data to a synced temp file beside path with perm, then place puts the temp file
// at path, then the directory is synced. Before place succeeds, any failure removes the temp
// file and leaves path alone.
func write(path string, data []byte, perm fs.FileMode, place func(tmp, path string) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // gone after a rename; a link leaves it to remove
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(tmp, path)
	}
	if err != nil {
		return err
	}
	return SyncDir(dir)
}

// link puts tmp at path unless path exists (an error wrapping fs.ErrExist then). Where the file
// system has no hard links it claims the name with an empty file first, then renames over it.
func link(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
