package engine

import (
	"bufio"
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

// ingested is what one ingest did.
type ingested struct {
	Session kv.Session // the session as it now stands
	Added   []kv.Turn  // the turns appended, with their Seq
	// Behind says the transcript holds more than a hook reads (see Config.HookReadBytes): it
	// is being read in the background, and the stored turns lag behind the file.
	Behind bool
}

// ingest reads the new part of sess's transcript, from the stored offset, and appends its
// turns, while the harness waits: at most Config.HookReadBytes. With more unread than that it
// reads nothing now and catches up in the background, under the lock of root (the top-level
// session whose lock guards sess), HookReadBytes at a time. A missing file is not an error:
// the harness may not have written it yet. A file that shrank or was replaced is read again
// from the start; turns already stored are recognised by their source id and not stored twice.
// The caller holds root's lock.
func (e *Engine) ingest(ctx context.Context, h adapters.Registration, sess kv.Session, root string) (ingested, error) {
	got := ingested{Session: sess}
	if sess.Transcript.Path == "" || h.Transcripts == nil {
		return got, nil
	}
	if e.catchups.running(lockKey(sess.Scope, sess.ID)) {
		got.Behind = true
		return got, nil
	}
	chunk, err := e.readTranscript(sess, e.Config.HookReadBytes)
	if err != nil || chunk == nil {
		return got, err
	}
	if chunk.buf == nil { // more unread than a hook reads
		got.Behind = e.catchUp(sess.Scope, sess.ID, root, h)
		return got, nil
	}
	e.stats.hookBytes.Add(int64(len(chunk.buf)))
	// A record as long as what a hook reads, with no end yet, may be longer still: the
	// background reads up to MaxReadBytes of it. Only a hook that may read as much skips it.
	parsed := e.parseChunk(h, sess, chunk, e.Config.HookReadBytes >= e.Config.MaxReadBytes)
	if parsed.consumed == 0 && chunk.atCap && e.Config.HookReadBytes < e.Config.MaxReadBytes {
		got.Behind = e.catchUp(sess.Scope, sess.ID, root, h)
		return got, nil
	}
	a, err := e.storeChunk(ctx, sess, parsed)
	if err != nil {
		return got, err
	}
	got.Session, got.Added = a.Session, a.Turns
	return got, nil
}

// ingestID is ingest for a session known by id; a session not stored is skipped.
func (e *Engine) ingestID(ctx context.Context, h adapters.Registration, id, root string) (ingested, error) {
	sess, err := e.Store.GetSession(ctx, e.Scope, id)
	if errors.Is(err, kv.ErrNotFound) {
		return ingested{}, nil
	}
	if err != nil {
		return ingested{}, err
	}
	return e.ingest(ctx, h, sess, root)
}

// transcriptChunk is bytes read from a transcript file.
type transcriptChunk struct {
	buf    []byte // what was read, from offset
	offset int64  // where buf starts in the file
	ident  string // the file's identity (see fileIdent)
	unread int64  // bytes from offset to the end of the file
	atCap  bool   // buf is as long as the read was allowed to be
}

// readTranscript reads the unread part of sess's transcript, at most max bytes. It returns nil
// (and no error) when there is nothing to read: no such file yet, one outside the roots
// (logged), or nothing new.
func (e *Engine) readTranscript(sess kv.Session, max int64) (*transcriptChunk, error) {
	pos := sess.Transcript
	resolved, err := e.allowedPath(pos.Path)
	if errors.Is(err, fs.ErrNotExist) {
		e.Logger.Debug("transcript not there yet", "session", sess.ID, "path", pos.Path)
		return nil, nil
	}
	if err != nil {
		e.Logger.Warn("transcript refused", "session", sess.ID, "path", pos.Path, "reason", err)
		return nil, nil
	}
	f, err := os.Open(resolved)
	if err != nil {
		e.warn("transcript unreadable", err, "session", sess.ID, "path", pos.Path)
		return nil, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat transcript %s: %w", pos.Path, err)
	}
	ident := fileIdent(fi)
	offset := pos.Offset
	if (pos.Ident != "" && ident != pos.Ident) || fi.Size() < offset {
		offset = 0 // replaced or truncated: read it again; stored turns are deduplicated
	}
	if fi.Size() == offset && ident == pos.Ident {
		return nil, nil
	}
	c := &transcriptChunk{offset: offset, ident: ident, unread: fi.Size() - offset}
	if c.unread > max {
		return c, nil // the caller decides: too much to read now
	}
	c.buf = make([]byte, c.unread)
	if _, err := f.ReadAt(c.buf, offset); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read transcript %s: %w", pos.Path, err)
	}
	c.atCap = c.unread == max
	return c, nil
}

