package proxy

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// listRuns serves GET /api/runs: the sub-agent runs of a scope, newest first, filtered by
// session (the runs it spawned, or for a top-level session every run of its tree), root session,
// parent session, child session, status, harness, sub-agent type and since (created at or
// after: a duration back from now, a date or a time, as search takes it). Statuses and types are
// not checked against a list: harnesses have their own words. With prefix (given alone, or with
// limit and scope) it lists instead the runs whose id starts with it, in id order: what finds a
// run from the start of its id, reading only those.
func (s *Server) listRuns(r *http.Request) (any, error) {
	p, err := parseParams(r, "session", "root", "parent", "child", "status", "harness", "type", "since", "limit", "scope", "prefix")
	if err != nil {
		return nil, err
	}
	limit, err := p.limit(defaultListLimit)
	if err != nil {
		return nil, err
	}
	if prefix := p["prefix"]; prefix != "" {
		for _, name := range []string{"session", "root", "parent", "child", "status", "harness", "type", "since"} {
			if p[name] != "" {
				return nil, Errorf(ECodeInvalid, "prefix: give it alone (with limit and scope), not with "+name)
			}
		}
		list, err := s.store().RunsByIDPrefix(r.Context(), p.scope(s.scope()), prefix, limit)
		if err != nil {
			return nil, err
		}
		return runsReply(list), nil
	}
	harness, err := s.harnessParam(p)
	if err != nil {
		return nil, err
	}
	status := p["status"]
	since, err := ParseWhen(p["since"], time.Now())
	if err != nil {
		return nil, Errorf(ECodeInvalid, "since: "+err.Error())
	}
	scope := p.scope(s.scope())
	f := kv.RunFilter{RootID: p["root"], ParentID: p["parent"], ChildID: p["child"], Status: status,
		Harness: harness, Type: p["type"], Since: since, Limit: limit}
	if session := p["session"]; session != "" {
		if f.RootID != "" || f.ParentID != "" {
			return nil, Errorf(ECodeInvalid, "session: give it alone, not with root or parent (it is either)")
		}
		// A top-level session's tree holds every run it spawned; a sub-agent's runs are the
		// ones it asked for.
		tree, err := s.store().ListRuns(r.Context(), scope, kv.RunFilter{RootID: session, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(tree) > 0 {
			f.RootID = session
		} else {
			f.ParentID = session
		}
	}
	list, err := s.store().ListRuns(r.Context(), scope, f)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 && status != "" && !slices.Contains(runStatuses, status) {
		// Not heirloom's word: a harness's, kept as given, when some run of the scope has it
		// (it only matched none of these); else a mistake, said as an unknown harness is.
		some, err := s.store().ListRuns(r.Context(), scope, kv.RunFilter{Status: status, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(some) == 0 {
			return nil, Errorf(ECodeInvalid, fmt.Sprintf("status: got %q, want one of %s (or a status a harness reported)", status, strings.Join(runStatuses, ", ")))
		}
	}
	return runsReply(list), nil
}

// runsReply is the reply listing runs.
func runsReply(list []kv.Run) RunsReply {
	runs := make([]APIRun, len(list))
	for i, run := range list {
		runs[i] = apiRun(run)
	}
	return RunsReply{Runs: runs}
}

// maxCastChars is the most chars GET /api/runs/{id} takes.
const maxCastChars = 1 << 20

// getRun serves GET /api/runs/{id}: one run and its cast, in at most chars characters (default:
// the hook reply's cap, Config.MaxContextChars), or with full=true its whole result as stored
// (the full result while it is kept). It only reads: a level-2 summary is shown when the run
// holds one.
func (s *Server) getRun(r *http.Request) (any, error) {
	p, err := parseParams(r, "scope", "chars", "full")
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	if id == "" || !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		return nil, Errorf(ECodeInvalid, "run id: not valid text")
	}
	full, err := p.bool("full")
	if err != nil {
		return nil, err
	}
	chars := 0
	if v := p["chars"]; v != "" {
		if chars, err = strconv.Atoi(v); err != nil || chars < inject.MinCastChars || chars > maxCastChars {
			return nil, Errorf(ECodeInvalid, fmt.Sprintf("chars: got %q, want a whole number from %d to %d", v, inject.MinCastChars, maxCastChars))
		}
	}
	run, err := s.store().GetRun(r.Context(), p.scope(s.scope()), id)
	if err != nil {
		return nil, notFound(err, "run "+id)
	}
	return RunReply{Run: apiRun(run), Cast: s.Engine.CastRun(run, chars, full)}, nil
}
