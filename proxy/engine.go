package proxy

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// decide applies one normalised event to the store and returns the context text to hand back to
// the harness ("" for none). It is where harness traffic becomes durable state.
func (s *Server) decide(ctx context.Context, ev adapters.Event) (string, error) {
	if ev.Kind == adapters.KindUnknown || ev.SessionID == "" {
		return "", nil
	}
	if err := s.touchSession(ctx, ev); err != nil {
		return "", err
	}
	return "", nil
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
		sess.UpdatedAt = ev.At
		return nil
	})
	if err != nil {
		return fmt.Errorf("record session %s: %w", ev.SessionID, err)
	}
	return nil
}

// normaliseProject resolves symlinks in a project path so two spellings of one directory group
// together. A path that cannot be resolved (gone, unreadable) is only cleaned.
func normaliseProject(dir string) string {
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		return resolved
	}
	return filepath.Clean(dir)
}
