package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Replace is how an installer changes a config file: when before is not nil (the file exists,
// holding before) it is first backed up (Backup, with the file's own permission bits), then
// after is written atomically (Write, creating the directory when missing, with the file's bits
// or newMode for a new file), or, when after is nil, the file is removed and its directory
// synced. It returns the backup's name, "" when none was made.
func Replace(path string, before, after []byte, newMode fs.FileMode, now time.Time) (string, error) {
	mode, backup := newMode, ""
	if before != nil {
		mode = Perm(path, newMode)
		var err error
		if backup, err = Backup(path, before, mode, now); err != nil {
			return "", err
		}
	}
	dir := filepath.Dir(path)
	if after == nil {
		if err := os.Remove(path); err != nil {
			return backup, fmt.Errorf("remove %s: %w", path, err)
		}
		return backup, SyncDir(dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return backup, fmt.Errorf("create %s: %w", dir, err)
	}
	return backup, Write(path, after, mode)
}

// Backups lists the backups Backup made of path (<path>.bak-<stamp>[.N]), newest first. The
// directory is listed rather than globbed, so a path holding glob characters ("[") finds its
// own.
func Backups(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil {
		return nil, fmt.Errorf("list the backups of %s: %w", path, err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), base+".bak-") && !e.IsDir() {
			names = append(names, filepath.Join(dir, e.Name()))
		}
	}
	slices.SortFunc(names, func(a, b string) int { return backupOrder(b, a) })
	return names, nil
}

// backupOrder orders backup names by their stamp, then their ".N" suffix.
func backupOrder(a, b string) int {
	sa, na := splitBackup(a)
	sb, nb := splitBackup(b)
	if c := strings.Compare(sa, sb); c != 0 {
		return c
	}
	return na - nb
}

// splitBackup returns a backup name's stamp part and its ".N" number (0 when none).
func splitBackup(name string) (string, int) {
	_, rest, _ := strings.Cut(filepath.Base(name), ".bak-")
	stamp, n, ok := strings.Cut(rest, ".")
	if !ok {
		return rest, 0
	}
	i, err := strconv.Atoi(n)
	if err != nil {
		return rest, 0
	}
	return stamp, i
}
