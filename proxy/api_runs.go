package proxy

import (
	"net/http"

	"github.com/heirloom-dev/heirloom/kv"
)

// listRuns serves GET /api/runs: the sub-agent runs of a scope, newest first, filtered by root
// session, parent session, child session and status. Statuses are not checked against a list:
// harnesses may report their own words for a finished run.
func (s *Server) listRuns(r *http.Request) (any, error) {
	p, err := parseParams(r, "root", "parent", "child", "status", "limit", "scope")
	if err != nil {
		return nil, err
	}
	limit, err := p.limit(defaultListLimit)
	if err != nil {
		return nil, err
	}
	f := kv.RunFilter{RootID: p["root"], ParentID: p["parent"], ChildID: p["child"], Status: p["status"], Limit: limit}
	list, err := s.store().ListRuns(r.Context(), p.scope(s.scope()), f)
	if err != nil {
		return nil, err
	}
	runs := make([]APIRun, len(list))
	for i, run := range list {
		runs[i] = apiRun(run)
	}
	return RunsReply{Runs: runs}, nil
}
