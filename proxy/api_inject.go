package proxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// injectReply is what GET /api/inject answers: the text a harness plugin adds to the model's
// context now. Empty when heirloom has nothing to add.
type injectReply struct {
	Context string `json:"context"`
}

// getInject answers a plugin asking what to add to a session's next model call (OpenCode's
// experimental.chat.system.transform, OpenClaw's before_prompt_build). For a sub-agent session it
// is the inherited block, on every call: it is system context, not history. An explicit parent
// parameter wins over the parent the stream reported, so a plugin that knows it cannot lose a
// race with the stream. purpose=compacting asks for what a compaction summary must keep.
// It answers from stored state only and never waits on the harness.
func (s *Server) getInject(r *http.Request) (any, error) {
	p, err := parseParams(r, "harness", "session", "parent", "purpose", "scope")
	if err != nil {
		return nil, err
	}
	id := p["session"]
	if id == "" {
		return nil, Errorf(ECodeInvalid, "session: required")
	}
	switch p["purpose"] {
	case "", "system", "compacting":
	default:
		return nil, Errorf(ECodeInvalid, fmt.Sprintf("purpose: got %q, want system or compacting", p["purpose"]))
	}
	sess, err := s.Store.GetSession(r.Context(), s.Scope, id)
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return nil, err
	}
	if p["purpose"] == "compacting" {
		if sess.Objective == "" {
			return injectReply{}, nil
		}
		text := "Objective of this session (keep it in the summary): " + inject.Redact(sess.Objective)
		return injectReply{Context: inject.Head(text, s.MaxContextChars)}, nil
	}
	parentID := p["parent"]
	if parentID == "" {
		parentID = sess.ParentID
	}
	if parentID == "" || parentID == id {
		return injectReply{}, nil
	}
	text, err := s.inheritFor(r.Context(), harness{}, parentID)
	if err != nil {
		return nil, err
	}
	return injectReply{Context: text}, nil
}

// spawnCheckReply answers whether a session may spawn a sub-agent now.
type spawnCheckReply struct {
	Allow  bool   `json:"allow"`
	Reason string `json:"reason,omitempty"`
}

// postSpawnCheck answers a plugin asking before a spawn (OpenCode's tool.execute.before for
// task). It refuses only when MaxSpawnDepth is set and the new sub-agent would be deeper; an
// unknown session is allowed. The body (the tool's arguments) is read and ignored for now.
func (s *Server) postSpawnCheck(r *http.Request) (any, error) {
	p, err := parseParams(r, "harness", "session", "scope")
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, http.MaxBytesReader(nil, r.Body, s.MaxBodyBytes)); err != nil {
		return nil, err
	}
	if s.MaxSpawnDepth <= 0 || p["session"] == "" {
		return spawnCheckReply{Allow: true}, nil
	}
	sess, err := s.Store.GetSession(r.Context(), s.Scope, p["session"])
	if errors.Is(err, kv.ErrNotFound) {
		return spawnCheckReply{Allow: true}, nil
	}
	if err != nil {
		return nil, err
	}
	if sess.Depth+1 > s.MaxSpawnDepth {
		return spawnCheckReply{Allow: false, Reason: fmt.Sprintf("heirloom: sub-agents may nest %d deep; this session is at depth %d", s.MaxSpawnDepth, sess.Depth)}, nil
	}
	return spawnCheckReply{Allow: true}, nil
}
