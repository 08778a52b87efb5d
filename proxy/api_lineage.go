package proxy

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/heirloom-dev/heirloom/kv"
)

// Bounds on one lineage reply.
const (
	maxLineageDepth = 64   // generations walked up, and down
	maxLineageNodes = 1000 // descendants listed
)

// getLineage serves GET /api/sessions/{key}/lineage: the session, its ancestors from the root
// down to its parent, and the tree of its descendants with the run that spawned each. The walk
// is bounded by maxLineageDepth and maxLineageNodes and never visits a session twice, so a
// damaged parent link cannot loop it; Truncated tells the client when anything was cut.
func (s *Server) getLineage(r *http.Request) (any, error) {
	key, err := pathKey(r)
	if err != nil {
		return nil, err
	}
	p, err := parseParams(r, "scope")
	if err != nil {
		return nil, err
	}
	scope := p.scope(s.scope())
	w := &lineageWalk{s: s, ctx: r.Context(), seen: map[string]bool{lineageKey(scope, key): true}}
	sess, err := s.store().GetSession(w.ctx, scope, key)
	if err != nil {
		return nil, notFound(err, "session "+key)
	}
	ancestors, err := w.ancestors(sess)
	if err != nil {
		return nil, err
	}
	descendants, err := w.descendants(scope, key, 1)
	if err != nil {
		return nil, err
	}
	return LineageReply{Session: apiSession(sess), Ancestors: ancestors, Descendants: descendants, Truncated: w.truncated}, nil
}

// lineageWalk is the state of one lineage request. It crosses scopes where a parent and its
// sub-agent live in different ones (an OpenClaw spawn under another agent id).
type lineageWalk struct {
	s         *Server
	ctx       context.Context
	seen      map[string]bool // sessions already placed in the reply (lineageKey)
	nodes     int             // descendants listed so far
	truncated bool
}

// ancestors returns sess's ancestors, root first. The walk stops at a parent that is not stored
// (not recorded yet), at a session already seen (a cycle) or after maxLineageDepth generations.
func (w *lineageWalk) ancestors(sess kv.Session) ([]APISession, error) {
	out := []APISession{}
	for id, scope := sess.ParentID, cmp.Or(sess.ParentScope, sess.Scope); id != ""; {
		if w.seen[lineageKey(scope, id)] || len(out) == maxLineageDepth {
			w.truncated = true
			break
		}
		w.seen[lineageKey(scope, id)] = true
		parent, err := w.s.store().GetSession(w.ctx, scope, id)
		if errors.Is(err, kv.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		out = append(out, apiSession(parent))
		id, scope = parent.ParentID, cmp.Or(parent.ParentScope, scope)
	}
	slices.Reverse(out)
	return out, nil
}

// descendants returns the tree below session id of scope, which sits depth-1 generations below
// the requested session; children oldest first (those in other scopes after).
func (w *lineageWalk) descendants(scope, id string, depth int) ([]LineageNode, error) {
	out := []LineageNode{}
	kids, err := w.s.store().Children(w.ctx, scope, id)
	if err != nil {
		return nil, err
	}
	if len(kids) > 0 && depth > maxLineageDepth {
		w.truncated = true
		return out, nil
	}
	for _, kid := range kids {
		if w.seen[lineageKey(kid.Scope, kid.ID)] || w.nodes == maxLineageNodes {
			w.truncated = true
			continue
		}
		w.seen[lineageKey(kid.Scope, kid.ID)] = true
		w.nodes++
		run, err := w.s.runByChild(w.ctx, scope, kid.ID) // the parent's run, in the parent's scope
		if err != nil {
			return nil, err
		}
		children, err := w.descendants(kid.Scope, kid.ID, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, LineageNode{Session: apiSession(kid), Run: run, Children: children})
	}
	return out, nil
}

// lineageKey names session id of scope in a walk's seen set.
func lineageKey(scope, id string) string { return scope + "\x00" + id }
