package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
)

// InjectRequest is the body of POST /api/inject: a harness's plugin asking what to add to a
// session's next model call. Only session is required.
type InjectRequest struct {
	Harness   string `json:"harness,omitempty"`   // the harness asking (opencode, openclaw)
	Session   string `json:"session"`             // the session whose model call it is
	Parent    string `json:"parent,omitempty"`    // its parent, when the plugin knows it
	Purpose   string `json:"purpose,omitempty"`   // "" or "system": the call's context; "compacting": what a summary keeps
	Scope     string `json:"scope,omitempty"`     // the memory scope; default: the one the key names, else the configured one
	Directory string `json:"directory,omitempty"` // the session's project, when the plugin knows it
}

// InjectReply is what /api/inject answers: the text the plugin adds to the model's context
// now; empty when heirloom has nothing to add.
type InjectReply struct {
	Context string `json:"context"`
}

// injectDeprecatedSince is when POST replaced GET /api/inject (RFC 9745 Deprecation header).
const injectDeprecatedSince = "@1795564800" // 2026-11-25

// postInject serves POST /api/inject. It writes (a session's directory, its first-call mark, a
// pre-compaction checkpoint), so it is a POST, and it runs under the session's lock like stream
// consumption (see engine.Inject).
func (s *Server) postInject(r *http.Request) (any, error) {
	if _, err := parseParams(r); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.MaxBodyBytes))
	if err != nil {
		return nil, err
	}
	var req InjectRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, Errorf(ECodeBadJSON, "body: "+err.Error())
	}
	return s.inject(r, req)
}

// getInject serves GET /api/inject with the request in query parameters: the form plugins of
// earlier releases use. It answers as POST does, for one release; its route adds the
// Deprecation header (see routeAPI).
func (s *Server) getInject(r *http.Request) (any, error) {
	p, err := parseParams(r, "harness", "session", "parent", "purpose", "scope", "directory")
	if err != nil {
		return nil, err
	}
	s.deprecatedOnce.Do(func() {
		s.Logger.Warn("a plugin uses GET /api/inject, which is deprecated: reinstall it (heirloom install opencode|openclaw)", "harness", p["harness"])
	})
	return s.inject(r, InjectRequest{
		Harness: p["harness"], Session: p["session"], Parent: p["parent"],
		Purpose: p["purpose"], Scope: p["scope"], Directory: p["directory"],
	})
}

// inject checks req and asks the engine.
func (s *Server) inject(r *http.Request, req InjectRequest) (any, error) {
	for name, v := range map[string]string{"harness": req.Harness, "scope": req.Scope, "directory": req.Directory} {
		if !utf8.ValidString(v) || bytes.IndexByte([]byte(v), 0) >= 0 {
			return nil, Errorf(ECodeInvalid, name+": not valid text")
		}
	}
	if err := checkIDs(map[string]string{"session": req.Session, "parent": req.Parent}); err != nil {
		return nil, err
	}
	if req.Session == "" {
		return nil, Errorf(ECodeInvalid, "session: required")
	}
	switch req.Purpose {
	case "", "system", "compacting":
	default:
		return nil, Errorf(ECodeInvalid, fmt.Sprintf("purpose: got %q, want system or compacting", req.Purpose))
	}
	text, err := s.Engine.Inject(r.Context(), engine.InjectRequest{
		Harness: req.Harness, Session: req.Session, Parent: req.Parent, Scope: req.Scope,
		Directory: req.Directory, Compacting: req.Purpose == "compacting",
	})
	if err != nil {
		return nil, err
	}
	return InjectReply{Context: text}, nil
}

// SpawnCheckRequest is the body of POST /api/spawn-check: the spawning tool call a plugin is
// about to let run. Every field may be missing; unknown fields are ignored (the args are the
// harness's own tool arguments).
type SpawnCheckRequest struct {
	Tool   string `json:"tool,omitempty"`    // the spawning tool (task, sessions_spawn)
	CallID string `json:"call_id,omitempty"` // the tool call's id; the refused or pending run is recorded under it
	Args   struct {
		Description  string `json:"description,omitempty"`   // the spawn's short description
		Prompt       string `json:"prompt,omitempty"`        // its task prompt
		SubagentType string `json:"subagent_type,omitempty"` // the sub-agent type asked for
	} `json:"args"`
}

// SpawnCheckReply answers whether a session may spawn a sub-agent now. Reason names the limit
// a spawn hits ("depth 2 exceeds spawn.max_depth 1"); in observe mode Allow is true and Reason
// says what enforce would have refused. Message, with a refusal, is the whole text the model is
// to read as the spawning call's error (engine.SpawnRefusal): the plugins show it as given.
type SpawnCheckReply struct {
	Allow   bool   `json:"allow"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// postSpawnCheck answers a plugin asking before a spawn (OpenCode's tool.execute.before for
// task, OpenClaw's before_tool_call for sessions_spawn) and records the spawn's run: see
// engine.SpawnCheck. The query names the harness, the session, and optionally the scope and
// the session's parent as the plugin knows it (directory, which the plugins send with every
// call, is accepted and not used); the body the call (see SpawnCheckRequest), and may be empty.
func (s *Server) postSpawnCheck(r *http.Request) (any, error) {
	p, err := parseParams(r, "harness", "session", "scope", "parent", "directory")
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.MaxBodyBytes))
	if err != nil {
		return nil, err
	}
	var req SpawnCheckRequest
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, Errorf(ECodeBadJSON, "body: "+err.Error())
		}
	}
	for name, v := range map[string]string{"args.description": req.Args.Description, "args.prompt": req.Args.Prompt, "args.subagent_type": req.Args.SubagentType} {
		if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			return nil, Errorf(ECodeInvalid, name+": not valid text")
		}
	}
	if err := checkIDs(map[string]string{"session": p["session"], "parent": p["parent"], "call_id": req.CallID}); err != nil {
		return nil, err
	}
	d, err := s.Engine.SpawnCheck(r.Context(), engine.SpawnRequest{
		Harness: p["harness"], Scope: p["scope"], Session: p["session"], Parent: p["parent"], CallID: req.CallID,
		Description: req.Args.Description, Prompt: req.Args.Prompt, Type: req.Args.SubagentType,
	})
	if err != nil {
		return nil, err
	}
	reply := SpawnCheckReply{Allow: d.Allow, Reason: d.Reason}
	if !d.Allow {
		reply.Message = engine.SpawnRefusal(d.Reason)
	}
	return reply, nil
}

// checkIDs checks the ids a plugin call names (by parameter name) as the hook endpoints check a
// harness's ids (see adapters.IDProblem): an id no record may have is a 400 naming the
// parameter, and nothing is stored.
func checkIDs(ids map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(ids)) {
		if why := adapters.IDProblem(ids[name]); why != "" {
			return Errorf(ECodeInvalid, name+": "+why)
		}
	}
	return nil
}
