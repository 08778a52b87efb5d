package proxy

import (
	"context"
	"errors"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// The inherited block is built from the parent's latest turns; its own budget
// (Inherit.TailChars) decides how much of them reaches the child. A short window is read first
// and widened only when its text cannot fill the budget (many short turns).
const (
	tailTurnsFirst = 40
	tailTurnsMax   = 200
)

// inheritFor reads the parent's newest transcript lines and returns the inherited block for a
// child of parentID in scope, or "" when inheritance is off or the parent has nothing to hand down yet.
func (s *Server) inheritFor(ctx context.Context, h harness, scope, parentID string) (string, error) {
	if !s.Inherit.Enabled {
		return "", nil
	}
	if err := s.ingest(ctx, h.transcripts, parentID); err != nil {
		s.Logger.Warn("parent transcript not read; inheriting what is stored", "parent", parentID, "error", err)
	}
	parent, err := s.Store.GetSession(ctx, scope, parentID)
	if errors.Is(err, kv.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	tail, err := s.parentTail(ctx, scope, parentID)
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
	digest, err := s.spawnDigest(ctx, parent)
	if err != nil {
		return "", err
	}
	block := inject.InheritedBlock(inject.Inherited{
		Parent:      parent,
		Digest:      digest,
		Tail:        tail,
		Files:       parent.Files,
		Constraints: inject.InferConstraints(prompts),
	}, inject.Budget{TailChars: s.Inherit.TailChars, MaxChars: s.MaxContextChars})
	return inject.Join(s.MaxContextChars, block), nil
}

// parentTail returns the parent's latest turns: tailTurnsFirst of them, or up to tailTurnsMax
// when the first window's text is shorter than twice the tail budget.
func (s *Server) parentTail(ctx context.Context, scope, parentID string) ([]kv.Turn, error) {
	tail, err := s.Store.LastTurns(ctx, scope, parentID, tailTurnsFirst)
	if err != nil || len(tail) < tailTurnsFirst {
		return tail, err
	}
	size := 0
	for _, t := range tail {
		size += len(t.Text) + len(t.Tool)
	}
	if size >= 2*s.Inherit.TailChars {
		return tail, nil
	}
	return s.Store.LastTurns(ctx, scope, parentID, tailTurnsMax)
}

// spawnDigest renders the digest of parent as it stands when a child starts: built over its
// latest turns and runs with its latest checkpoint as the previous digest. "" when there is
// nothing to say.
func (s *Server) spawnDigest(ctx context.Context, parent kv.Session) (string, error) {
	turns, err := s.Store.LastTurns(ctx, parent.Scope, parent.ID, checkpointTurns)
	if err != nil {
		return "", err
	}
	runs, err := s.Store.ListRuns(ctx, parent.Scope, kv.RunFilter{ParentID: parent.ID})
	if err != nil {
		return "", err
	}
	prev, err := s.Store.LatestCheckpoint(ctx, parent.Scope, parent.ID)
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return "", err
	}
	d := inject.BuildDigest(inject.DigestInput{
		Session: parent, Turns: turns, Runs: runs,
		Decisions: parent.Decisions, Constraints: parent.Constraints, Previous: prev.Digest,
	})
	// Without the objective (the block's own line) and the open runs: the starting child is
	// one of them, not yet told apart from its siblings.
	d.Objective, d.OpenRuns = "", nil
	return inject.RenderDigest(d, inject.DefaultDigestChars), nil
}
