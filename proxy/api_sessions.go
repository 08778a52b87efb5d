package proxy

import (
	"cmp"
	"net/http"
	"path/filepath"

	"github.com/heirloom-dev/heirloom/kv"
)

// listSessions serves GET /api/sessions: the sessions of a scope, newest first, filtered by
// harness, project (the reported or the normalised directory), parent, status and top_level;
// or, with prefix alone, those whose id starts with it, in id order. An unknown harness or
// status is a 400, not an empty list.
//
// A project filter is applied here rather than in the store, since it matches either of two
// fields: it reads every session of the scope that passes the other filters.
func (s *Server) listSessions(r *http.Request) (any, error) {
	p, err := parseParams(r, "harness", "project", "parent", "status", "top_level", "limit", "scope", "prefix")
	if err != nil {
		return nil, err
	}
	limit, err := p.limit(defaultListLimit)
	if err != nil {
		return nil, err
	}
	if prefix := p["prefix"]; prefix != "" {
		for _, name := range []string{"harness", "project", "parent", "status", "top_level"} {
			if p[name] != "" {
				return nil, Errorf(ECodeInvalid, "prefix: give it alone (with limit and scope), not with "+name)
			}
		}
		list, err := s.store().SessionsByIDPrefix(r.Context(), p.scope(s.scope()), prefix, limit)
		if err != nil {
			return nil, err
		}
		return SessionsReply{Sessions: apiSessions(list)}, nil
	}
	harness, err := s.harnessParam(p)
	if err != nil {
		return nil, err
	}
	status, err := p.oneOf("status", kv.StatusActive, kv.StatusEnded)
	if err != nil {
		return nil, err
	}
	topLevel, err := p.bool("top_level")
	if err != nil {
		return nil, err
	}
	f := kv.SessionFilter{Harness: harness, ParentID: p["parent"], Status: status, TopLevel: topLevel, Limit: limit}
	project := p["project"]
	if project != "" {
		f.Limit = 0
	}
	list, err := s.store().ListSessions(r.Context(), p.scope(s.scope()), f)
	if err != nil {
		return nil, err
	}
	if project != "" {
		list = inProject(list, project, limit)
	}
	return SessionsReply{Sessions: apiSessions(list)}, nil
}

// inProject returns the first limit sessions of list whose Project or ProjectNorm is project
// (either as given or cleaned, so a trailing slash does not matter).
func inProject(list []kv.Session, project string, limit int) []kv.Session {
	clean := filepath.Clean(project)
	out := list[:0]
	for _, sess := range list {
		if len(out) == limit {
			break
		}
		for _, dir := range []string{sess.Project, sess.ProjectNorm} {
			if dir != "" && (dir == project || dir == clean) {
				out = append(out, sess)
				break
			}
		}
	}
	return out
}

// getSession serves GET /api/sessions/{key}: one session, the run that spawned it and how many
// sub-agents it has.
func (s *Server) getSession(r *http.Request) (any, error) {
	key, err := pathKey(r)
	if err != nil {
		return nil, err
	}
	p, err := parseParams(r, "scope")
	if err != nil {
		return nil, err
	}
	ctx, scope := r.Context(), p.scope(s.scope())
	sess, err := s.store().GetSession(ctx, scope, key)
	if err != nil {
		return nil, notFound(err, "session "+key)
	}
	run, err := s.runByChild(ctx, cmp.Or(sess.ParentScope, scope), key) // the parent's run
	if err != nil {
		return nil, err
	}
	kids, err := s.store().Children(ctx, scope, key)
	if err != nil {
		return nil, notFound(err, "session "+key)
	}
	return SessionReply{Session: apiSession(sess), Run: run, Children: len(kids)}, nil
}

// getTranscript serves GET /api/sessions/{key}/transcript: a page of turns from seq `from`
// (default 0), at most limit (default 200) of them. It reads a running session as far as it
// has been stored.
func (s *Server) getTranscript(r *http.Request) (any, error) {
	key, err := pathKey(r)
	if err != nil {
		return nil, err
	}
	p, err := parseParams(r, "from", "limit", "scope")
	if err != nil {
		return nil, err
	}
	from, err := p.seq("from")
	if err != nil {
		return nil, err
	}
	limit, err := p.limit(defaultTranscriptLimit)
	if err != nil {
		return nil, err
	}
	// One turn past the page tells whether there is a next page.
	turns, err := s.store().Turns(r.Context(), p.scope(s.scope()), key, from, limit+1)
	if err != nil {
		return nil, notFound(err, "session "+key)
	}
	reply := TranscriptReply{Turns: make([]APITurn, 0, min(len(turns), limit))}
	if len(turns) > limit {
		next := turns[limit].Seq
		reply.Next = &next
		turns = turns[:limit]
	}
	for _, t := range turns {
		reply.Turns = append(reply.Turns, apiTurn(t))
	}
	return reply, nil
}
