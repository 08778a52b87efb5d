package jsonconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/internal/atomicfile"
)

// ErrNotStrictJSON is returned by Edit for a file that is not strict JSON (comments, trailing
// commas, JSON5): rewriting it would drop what it holds, so it is left as it is and the caller
// says what to add by hand.
var ErrNotStrictJSON = errors.New("not strict JSON")

// Result says what Edit did (or, with DryRun, would do).
type Result struct {
	Path    string // the file changed: the given path, or the file a symlink there points at
	Exists  bool   // the file existed before
	Changed bool   // false: the change left the file's value as it was, and nothing was written
	Backup  string // the copy of the previous file; "" when none was made
	Before  []byte // the file's content before (nil when it did not exist)
	After   []byte // the content written (or that would be written)
}

// Edit reads the JSON object in the file at path (a missing or empty file reads as {}), lets
// change modify it, and, when its value changed, copies the old file to a backup
// (atomicfile.Backup) and replaces it atomically, keeping its mode (newMode for a new file, whose
// directory is created 0700), its key order and its indentation. A symlink is followed, so a
// config kept in a dotfiles repository is edited in place. With dryRun nothing is written.
//
// A file that is not strict JSON returns an error wrapping ErrNotStrictJSON; one whose value is
// not an object, or an error from change, is returned as is, naming the path. The file is never
// touched on an error.
func Edit(path string, dryRun bool, newMode fs.FileMode, now time.Time, change func(root *Object) error) (Result, error) {
	res := Result{Path: path}
	if target, err := filepath.EvalSymlinks(path); err == nil {
		res.Path = target
	}
	mode := newMode
	before, err := os.ReadFile(res.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		before = nil
	case err != nil:
		return res, fmt.Errorf("read %s: %w", path, err)
	default:
		res.Exists = true
		mode = atomicfile.Perm(res.Path, newMode)
	}
	res.Before = before

	text := bytes.TrimPrefix(before, []byte("\xef\xbb\xbf"))
	root := NewObject()
	if len(bytes.TrimSpace(text)) > 0 {
		if !json.Valid(text) {
			return res, fmt.Errorf("%s: %w", path, ErrNotStrictJSON)
		}
		v, err := Parse(text)
		if err != nil {
			return res, fmt.Errorf("read %s: %w", path, err)
		}
		obj, ok := v.(*Object)
		if !ok {
			return res, fmt.Errorf("%s is not a JSON object; fix or move it first", path)
		}
		root = obj
	}
	original := Encode(root, "")
	if err := change(root); err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	res.After = append(Encode(root, DetectIndent(text)), '\n')
	res.Changed = !res.Exists || !bytes.Equal(original, Encode(root, ""))
	if !res.Changed || dryRun {
		return res, nil
	}
	if res.Exists {
		if res.Backup, err = atomicfile.Backup(res.Path, before, mode, now); err != nil {
			return res, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(res.Path), 0o700); err != nil {
		return res, fmt.Errorf("create %s: %w", filepath.Dir(res.Path), err)
	}
	if err := atomicfile.Write(res.Path, res.After, mode); err != nil {
		return res, err
	}
	return res, nil
}