// parsedChunk is a transcript chunk's complete records, and the position after them.
type parsedChunk struct {
	turns    []kv.Turn
	next     kv.TranscriptPos
	consumed int
}

// parseChunk parses c's complete records. With skip, a record larger than the read cap (c is
// full and holds no complete record) is skipped rather than stall the transcript forever.
func (e *Engine) parseChunk(h adapters.Registration, sess kv.Session, c *transcriptChunk, skip bool) parsedChunk {
	turns, consumed := h.Transcripts.ParseTranscript(c.buf, false)
	if consumed == 0 && c.atCap && skip {
		e.Logger.Warn("transcript record over the read cap skipped", "session", sess.ID, "path", sess.Transcript.Path, "offset", c.offset, "cap", len(c.buf))
		turns, consumed = h.Transcripts.ParseTranscript(c.buf, true)
	}
	return parsedChunk{
		turns:    storedTurns(turns),
		next:     kv.TranscriptPos{Path: sess.Transcript.Path, Offset: c.offset + int64(consumed), Ident: c.ident},
		consumed: consumed,
	}
}

// appendChunk parses c and appends its complete records' turns to sess, with the transcript
// position after them.
func (e *Engine) appendChunk(ctx context.Context, h adapters.Registration, sess kv.Session, c *transcriptChunk) (kv.Appended, error) {
	return e.storeChunk(ctx, sess, e.parseChunk(h, sess, c, true))
}

// storeChunk appends a parsed chunk's turns to sess.
func (e *Engine) storeChunk(ctx context.Context, sess kv.Session, p parsedChunk) (kv.Appended, error) {
	a, err := e.Store.AppendTranscript(ctx, sess.Scope, sess.ID, p.turns, p.next)
	if err != nil {
		return kv.Appended{}, fmt.Errorf("store transcript of %s: %w", sess.ID, err)
	}
	return a, nil
}

// storedTurns converts an adapter's turns to the store's.
func storedTurns(turns []adapters.Turn) []kv.Turn {
	out := make([]kv.Turn, 0, len(turns))
	for _, t := range turns {
		out = append(out, kv.Turn{SourceID: t.ID, Role: t.Role, Text: t.Text, Tool: t.Tool, Files: t.Files, At: t.At, Unindexed: adapters.OwnTraffic(t)})
	}
	return out
}

// catchUp starts reading session id's transcript in the background, HookReadBytes at a time,
// each chunk stored under root's lock (hooks of the session interleave with it), until it has
// read to the end. It reports whether a catch-up is running (false when the engine is closing).
func (e *Engine) catchUp(scope, id, root string, h adapters.Registration) bool {
	key := lockKey(scope, id)
	if !e.catchups.start(key) {
		return true
	}
	done := func() { e.catchups.finish(key) }
	started := e.goBackground(func(ctx context.Context) {
		defer done()
		e.stats.catchUps.Add(1)
		begin := time.Now()
		for reads := 1; ctx.Err() == nil; reads++ {
			more, err := e.catchUpOnce(ctx, h, scope, id, root)
			if err != nil {
				if ctx.Err() == nil {
					e.warn("transcript catch-up stopped", err, "session", id)
				}
				return
			}
			if !more {
				e.Logger.Debug("transcript caught up", "session", id, "reads", reads, "took", time.Since(begin).Round(time.Millisecond).String())
				return
			}
		}
	})
	if !started {
		done()
	}
	return started
}

// catchUpOnce reads and stores one chunk of a catch-up; more says there is more to read. It
// reads and parses without any lock (while a catch-up runs, no hook reads this transcript) and
// takes root's lock only to store what it parsed, so the session's hooks wait for a store, not
// for a parse. A chunk is HookReadBytes, or up to MaxReadBytes for one longer record.
func (e *Engine) catchUpOnce(ctx context.Context, h adapters.Registration, scope, id, root string) (more bool, err error) {
	sess, err := e.Store.GetSession(ctx, scope, id)
	if err != nil {
		return false, err
	}
	var c *transcriptChunk
	var parsed parsedChunk
	for _, size := range []int64{e.Config.HookReadBytes, e.Config.MaxReadBytes} {
		if c, err = e.readTranscript(sess, size); err != nil || c == nil {
			return false, err
		}
		if c.buf == nil { // more unread than this read takes
			if c, err = e.readPart(sess, c, size); err != nil {
				return false, err
			}
		}
		final := size == e.Config.MaxReadBytes
		parsed = e.parseChunk(h, sess, c, final)
		if final || parsed.consumed > 0 || !c.atCap {
			break
		}
	}
	e.stats.backgroundBytes.Add(int64(len(c.buf)))
	unlock := e.locks.lock(lockKey(scope, root))
	a, err := e.storeChunk(ctx, sess, parsed)
	unlock()
	if err != nil {
		return false, err
	}
	// Nothing consumed without reaching the cap is a record still being written: the next
	// hook reads it.
	next := a.Session.Transcript.Offset
	return next > c.offset && next < c.offset+c.unread, nil
}

