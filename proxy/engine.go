package proxy

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// decide applies one normalised event to the store and returns the context text to hand back to
// the harness ("" for none). It is where harness traffic becomes durable state. All work for one
// top-level session runs under that session's lock, so parallel sub-agents' hooks cannot race
// each other's pairing or transcript reads.
func (s *Server) decide(ctx context.Context, ev adapters.Event) (string, error) {
	if ev.Kind == adapters.KindUnknown {
		return "", nil
	}
	h := s.adapterFor(ev.Harness)
	if ev.Kind == adapters.KindSubagentStart {
		return s.subagentStart(ctx, h, ev)
	}
	if ev.SessionID == "" {
		return "", nil
	}
	unlock := s.locks.lock(ev.SessionID)
	defer unlock()
	if err := s.touchSession(ctx, ev); err != nil {
		return "", err
	}
	switch ev.Kind {
	case adapters.KindPrompt, adapters.KindPreCompact, adapters.KindStop, adapters.KindSessionEnd:
		return "", s.ingest(ctx, h.transcripts, ev.SessionID)
	case adapters.KindSpawn:
		return "", s.spawn(ctx, h, ev)
	case adapters.KindSpawnResult:
		return "", s.spawnResult(ctx, ev)
	case adapters.KindSubagentStop:
		return "", s.subagentStop(ctx, h, ev)
	}
	return "", nil
}

// harness is what the engine uses of one harness's adapter; nil fields mean the harness lacks it.
type harness struct {
	transcripts adapters.Transcripts
	metas       adapters.SubagentMetas
}

// adapterFor returns the optional capabilities of the adapter for a harness.
func (s *Server) adapterFor(name string) harness {
	var h harness
	if s.ClaudeCode != nil && s.ClaudeCode.Harness() == name {
		h.transcripts, _ = s.ClaudeCode.(adapters.Transcripts)
		h.metas, _ = s.ClaudeCode.(adapters.SubagentMetas)
	}
	return h
}

// touchSession records that ev's top-level session exists and is active (or ended), filling in
// what the event tells about it. The write is synced before the hook is answered.
func (s *Server) touchSession(ctx context.Context, ev adapters.Event) error {
	_, err := s.Store.UpdateSession(ctx, s.Scope, ev.SessionID, func(sess *kv.Session, exists bool) error {
		if !exists {
			sess.Harness = ev.Harness
			sess.NativeID = ev.SessionID
			sess.CreatedAt = ev.At
		}
		if sess.Project == "" && ev.Cwd != "" {
			sess.Project = ev.Cwd
			sess.ProjectNorm = normaliseProject(ev.Cwd)
		}
		if sess.Transcript.Path == "" {
			sess.Transcript.Path = ev.TranscriptPath
		}
		if sess.Objective == "" && ev.Kind == adapters.KindPrompt {
			sess.Objective = ev.Prompt
		}
		sess.Status = kv.StatusActive
		if ev.Kind == adapters.KindSessionEnd {
			sess.Status = kv.StatusEnded
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record session %s: %w", ev.SessionID, err)
	}
	return nil
}

// childID is heirloom's id for sub-agent agentID of top-level session rootID.
func childID(rootID, agentID string) string { return rootID + ":" + agentID }

// issuerID is the session that sent ev: the sub-agent named by ev.AgentID, else the top-level
// session.
func issuerID(ev adapters.Event) string {
	if ev.AgentID != "" {
		return childID(ev.SessionID, ev.AgentID)
	}
	return ev.SessionID
}

// normaliseProject resolves symlinks in a project path so two spellings of one directory group
// together. A path that cannot be resolved (gone, unreadable) is only cleaned.
func normaliseProject(dir string) string {
	if dir == "" {
		return ""
	}
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		return resolved
	}
	return filepath.Clean(dir)
}
