package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/search"
)

// SearchQuery is one search over a scope's transcripts. Only Query is required.
type SearchQuery struct {
	Scope   string // "" means the engine's
	Query   string // search's syntax: words ANDed, OR, "phrase", -exclude, prefix*
	Session string // a session id: search it and its descendants (its family)
	Harness string
	Project string // the reported or the normalised directory
	Role    string // user, assistant, tool or system
	Since   time.Time
	Until   time.Time
	Limit   int    // hits per page (search's default and cap apply)
	Cursor  string // the previous page's
}

// SearchHit is one matching turn with its session's description.
type SearchHit struct {
	Session kv.Session
	Turn    uint64
	Role    string
	At      time.Time
	Snippet string // redacted, matches marked
	Score   float64
}

// SearchResult is one page of hits, best first; Cursor is "" on the last page.
type SearchResult struct {
	Hits   []SearchHit
	Cursor string
}

// InvalidError is a request the engine refuses as malformed (a bad query, an unknown role): its
// message is for the caller.
type InvalidError struct{ Message string }

func (e *InvalidError) Error() string { return e.Message }

// searchesAtOnce is how many searches run at once (see Search); the machine has few cores and
// each holds its candidates in memory.
const searchesAtOnce = 2

// searchRoles are the roles a search may filter by.
var searchRoles = map[string]bool{"": true, "user": true, "assistant": true, "tool": true, "system": true}

