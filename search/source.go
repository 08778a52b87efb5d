package search

import (
	"context"
	"time"
)

// Doc names one indexed turn: the session (heirloom's session id, within the searched scope) and
// the turn's Seq in it.
type Doc struct {
	Session string
	Seq     uint64
}

// Posting is one turn's entry in one term's posting list, as the store keeps it.
type Posting struct {
	Doc  Doc
	Term string // the indexed term; for a prefix lookup, the full term that matched
	TF   int    // how often the term occurs in the turn
	Len  int    // how many terms the turn has in all (its length for BM25)
	Role string // the turn's role: "user", "assistant", "tool" or "system"
	At   time.Time
	// Stamp orders postings by when their turn was first indexed (a counter of the store's; a
	// turn replaced in place keeps its stamp). A cursor keeps the Stats.Stamp of its first page
	// and later pages ignore postings above it, so pages stay stable while turns are added, and
	// a turn that grows between pages is seen with its new text rather than lost.
	Stamp uint64
}

// Stats are the collection figures BM25 needs, for the whole searched scope.
type Stats struct {
	Docs  uint64 // indexed turns
	Terms uint64 // their lengths summed (Posting.Len over all docs)
	Stamp uint64 // the newest Posting.Stamp written
}

// Source is one consistent, read-only view of a scope's index; the store implements it over a
// snapshot. Methods return ctx's error once it is done.
type Source interface {
	Stats(ctx context.Context) (Stats, error)
	// Postings calls fn for every posting of term, or, with prefix, of every term that starts
	// with term, in no promised order. An error from fn stops the walk and is returned.
	Postings(ctx context.Context, term string, prefix bool, fn func(Posting) error) error
	// Text returns the turn's text as it was indexed (for phrase checks and snippets).
	Text(ctx context.Context, d Doc) (string, error)
}

// SessionSource is a Source that reads a term's postings in given sessions only, without
// walking the rest of the term's list (the store keeps postings by term, then session). Run uses
// it for Options.Sessions when the Source has it.
type SessionSource interface {
	// SessionPostings calls fn for every posting of term (a whole term, not a prefix) whose
	// turn is in one of sessions.
	SessionPostings(ctx context.Context, term string, sessions []string, fn func(Posting) error) error
}
