package proxy

import (
	"context"
	"errors"
	"time"
)

// SearchRequest is the body of POST /api/sessions/search. Only Query is required.
type SearchRequest struct {
	Query   string    `json:"query"`
	Scope   string    `json:"scope,omitempty"`   // the memory scope; the server's by default
	Session string    `json:"session,omitempty"` // a session key: search it and its descendants (its family)
	Harness string    `json:"harness,omitempty"`
	Project string    `json:"project,omitempty"`
	Role    string    `json:"role,omitempty"` // user, assistant, tool or system
	Since   time.Time `json:"since,omitzero"`
	Until   time.Time `json:"until,omitzero"`
	Limit   int       `json:"limit,omitempty"`  // hits per page; default 20, at most 200
	Cursor  string    `json:"cursor,omitempty"` // the previous page's cursor
}

// SearchHit is one matching turn.
type SearchHit struct {
	Session string    `json:"session"` // the session's id as /api/sessions lists it
	Harness string    `json:"harness"`
	Project string    `json:"project"`
	Title   string    `json:"title"`
	Turn    uint64    `json:"turn"` // the turn's seq, as the transcript API numbers it
	Role    string    `json:"role"`
	Time    time.Time `json:"time,omitzero"`
	Snippet string    `json:"snippet"` // about 200 characters around the best match, matches in **bold**, redacted
	Score   float64   `json:"score"`
}

// SearchReply is the reply of POST /api/sessions/search: hits best first, and a cursor for the
// next page ("" on the last).
type SearchReply struct {
	Hits   []SearchHit `json:"hits"`
	Cursor string      `json:"cursor"`
}

// searchSessions runs one search. Errors are the API's: a bad query or filter is a 400.
func (s *Server) searchSessions(ctx context.Context, req SearchRequest) (SearchReply, error) {
	return SearchReply{}, errors.New("search: not built yet")
}