// Search runs q over the transcripts of its scope, from one snapshot of the store. Texts that
// leave it (snippets, titles) are redacted as the blocks are.
func (e *Engine) Search(ctx context.Context, q SearchQuery) (SearchResult, error) {
	if !searchRoles[q.Role] {
		return SearchResult{}, &InvalidError{Message: fmt.Sprintf("role %q: want user, assistant, tool or system", q.Role)}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && q.Until.Before(q.Since) {
		return SearchResult{}, &InvalidError{Message: "until is before since"}
	}
	parsed, err := search.Parse(q.Query)
	if err != nil {
		return SearchResult{}, &InvalidError{Message: err.Error()}
	}
	// A search of common words over a large store holds a candidate for every turn that has
	// them (tens of MiB at a GB of transcripts): at most searchesAtOnce run together, so that
	// memory stays bounded however many are asked for; the rest wait their turn.
	select {
	case e.searching <- struct{}{}:
		defer func() { <-e.searching }()
	case <-ctx.Done():
		return SearchResult{}, ctx.Err()
	}
	scope := q.Scope
	if scope == "" {
		scope = e.Scope
	}
	x, err := e.Store.IndexReader(ctx, scope)
	if err != nil {
		return SearchResult{}, err
	}
	defer x.Close()

	src := indexSource{x: x}
	f := sessionFilter{x: x, harness: q.Harness, project: q.Project}
	if q.Session != "" {
		if f.family, err = family(ctx, x, q.Session); err != nil {
			return SearchResult{}, err
		}
	}
	opts := search.Options{
		Limit: q.Limit, Cursor: q.Cursor, Role: q.Role, Since: q.Since, Until: q.Until,
		Clean: inject.Redact,
		Bind:  strings.Join([]string{scope, q.Session, q.Harness, q.Project}, "\x00"),
	}
	if f.family != nil {
		// Only the family's postings are read (and its document frequencies scored with).
		opts.Sessions = slices.Sorted(maps.Keys(f.family))
	}
	if f.filters() {
		// Without session-level filters no session is read until the page is known: a session
		// and its postings are deleted in one batch, so every posting in the snapshot has one.
		opts.Allow = func(id string) (bool, error) { return f.allow(ctx, id) }
	}
	page, err := search.Run(ctx, src, parsed, opts)
	var bad *search.CursorError
	if errors.As(err, &bad) {
		return SearchResult{}, &InvalidError{Message: err.Error()}
	}
	if err != nil {
		return SearchResult{}, err
	}
	out := SearchResult{Hits: make([]SearchHit, 0, len(page.Hits)), Cursor: page.Cursor}
	for _, h := range page.Hits {
		sess, ok := f.seen[h.Doc.Session]
		if !ok {
			if sess, err = x.Session(ctx, h.Doc.Session); err != nil {
				return SearchResult{}, fmt.Errorf("search: the session of a hit: %w", err)
			}
			f.remember(sess)
		}
		sess.Title = inject.Redact(sess.Title)
		out.Hits = append(out.Hits, SearchHit{Session: sess, Turn: h.Doc.Seq, Role: h.Role, At: h.At, Snippet: h.Snippet, Score: h.Score})
	}
	return out, nil
}

// family returns the ids of session id and all its descendants; an error wrapping
// kv.ErrNotFound when id is not stored.
func family(ctx context.Context, x *kv.IndexReader, id string) (map[string]bool, error) {
	if _, err := x.Session(ctx, id); err != nil {
		return nil, err
	}
	return descendants(ctx, x, id, "")
}

// descendants returns the ids of session id and all its descendants, leaving out skip and its
// own ("" skips none).
func descendants(ctx context.Context, x *kv.IndexReader, id, skip string) (map[string]bool, error) {
	out := map[string]bool{id: true}
	for queue := []string{id}; len(queue) > 0; queue = queue[1:] {
		kids, err := x.Children(ctx, queue[0])
		if err != nil {
			return nil, err
		}
		for _, k := range kids {
			if !out[k] && k != skip {
				out[k] = true
				queue = append(queue, k)
			}
		}
	}
	return out, nil
}

// sessionFilter decides, once per session, whether its turns may be hits, and keeps each
// session it read for the hits' descriptions.
type sessionFilter struct {
	x                *kv.IndexReader
	family           map[string]bool // nil: any session
	harness, project string
	seen             map[string]kv.Session
}

// filters reports whether any session-level filter is set.
func (f *sessionFilter) filters() bool {
	return f.family != nil || f.harness != "" || f.project != ""
}

func (f *sessionFilter) remember(sess kv.Session) {
	if f.seen == nil {
		f.seen = map[string]kv.Session{}
	}
	f.seen[sess.ID] = sess
}

func (f *sessionFilter) allow(ctx context.Context, id string) (bool, error) {
	if f.family != nil && !f.family[id] {
		return false, nil
	}
	sess, err := f.x.Session(ctx, id)
	if errors.Is(err, kv.ErrNotFound) {
		return false, nil // deleted after its postings were read: not in this snapshot
	}
	if err != nil {
		return false, err
	}
	f.remember(sess)
	if f.harness != "" && sess.Harness != f.harness {
		return false, nil
	}
	if f.project != "" && !inProject(sess, f.project) {
		return false, nil
	}
	return true, nil
}

// inProject reports whether the session's reported or normalised directory is project (as
// given or cleaned).
func inProject(sess kv.Session, project string) bool {
	clean := filepath.Clean(project)
	for _, dir := range []string{sess.Project, sess.ProjectNorm} {
		if dir != "" && (dir == project || dir == clean) {
			return true
		}
	}
	return false
}

// indexSource is a kv.IndexReader as search reads it.
type indexSource struct{ x *kv.IndexReader }

func (s indexSource) Stats(ctx context.Context) (search.Stats, error) {
	f, err := s.x.Figures(ctx)
	return search.Stats{Docs: f.Docs, Terms: f.Terms, Stamp: f.Stamp}, err
}

func (s indexSource) Postings(ctx context.Context, term string, prefix bool, fn func(search.Posting) error) error {
	return s.x.Postings(ctx, term, prefix, func(p kv.Posting) error { return fn(searchPosting(p)) })
}

func (s indexSource) SessionPostings(ctx context.Context, term string, sessions []string, fn func(search.Posting) error) error {
	return s.x.SessionPostings(ctx, term, sessions, func(p kv.Posting) error { return fn(searchPosting(p)) })
}

// searchPosting is p as search reads it.
func searchPosting(p kv.Posting) search.Posting {
	return search.Posting{
		Doc: search.Doc{Session: p.Session, Seq: p.Seq}, Term: p.Term, TF: p.TF, Len: p.Len,
		Role: p.Role, At: p.At, Stamp: p.Stamp,
	}
}

// Text is the turn as it was indexed (kv.IndexedText: its tool's name, then its text), so that
// a hit found by the tool's name gets its snippet and a phrase may span the two.
func (s indexSource) Text(ctx context.Context, d search.Doc) (string, error) {
	t, err := s.x.Turn(ctx, d.Session, d.Seq)
	if err != nil {
		return "", err
	}
	return kv.IndexedText(&t), nil
}
