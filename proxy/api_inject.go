package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/heirloom-dev/heirloom/adapters"
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
//
// For a harness whose session keys name their scope (OpenClaw), the session is looked up in
// that scope unless the scope parameter says otherwise. When such a key names a sub-agent whose
// parent is not known yet (the Gateway's event may still be on its way), the harness is asked
// within DescribeWait; past that the answer comes from what is stored.
func (s *Server) getInject(r *http.Request) (any, error) {
	p, err := parseParams(r, "harness", "session", "parent", "purpose", "scope", "directory")
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
	ctx, scope := r.Context(), p.scope(s.Scope)
	ph := s.plugin(p["harness"])
	if ph != nil && p["scope"] == "" {
		if sc := ph.ScopeOf(id); sc != "" {
			scope = sc
		}
	}
	sess, err := s.Store.GetSession(ctx, scope, id)
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return nil, err
	}
	if dir := p["directory"]; dir != "" && sess.ID != "" && sess.Project == "" {
		// The plugin knows the session's directory when the harness's events do not say it
		// (OpenClaw's rows of top-level sessions never do): record it, so checkpoints carry the
		// project and a new session can recover the project's latest one on this very call. A
		// session heirloom has not heard of is not created here: whether it is a sub-agent is
		// not known yet.
		ev := adapters.Event{Harness: sess.Harness, Scope: scope, SessionID: id, Cwd: dir, At: s.Now()}
		if err := s.ensureSession(ctx, ev, func(*kv.Session) {}); err != nil {
			return nil, err
		}
		if sess, err = s.Store.GetSession(ctx, scope, id); err != nil {
			return nil, err
		}
	}
	if p["purpose"] == "compacting" {
		if sess.ID != "" {
			if err := s.preCompactionCheckpoint(ctx, scope, id, ""); err != nil {
				s.Logger.Warn("pre-compaction checkpoint not written", "session", id, "error", err)
			}
		}
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
	if parentID == "" && ph != nil && ph.IsSubagent(id) {
		parentID = s.describeParent(ctx, scope, id)
	}
	if parentID == "" && sess.ID != "" && (ph == nil || !ph.IsSubagent(id)) {
		return s.topLevelInject(ctx, sess)
	}
	if parentID == "" || parentID == id {
		return injectReply{}, nil
	}
	text, err := s.inheritFor(ctx, harness{}, scope, parentID)
	if err != nil {
		return nil, err
	}
	return injectReply{Context: text}, nil
}

// topLevelInject is the context of a top-level session's model call: the objective
// reinforcement on every call once the session was compacted (the plugin harnesses have no
// history slot, so it must be repeated), and on the session's first call the checkpoint
// recovered from its project.
func (s *Server) topLevelInject(ctx context.Context, sess kv.Session) (injectReply, error) {
	var objective, recovered string
	var err error
	if sess.Compactions > 0 {
		if objective, err = s.reinforcement(ctx, sess); err != nil {
			return injectReply{}, err
		}
	}
	if !sess.FirstInjectDone {
		_, err := s.Store.UpdateSession(ctx, sess.Scope, sess.ID, func(sess *kv.Session, exists bool) error {
			if !exists || sess.FirstInjectDone {
				return errUnchanged
			}
			sess.FirstInjectDone = true
			return nil
		})
		if errors.Is(err, errUnchanged) {
			return injectReply{Context: inject.Join(s.MaxContextChars, objective)}, nil
		}
		if err != nil {
			return injectReply{}, err
		}
		if recovered, err = s.recovered(ctx, sess, false); err != nil {
			return injectReply{}, err
		}
	}
	return injectReply{Context: inject.Join(s.MaxContextChars, objective, recovered)}, nil
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
