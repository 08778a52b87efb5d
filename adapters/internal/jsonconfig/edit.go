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

// ErrEmptyFile is returned by Edit for a file that exists but is empty: a harness rewriting its
// config in place (Claude Code does with ~/.claude.json) leaves it so for a moment, and reading
// it as {} would replace the harness's whole config. Nothing is written; try again.
var ErrEmptyFile = errors.New("exists but is empty (its harness may be rewriting it)")

// ErrChanged is returned by Edit when the file kept changing under it (its harness writing it
// at the same time) for every attempt; nothing is written.
var ErrChanged = errors.New("changed while it was being edited")

// editAttempts is how many times Edit reads, changes and checks a file that something else
// writes meanwhile.
const editAttempts = 3

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

// Edit reads the JSON object in the file at path (a missing file, or one holding only white
// space, reads as {}), lets
// change modify it, and, when its value changed, copies the old file to a backup
// (atomicfile.Backup) and replaces it atomically, keeping its mode (newMode for a new file, whose
// directory is created 0700), its key order and its indentation. A symlink is followed, so a
// config kept in a dotfiles repository is edited in place. With dryRun nothing is written.
//
// A file that is not strict JSON returns an error wrapping ErrNotStrictJSON; an existing empty
// file, ErrEmptyFile; one that changes between the read and the write (its harness writing it)
// is read and changed again, and after editAttempts an error wraps ErrChanged; one whose value is
// not an object, or an error from change, is returned as is, naming the path. The file is never
// touched on an error. A leading byte-order mark is kept.
func Edit(path string, dryRun bool, newMode fs.FileMode, now time.Time, change func(root *Object) error) (Result, error) {
	var res Result
	for range editAttempts {
		var err error
		res, err = plan(path, newMode, change)
		if err != nil || !res.Changed || dryRun {
			return res, err
		}
		// The file must still be what was read: its harness may have written it meanwhile,
		// and that write must not be lost.
		again, err := os.ReadFile(res.Path)
		gone := errors.Is(err, fs.ErrNotExist)
		if err != nil && !gone {
			return res, fmt.Errorf("read %s: %w", path, err)
		}
		if gone == res.Exists || !bytes.Equal(again, res.Before) {
			continue
		}
		return res, write(&res, path, newMode, now)
	}
	return res, fmt.Errorf("%s: %w", path, ErrChanged)
}

// plan reads the file and computes its new content (see Edit); it writes nothing.
func plan(path string, newMode fs.FileMode, change func(root *Object) error) (Result, error) {
	res := Result{Path: path}
	if target, err := filepath.EvalSymlinks(path); err == nil {
		res.Path = target
	}
	before, err := os.ReadFile(res.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		before = nil
	case err != nil:
		return res, fmt.Errorf("read %s: %w", path, err)
	case len(before) == 0:
		return res, fmt.Errorf("%s: %w", path, ErrEmptyFile)
	default:
		res.Exists = true
	}
	res.Before = before

	bom := []byte("\xef\xbb\xbf")
	text := bytes.TrimPrefix(before, bom)
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
	if bytes.HasPrefix(before, bom) {
		res.After = append(bytes.Clone(bom), res.After...)
	}
	res.Changed = !res.Exists || !bytes.Equal(original, Encode(root, ""))
	return res, nil
}

// write backs up the file res was planned from and replaces it with res.After.
func write(res *Result, path string, newMode fs.FileMode, now time.Time) error {
	var before []byte
	if res.Exists {
		before = append([]byte{}, res.Before...) // not nil: an empty file is backed up too
	}
	var err error
	res.Backup, err = atomicfile.Replace(res.Path, before, res.After, newMode, now)
	return err
}
