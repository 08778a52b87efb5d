package jsonconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/internal/atomicfile"
	"github.com/heirloom-dev/heirloom/adapters/internal/textdiff"
)

// UneditResult says what Unedit did (or, with dryRun, would do).
type UneditResult struct {
	Result
	// Restored is the backup whose bytes were written back: the file as it was before heirloom
	// was installed into it, whose value is the file's without heirloom's entries. "" when the
	// file was edited instead.
	Restored string
	// Removed says the file was deleted: it held nothing but heirloom's entries, and no backup
	// says it existed before.
	Removed bool
}

// Unedit takes heirloom's entries out of the JSON config at path, as remove does to its value,
// and leaves the file as the user had it where it can: when a backup of the file
// (atomicfile.Backup's <path>.bak-*, the newest first) holds the value the file has without
// heirloom's entries (compared exactly, numbers as written, except that objects and lists left
// empty count as absent: remove drops the ones it empties), that backup's bytes are written
// back, so an install followed by an uninstall gives back the very file, formatting and all;
// otherwise the file is edited as Edit edits (key order and indentation kept), so changes made
// since the install stay. A file with no backup at all (the install created it) that holds
// nothing else once remove ran (no key but those in created, which the install adds to a new
// file) is deleted. The current file is backed up first. A missing file, or one remove does
// not change, is left alone (Changed false). Errors as Edit's.
func Unedit(path string, dryRun bool, now time.Time, remove func(root *Object) error, created ...string) (UneditResult, error) {
	for range editAttempts {
		r, err := plan(path, 0o600, remove)
		res := UneditResult{Result: r}
		if err != nil || !res.Exists || !res.Changed {
			res.Changed = res.Changed && res.Exists
			return res, err
		}
		backups, err := atomicfile.Backups(res.Path)
		if err != nil {
			return res, err
		}
		res.Restored = matchingBackup(backups, res.After)
		switch {
		case res.Restored != "":
			if res.After, err = os.ReadFile(res.Restored); err != nil {
				return res, fmt.Errorf("read %s: %w", res.Restored, err)
			}
		case len(backups) == 0 && onlyKeys(res.After, created):
			res.Removed, res.After = true, nil
		}
		if dryRun {
			return res, nil
		}
		again, err := os.ReadFile(res.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("read %s: %w", path, err)
		}
		if !bytes.Equal(again, res.Before) {
			continue // its harness wrote it meanwhile: read it again
		}
		res.Backup, err = atomicfile.Replace(res.Path, res.Before, res.After, 0o600, now)
		return res, err
	}
	return UneditResult{Result: Result{Path: path}}, fmt.Errorf("%s: %w", path, ErrChanged)
}

// matchingBackup returns the newest of backups whose JSON value is want's (see sameValue), or "".
func matchingBackup(backups []string, want []byte) string {
	for _, name := range backups {
		b, err := os.ReadFile(name)
		if err != nil {
			continue // gone meanwhile, or unreadable: not the one
		}
		if sameValue(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), bytes.TrimPrefix(want, []byte("\xef\xbb\xbf"))) {
			return name
		}
	}
	return ""
}

// sameValue reports whether a and b hold the same JSON value, whatever their key order and
// formatting: numbers compared as written (no rounding through float64), and an object or list
// left empty the same as none (remove drops what it empties).
func sameValue(a, b []byte) bool {
	x, okx := decodeExact(a)
	y, oky := decodeExact(b)
	if !okx || !oky {
		return false
	}
	xb, _ := json.Marshal(pruneEmpty(x))
	yb, _ := json.Marshal(pruneEmpty(y))
	return bytes.Equal(xb, yb)
}

// decodeExact decodes b keeping numbers as written.
func decodeExact(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

// pruneEmpty drops, from objects, the values that are (or become) empty objects or lists.
func pruneEmpty(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			e = pruneEmpty(e)
			if isEmpty(e) {
				delete(t, k)
				continue
			}
			t[k] = e
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = pruneEmpty(e)
		}
		return t
	}
	return v
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// onlyKeys reports whether b is a JSON object whose keys are all among keys ({} included).
func onlyKeys(b []byte, keys []string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), &m) != nil || m == nil {
		return false
	}
	for k := range m {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

// RemovePath deletes the value at root.keys[0].keys[1]… and then every object on that path the
// deletion left empty, innermost first (heirloom's entry goes, and so does an "mcp" or
// "plugins.entries" object that held only it). It reports whether there was a value to delete.
func RemovePath(root *Object, keys ...string) bool {
	objs := []*Object{root}
	for _, k := range keys[:len(keys)-1] {
		v, _ := objs[len(objs)-1].Get(k)
		o, ok := v.(*Object)
		if !ok {
			return false
		}
		objs = append(objs, o)
	}
	last := objs[len(objs)-1]
	if !last.Has(keys[len(keys)-1]) {
		return false
	}
	last.Delete(keys[len(keys)-1])
	for i := len(objs) - 1; i > 0 && objs[i].Len() == 0; i-- {
		objs[i-1].Delete(keys[i-1])
	}
	return true
}

// Report says on out what an Unedit did (or, with dryRun, would do, with the change as a
// unified diff): label names the harness, what the entries taken out ("heirloom's hooks").
func Report(out io.Writer, label, what string, res UneditResult, dryRun bool) {
	switch {
	case !res.Changed:
		fmt.Fprintf(out, "%s: no %s in %s\n", label, what, res.Path)
	case dryRun:
		verb := "would take " + what + " out of"
		switch {
		case res.Restored != "":
			verb = "would restore, as it was before the install (" + res.Restored + "),"
		case res.Removed:
			verb = "would delete (it holds only " + what + ")"
		}
		fmt.Fprintf(out, "%s: %s %s\n", label, verb, res.Path)
		textdiff.Unified(out, res.Path, res.Before, res.After)
	case res.Restored != "":
		fmt.Fprintf(out, "%s: took %s out of %s: restored it as it was before the install, from %s (the file before: %s)\n", label, what, res.Path, res.Restored, res.Backup)
	case res.Removed:
		fmt.Fprintf(out, "%s: deleted %s, which held only %s (kept as %s)\n", label, res.Path, what, res.Backup)
	default:
		fmt.Fprintf(out, "%s: took %s out of %s (the file before: %s)\n", label, what, res.Path, res.Backup)
	}
}
