package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
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

// maxSearchBody bounds a search request's body.
const maxSearchBody = 64 << 10

// postSearch serves POST /api/sessions/search.
func (s *Server) postSearch(r *http.Request) (any, error) {
	if _, err := parseParams(r); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, min(s.MaxBodyBytes, maxSearchBody)))
	if err != nil {
		return nil, err
	}
	var req SearchRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, Errorf(ECodeBadJSON, "body: "+err.Error())
	}
	return s.searchSessions(r.Context(), req)
}

// searchSessions runs one search. Errors are the API's: a bad query or filter is a 400, an
// unknown family session a 404.
func (s *Server) searchSessions(ctx context.Context, req SearchRequest) (SearchReply, error) {
	if strings.TrimSpace(req.Query) == "" {
		return SearchReply{}, Errorf(ECodeInvalid, "query required")
	}
	if _, err := checkHarness(req.Harness, "harness"); err != nil {
		return SearchReply{}, err
	}
	if req.Limit < 0 || req.Limit > maxSearchLimit {
		return SearchReply{}, Errorf(ECodeInvalid, fmt.Sprintf("limit %d: want 1 to %d", req.Limit, maxSearchLimit))
	}
	res, err := s.Engine.Search(ctx, engine.SearchQuery{
		Scope: req.Scope, Query: req.Query, Session: req.Session, Harness: req.Harness,
		Project: req.Project, Role: req.Role, Since: req.Since, Until: req.Until,
		Limit: req.Limit, Cursor: req.Cursor,
	})
	if err != nil {
		return SearchReply{}, notFound(err, "session "+req.Session)
	}
	reply := SearchReply{Hits: make([]SearchHit, 0, len(res.Hits)), Cursor: res.Cursor}
	for _, h := range res.Hits {
		reply.Hits = append(reply.Hits, SearchHit{
			Session: h.Session.ID, Harness: h.Session.Harness, Project: h.Session.Project,
			Title: h.Session.Title, Turn: h.Turn, Role: h.Role, Time: h.At, Snippet: h.Snippet, Score: h.Score,
		})
	}
	return reply, nil
}

// maxSearchLimit is the most hits one page may ask for.
const maxSearchLimit = 200

// DeleteReply is the reply of DELETE /api/sessions/{key}: what was removed.
type DeleteReply struct {
	Session     string `json:"session"`
	Turns       uint64 `json:"turns"`
	Checkpoints int    `json:"checkpoints"`
}

// deleteSession serves DELETE /api/sessions/{key}: the session, its turns, their postings and
// its checkpoints are removed (engine.Engine.DeleteSession, under the session's lock, between
// two of its events); 404 when it is not stored.
func (s *Server) deleteSession(r *http.Request) (any, error) {
	key, err := pathKey(r)
	if err != nil {
		return nil, err
	}
	p, err := parseParams(r, "scope")
	if err != nil {
		return nil, err
	}
	d, err := s.Engine.DeleteSession(r.Context(), p.scope(s.scope()), key)
	if err != nil {
		return nil, notFound(err, "session "+key)
	}
	s.Logger.Info("session deleted", "session", key, "turns", d.Turns, "checkpoints", d.Checkpoints)
	return DeleteReply{Session: key, Turns: d.Turns, Checkpoints: d.Checkpoints}, nil
}

// IndexReply is the search index's state, as GET /api/index and POST /api/index/rebuild show it.
type IndexReply struct {
	Enabled  bool   `json:"enabled"`
	Version  int    `json:"version"`
	Building bool   `json:"building"` // searches see only the turns indexed so far
	Running  bool   `json:"running"`  // a rebuild runs now
	Done     uint64 `json:"done"`     // turns indexed by the rebuild so far
	Total    uint64 `json:"total"`    // turns it has to index
	// Started is set by POST /api/index/rebuild when it started a rebuild (false: one runs).
	Started bool `json:"started,omitempty"`
}

func indexReply(st kv.IndexStatus) IndexReply {
	return IndexReply{Enabled: st.Enabled, Version: st.Version, Building: st.Building, Running: st.Running, Done: st.Done, Total: st.Total}
}

// getIndex serves GET /api/index.
func (s *Server) getIndex(r *http.Request) (any, error) {
	if _, err := parseParams(r); err != nil {
		return nil, err
	}
	return indexReply(s.store().IndexStatus()), nil
}

// postReindex serves POST /api/index/rebuild: it starts rebuilding the index in the background
// (unless a rebuild runs) and replies with its state; poll GET /api/index for progress.
func (s *Server) postReindex(r *http.Request) (any, error) {
	if _, err := parseParams(r); err != nil {
		return nil, err
	}
	if s.store().Index == nil {
		return nil, Errorf(ECodeUnavailable, "the sidecar runs without a search index")
	}
	started, err := s.Engine.StartReindex(r.Context())
	if err != nil {
		return nil, err
	}
	reply := indexReply(s.store().IndexStatus())
	reply.Started = started
	return reply, nil
}