// readPart reads max bytes of the transcript chunk c describes, from its offset.
func (e *Engine) readPart(sess kv.Session, c *transcriptChunk, max int64) (*transcriptChunk, error) {
	f, err := e.openAllowed(sess.Transcript.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c.buf = make([]byte, max)
	n, err := f.ReadAt(c.buf, c.offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read transcript %s: %w", sess.Transcript.Path, err)
	}
	c.buf, c.atCap = c.buf[:n], int64(n) == max
	return c, nil
}

// recentFromFile returns the turns of the last window bytes of sess's transcript, parsed but not
// stored: what a reply needs now while the stored turns lag behind (see ingested.Behind). The
// first, partial line of that window is skipped.
func (e *Engine) recentFromFile(h adapters.Registration, sess kv.Session, window int64) []kv.Turn {
	if h.Transcripts == nil || sess.Transcript.Path == "" {
		return nil
	}
	resolved, err := e.allowedPath(sess.Transcript.Path)
	if err != nil {
		return nil
	}
	buf, off, err := fileEnd(resolved, window)
	if err != nil {
		return nil
	}
	if off > 0 {
		nl := bytes.IndexByte(buf, '\n')
		if nl < 0 {
			return nil
		}
		buf = buf[nl+1:]
	}
	turns, _ := h.Transcripts.ParseTranscript(buf, true)
	return storedTurns(turns)
}

// allowedPath resolves symlinks in path and returns the result if it lies under one of the
// transcript roots (themselves resolved). A path that does not exist returns an error wrapping
// fs.ErrNotExist; one outside every root, errOutsideRoots.
func (e *Engine) allowedPath(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%w: %q is not absolute", errOutsideRoots, path)
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	for _, root := range e.Config.TranscriptRoots {
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
func (e *Engine) readSmallFile(path string) ([]byte, error) {
	f, err := e.openAllowed(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

// readFirstLine reads the first line of the file at path (under the transcript roots), newline
// included, at most 1 MiB: a rollout's opening session_meta, without the rest.
func (e *Engine) readFirstLine(path string) ([]byte, error) {
	f, err := e.openAllowed(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, 1<<20))
	line, err := r.ReadBytes('\n')
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return line, err
}

// openAllowed opens the file at path if it lies under the transcript roots (see allowedPath).
func (e *Engine) openAllowed(path string) (*os.File, error) {
	resolved, err := e.allowedPath(path)
	if err != nil {
		return nil, err
	}
	return os.Open(resolved)
}

// Bounds of awaitSpawnRecord (its longest wait is Config.SpawnRecordWait).
const (
	spawnRecordPoll  = 20 * time.Millisecond // how often it looks
	spawnRecordTailB = 256 << 10             // how much of the transcript's end it searches
)

// awaitSpawnRecord waits, briefly and boundedly, until the parent's transcript holds the
// spawning tool call toolUseID. Claude Code writes transcripts asynchronously: a sub-agent can
// start before its parent's file shows the turn that spawned it, or before the file exists, and
// the inherited tail would then miss the parent's latest work. In a session whose writes have
// caught up, the first look finds the record and nothing waits.
func (e *Engine) awaitSpawnRecord(ctx context.Context, parent kv.Session, toolUseID string) {
	if parent.Transcript.Path == "" || toolUseID == "" || e.Config.SpawnRecordWait <= 0 {
		return
	}
	path, err := e.allowedPath(parent.Transcript.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	deadline := time.Now().Add(e.Config.SpawnRecordWait)
	// The transcript names the call as the harness does: a run id scoped by its session
	// ("<root>:<call id>", Codex) is looked for by its call id.
	if i := strings.LastIndexByte(toolUseID, ':'); i >= 0 {
		toolUseID = toolUseID[i+1:]
	}
	needle := []byte(`"` + toolUseID + `"`)
	for {
		if path == "" {
			path, _ = e.allowedPath(parent.Transcript.Path)
		}
		if path != "" && tailContains(path, needle) {
			return
		}
		if time.Now().After(deadline) {
			e.Logger.Debug("spawn not in the parent's transcript yet; inheriting what is there", "parent", parent.ID, "spawn", toolUseID)
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
	buf, _, err := fileEnd(path, spawnRecordTailB)
	return err == nil && bytes.Contains(buf, needle)
}

// fileEnd returns the last n bytes of the file at path (all of it when shorter) and where they
// start.
func fileEnd(path string, n int64) (buf []byte, off int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	off = max(fi.Size()-n, 0)
	buf = make([]byte, fi.Size()-off)
	got, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	return buf[:got], off, nil
}
