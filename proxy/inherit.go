package proxy

import (
	"context"
	"errors"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// tailTurns is how many of the parent's latest turns the inherited block is built from; the
// block's own budget (Inherit.TailChars) decides how much of them reaches the child.
const tailTurns = 200

// inheritFor reads the parent's newest transcript lines and returns the inherited block for a
// child of parentID, or "" when inheritance is off or the parent has nothing to hand down yet.
func (s *Server) inheritFor(ctx context.Context, h harness, parentID string) (string, error) {
	if !s.Inherit.Enabled {
		return "", nil
	}
	if err := s.ingest(ctx, h.transcripts, parentID); err != nil {
		s.Logger.Warn("parent transcript not read; inheriting what is stored", "parent", parentID, "error", err)
	}
	parent, err := s.Store.GetSession(ctx, s.Scope, parentID)
	if errors.Is(err, kv.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	tail, err := s.Store.LastTurns(ctx, s.Scope, parentID, tailTurns)
	if err != nil {
		return "", err
	}
	if s.Inherit.TailChars == 0 {
		tail = nil // configured off: constraints still come from the objective
	}
	prompts := []string{parent.Objective}
	for _, t := range tail {
		if t.Role == "user" {
			prompts = append(prompts, t.Text)
		}
	}
	block := inject.InheritedBlock(inject.Inherited{
		Parent:      parent,
		Tail:        tail,
		Files:       parent.Files,
		Constraints: inject.InferConstraints(prompts),
	}, inject.Budget{TailChars: s.Inherit.TailChars, MaxChars: s.MaxContextChars})
	return inject.Join(s.MaxContextChars, block), nil
}
