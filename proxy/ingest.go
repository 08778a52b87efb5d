package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// errOutsideRoots is returned for a transcript path heirloom refuses to read.
var errOutsideRoots = errors.New("outside the allowed transcript roots")

// ingest reads the new part of session id's transcript (from the stored offset, at most
// MaxReadBytes) and appends its turns. A missing file is not an error: the harness may not have
// written it yet. A file that shrank or was replaced is read again from the start; turns already
// stored are recognised by their source id and not stored twice.
func (s *Server) ingest(ctx context.Context, tr adapters.Transcripts, id string) error {
	sess, err := s.Store.GetSession(ctx, s.Scope, id)
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	pos := sess.Transcript
	if pos.Path == "" || tr == nil {
		return nil
	}
	resolved, err := s.allowedPath(pos.Path)
	if errors.Is(err, fs.ErrNotExist) {
		s.Logger.Debug("transcript not there yet", "session", id, "path", pos.Path)
		return nil
	}
	if err != nil {
		s.Logger.Warn("transcript refused", "session", id, "path", pos.Path, "reason", err)
		return nil
	}
	f, err := os.Open(resolved)
	if err != nil {
		s.Logger.Warn("transcript unreadable", "session", id, "path", pos.Path, "error", err)
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat transcript %s: %w", pos.Path, err)
	}
	ident := fileIdent(fi)
	offset := pos.Offset
	if (pos.Ident != "" && ident != pos.Ident) || fi.Size() < offset {
		offset = 0 // replaced or truncated: read it again; stored turns are deduplicated
	}
	if fi.Size() == offset && ident == pos.Ident {
		return nil
	}
	n := min(fi.Size()-offset, s.MaxReadBytes)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, offset); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read transcript %s: %w", pos.Path, err)
	}
	turns, consumed := tr.ParseTranscript(buf, false)
	if consumed == 0 && n == s.MaxReadBytes {
		// One record larger than the read cap: skip past it rather than stall forever.
		s.Logger.Warn("transcript record over the read cap skipped", "session", id, "path", pos.Path, "offset", offset, "cap", s.MaxReadBytes)
		turns, consumed = tr.ParseTranscript(buf, true)
	}
	stored := make([]kv.Turn, 0, len(turns))
	for _, t := range turns {
		stored = append(stored, kv.Turn{SourceID: t.ID, Role: t.Role, Text: t.Text, Tool: t.Tool, Files: t.Files, At: t.At})
	}
	next := kv.TranscriptPos{Path: pos.Path, Offset: offset + int64(consumed), Ident: ident}
	if _, err := s.Store.AppendTurns(ctx, s.Scope, id, stored, next); err != nil {
		return fmt.Errorf("store transcript of %s: %w", id, err)
	}
	return nil
}

// allowedPath resolves symlinks in path and returns the result if it lies under one of the
// transcript roots (themselves resolved). A path that does not exist returns an error wrapping
// fs.ErrNotExist; one outside every root, errOutsideRoots.
func (s *Server) allowedPath(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%w: %q is not absolute", errOutsideRoots, path)
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	for _, root := range s.TranscriptRoots {
		r, err := filepath.EvalSymlinks(root)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(r, resolved)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return resolved, nil
		}
	}
	return "", fmt.Errorf("%w: %s resolves to %s", errOutsideRoots, path, resolved)
}

// readSmallFile reads a small sidecar file of the harness (sub-agent metadata) under the
// transcript roots; at most 1 MiB.
func (s *Server) readSmallFile(path string) ([]byte, error) {
	resolved, err := s.allowedPath(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(resolved)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

// Bounds of awaitSpawnRecord (its longest wait is Server.SpawnRecordWait).
const (
	spawnRecordPoll  = 20 * time.Millisecond // how often it looks
	spawnRecordTailB = 256 << 10             // how much of the transcript's end it searches
)

// awaitSpawnRecord waits, briefly and boundedly, until the parent's transcript holds the
// spawning tool call toolUseID. Claude Code writes transcripts asynchronously: a sub-agent can
// start before its parent's file shows the turn that spawned it, or before the file exists, and
// the inherited tail would then miss the parent's latest work. In a session whose writes have
// caught up, the first look finds the record and nothing waits.
func (s *Server) awaitSpawnRecord(ctx context.Context, parent kv.Session, toolUseID string) {
	if parent.Transcript.Path == "" || toolUseID == "" {
		return
	}
	path, err := s.allowedPath(parent.Transcript.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	deadline := time.Now().Add(s.SpawnRecordWait)
	needle := []byte(`"` + toolUseID + `"`)
	for {
		if path == "" {
			path, _ = s.allowedPath(parent.Transcript.Path)
		}
		if path != "" && tailContains(path, needle) {
			return
		}
		if time.Now().After(deadline) {
			s.Logger.Debug("spawn not in the parent's transcript yet; inheriting what is there", "parent", parent.ID, "spawn", toolUseID)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(spawnRecordPoll):
		}
	}
}

// tailContains reports whether the last spawnRecordTailB bytes of the file at path hold needle.
func tailContains(path string, needle []byte) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	off := max(fi.Size()-spawnRecordTailB, 0)
	buf := make([]byte, fi.Size()-off)
	n, _ := f.ReadAt(buf, off)
	return bytes.Contains(buf[:n], needle)
}
