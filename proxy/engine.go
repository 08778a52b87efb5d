package proxy

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/inject"
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
	sess, err := s.touchSession(ctx, ev)
	if err != nil {
		return "", err
	}
	switch ev.Kind {
	case adapters.KindSessionStart:
		return s.sessionStart(ctx, h, ev, sess)
	case adapters.KindPrompt:
		if err := s.ingest(ctx, h.transcripts, ev.SessionID); err != nil {
			return "", err
		}
		// The prompt is counted once its transcript record is stored (see kv.Session.Prompts).
		sess, err := s.Store.GetSession(ctx, s.Scope, ev.SessionID)
		if err != nil {
			return "", err
		}
		s.maybeCheckpoint(sess)
		return "", nil
	case adapters.KindPreCompact:
		if err := s.ingest(ctx, h.transcripts, ev.SessionID); err != nil {
			s.Logger.Warn("transcript not read before compaction", "session", ev.SessionID, "error", err)
		}
		return "", s.preCompactionCheckpoint(ctx, s.Scope, ev.SessionID, ev.Instructions)
	case adapters.KindStop, adapters.KindSessionEnd:
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

// sessionStart answers Claude Code's SessionStart. After a compaction (source compact) it counts
// the compaction epoch and gives the objective reinforcement once per epoch: a repeated
// SessionStart in the same epoch gets nothing. At startup, resume or clear it gives the
// recovered checkpoint (see recovered).
func (s *Server) sessionStart(ctx context.Context, h harness, ev adapters.Event, sess kv.Session) (string, error) {
	switch ev.Source {
	case adapters.SourceCompact:
		due := false
		sess, err := s.Store.UpdateSession(ctx, s.Scope, ev.SessionID, func(sess *kv.Session, _ bool) error {
			countCompaction(sess, ev.At)
			if due = sess.Compactions > sess.ReinforcedEpoch; due {
				sess.ReinforcedEpoch = sess.Compactions
			}
			return nil
		})
		if err != nil || !due {
			return "", err
		}
		block, err := s.reinforcement(ctx, sess)
		return inject.Join(s.MaxContextChars, block), err
	case adapters.SourceStartup, adapters.SourceResume, adapters.SourceClear:
		if err := s.ingest(ctx, h.transcripts, ev.SessionID); err != nil {
			s.Logger.Warn("transcript not read at session start", "session", ev.SessionID, "error", err)
		}
		block, err := s.recovered(ctx, sess, ev.Source == adapters.SourceResume)
		return inject.Join(s.MaxContextChars, block), err
	}
	return "", nil
}

// touchSession records that ev's top-level session exists and is active (or ended), filling in
// what the event tells about it. The write is synced before the hook is
// answered. It returns the session as written.
func (s *Server) touchSession(ctx context.Context, ev adapters.Event) (kv.Session, error) {
	sess, err := s.Store.UpdateSession(ctx, s.Scope, ev.SessionID, func(sess *kv.Session, exists bool) error {
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
		return kv.Session{}, fmt.Errorf("record session %s: %w", ev.SessionID, err)
	}
	return sess, nil
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
