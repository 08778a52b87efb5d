// Package toolinput reads what the adapters record of a tool call's input: a one-line summary of
// its arguments and the file paths they name, plus the one way a long text is cut. The three
// harness decoders share it so that a tool call reads the same whichever harness made it.
package toolinput

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
)

// The bounds, in bytes or paths, of what this package returns.
const (
	// MaxSummary bounds Summary's rendering of a tool input.
	MaxSummary = 512
	// MaxPathLen is the longest string LooksLikePath accepts.
	MaxPathLen = 4096
	// MaxFiles bounds how many paths Files takes from one tool input.
	MaxFiles = 64
)

// pathFields are the tool input fields that name one file or directory, in the order Files reads
// them: filePath (OpenCode's tools), path (OpenCode, OpenClaw, Claude Code's Grep and Glob),
// file_path (Claude Code's Read, Write and Edit; common among MCP tools) and notebook_path
// (Claude Code's NotebookEdit).
var pathFields = [...]string{"filePath", "path", "file_path", "notebook_path"}

// pathListFields are the tool input fields that name a list of files, read after pathFields.
var pathListFields = [...]string{"paths", "file_paths", "filePaths"}

// Summary renders a tool input object as one line of JSON with sorted keys and numbers as
// written, bounded to MaxSummary by Bound; "" for an empty or non-object input.
func Summary(input json.RawMessage) string {
	if !adapters.IsObject(input) {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil || len(m) == 0 {
		return ""
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(m) != nil {
		return ""
	}
	return Bound(strings.TrimSpace(b.String()), MaxSummary)
}

// Files returns the paths a tool input object names, in this order: the string fields filePath,
// path, file_path and notebook_path, then the string lists paths, file_paths and filePaths. It
// skips values that are not strings, that do not look like paths (LooksLikePath) and duplicates,
// and keeps at most MaxFiles; nil when there are none or input is not an object.
func Files(input json.RawMessage) []string {
	if !adapters.IsObject(input) {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(input, &fields) != nil {
		return nil
	}
	var files []string
	add := func(raw json.RawMessage) {
		var p string
		if json.Unmarshal(raw, &p) == nil && LooksLikePath(p) && !slices.Contains(files, p) && len(files) < MaxFiles {
			files = append(files, p)
		}
	}
	for _, name := range pathFields {
		add(fields[name])
	}
	for _, name := range pathListFields {
		var list []json.RawMessage
		if !adapters.IsArray(fields[name]) || json.Unmarshal(fields[name], &list) != nil {
			continue
		}
		for _, raw := range list {
			add(raw)
		}
	}
	return files
}

// AppendFiles appends to files the paths Files finds in input that files does not hold yet.
func AppendFiles(files []string, input json.RawMessage) []string {
	for _, p := range Files(input) {
		if !slices.Contains(files, p) {
			files = append(files, p)
		}
	}
	return files
}

// LooksLikePath reports whether s could be a file path: non-blank, at most MaxPathLen bytes,
// without surrounding space, valid UTF-8, no control characters, not a URL.
func LooksLikePath(s string) bool {
	if s == "" || len(s) > MaxPathLen || strings.TrimSpace(s) != s || !utf8.ValidString(s) ||
		strings.Contains(s, "://") {
		return false
	}
	return strings.IndexFunc(s, unicode.IsControl) < 0
}

// Bound cuts s to max bytes at a rune boundary and marks the cut with a line saying how many bytes
// were dropped ("\n…[N bytes truncated]"), so the result may exceed max by that line. A string of
// at most max bytes comes back as it is.
func Bound(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n…[%d bytes truncated]", len(s)-cut)
}
