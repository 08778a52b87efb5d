package proxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// checkpointTurns is how many of a session's latest turns one checkpoint reads; what came
// before them reaches the digest through the previous checkpoint.
const checkpointTurns = 200

// checkpointWait bounds a checkpoint written while a harness waits (before a compaction).
const checkpointWait = 2 * time.Second

// Checkpoints configures when checkpoints are taken and how long they are kept.
type Checkpoints struct {
	// EveryPrompts: a periodic checkpoint is taken once a session has had this many prompts
	// since its latest one. Zero or less means 10.
	EveryPrompts int
	// Every: a periodic checkpoint is also taken at the first prompt this long after the
	// session's latest one (or its start). Zero or less means 15 minutes.
	Every time.Duration
	// Retention: checkpoints older than this are pruned, except the newest Keep of each
	// session. Zero or less means 7 days.
	Retention time.Duration
	// Keep is how many of each session's newest checkpoints survive pruning. Negative means 3.
	Keep int
	// PruneEvery is how often the pruner runs (once at Open, then on this period). Zero or
	// less means one hour.
	PruneEvery time.Duration
	// RecoveryWindow is how old another session's checkpoint may be to be recovered at a
	// session's start. Zero or less means 4 hours.
	RecoveryWindow time.Duration
	// NoBlocks, when set, keeps the objective reinforcement and recovered blocks out of every
	// reply (passive mode); checkpoints are still written.
	NoBlocks bool
}

// withDefaults fills in the zero fields of c.
func (c Checkpoints) withDefaults() Checkpoints {
	if c.EveryPrompts <= 0 {
		c.EveryPrompts = 10
	}
	if c.Every <= 0 {
		c.Every = 15 * time.Minute
	}
	if c.Retention <= 0 {
		c.Retention = 7 * 24 * time.Hour
	}
	if c.Keep < 0 {
		c.Keep = 3
	}
	if c.PruneEvery <= 0 {
		c.PruneEvery = time.Hour
	}
	if c.RecoveryWindow <= 0 {
		c.RecoveryWindow = 4 * time.Hour
	}
	return c
}

// checkpoint builds the digest of session sessionID in scope from its stored session, its
// latest turns, the runs it spawned and its previous checkpoint, and stores it as a checkpoint
// with trigger. extra are decisions to record in this checkpoint only (a compaction's custom
// instructions). It returns an error wrapping kv.ErrNotFound when the session is not stored.
func (s *Server) checkpoint(ctx context.Context, scope, sessionID, trigger string, extra ...string) (kv.Checkpoint, error) {
	sess, err := s.Store.GetSession(ctx, scope, sessionID)
	if err != nil {
		return kv.Checkpoint{}, fmt.Errorf("checkpoint %s: %w", sessionID, err)
	}
	turns, err := s.Store.LastTurns(ctx, scope, sessionID, checkpointTurns)
	if err != nil {
		return kv.Checkpoint{}, fmt.Errorf("checkpoint %s: %w", sessionID, err)
	}
	runs, err := s.Store.ListRuns(ctx, scope, kv.RunFilter{ParentID: sessionID})
	if err != nil {
		return kv.Checkpoint{}, fmt.Errorf("checkpoint %s: %w", sessionID, err)
	}
	prev, err := s.Store.LatestCheckpoint(ctx, scope, sessionID)
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return kv.Checkpoint{}, fmt.Errorf("checkpoint %s: %w", sessionID, err)
	}
	d := inject.BuildDigest(inject.DigestInput{
		Session:     sess,
		Turns:       turns,
		Runs:        runs,
		Decisions:   append(append([]string(nil), sess.Decisions...), extra...),
		Constraints: sess.Constraints,
		Previous:    prev.Digest,
	})
	c, err := s.Store.PutCheckpoint(ctx, kv.Checkpoint{
		Scope: scope, SessionID: sessionID, Harness: sess.Harness,
		Project: sess.Project, ProjectNorm: sess.ProjectNorm, Trigger: trigger,
		Epoch: sess.Compactions, Prompts: sess.Prompts, TurnSeq: sess.TurnCount,
		Digest: d, CreatedAt: s.Now(),
	})
	if err != nil {
		return kv.Checkpoint{}, fmt.Errorf("checkpoint %s: %w", sessionID, err)
	}
	_, err = s.Store.UpdateSession(ctx, scope, sessionID, func(sess *kv.Session, exists bool) error {
		if !exists {
			return errUnchanged
		}
		sess.LastCheckpointPrompts = max(sess.LastCheckpointPrompts, c.Prompts)
		if c.CreatedAt.After(sess.LastCheckpointAt) {
			sess.LastCheckpointAt = c.CreatedAt
		}
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return c, fmt.Errorf("checkpoint %s: %w", sessionID, err)
	}
	return c, nil
}

// checkpointDue reports whether sess, just given a prompt at now, is due a periodic
// checkpoint: EveryPrompts prompts since its latest one, or Every since then with at least one
// prompt in between. With no checkpoint yet, Every counts from the session's start, or from
// when this server opened if that is later: a session resynced from the harness's history is
// not due at once for its age. Only top-level sessions take periodic
// checkpoints: a sub-agent's task is short, and its parent's checkpoints cover it.
func (s *Server) checkpointDue(sess kv.Session, now time.Time) bool {
	c := s.Checkpoints.withDefaults()
	since := sess.Prompts - sess.LastCheckpointPrompts
	if since <= 0 || sess.ParentID != "" {
		return false
	}
	if since >= c.EveryPrompts {
		return true
	}
	base := sess.LastCheckpointAt
	if base.IsZero() {
		base = sess.CreatedAt
		if s.openedAt.After(base) {
			base = s.openedAt
		}
	}
	return !base.IsZero() && now.Sub(base) >= c.Every
}

// maybeCheckpoint writes a periodic checkpoint of sess in the background when one is due. At
// most one is in flight per session; a prompt arriving meanwhile is covered by the next one.
// Nothing waits for it: errors are logged.
func (s *Server) maybeCheckpoint(sess kv.Session) {
	if !s.checkpointDue(sess, s.Now()) || s.ctx == nil || s.ctx.Err() != nil {
		return
	}
	key := sess.Scope + "\x00" + sess.ID
	if _, busy := s.inflight.LoadOrStore(key, struct{}{}); busy {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.inflight.Delete(key)
		if _, err := s.checkpoint(s.ctx, sess.Scope, sess.ID, kv.TriggerPeriodic); err != nil && s.ctx.Err() == nil {
			s.Logger.Warn("periodic checkpoint not written", "session", sess.ID, "error", err)
		}
	}()
}

// preCompactionCheckpoint writes a pre_compaction checkpoint of session id in scope while the
// harness waits, within checkpointWait. A session heirloom does not know is skipped, and so is
// a second report of the same compaction (OpenClaw reports one through its Gateway and its
// plugin): one in the same epoch within SameCompaction of the last.
func (s *Server) preCompactionCheckpoint(ctx context.Context, scope, id, instructions string) error {
	ctx, cancel := context.WithTimeout(ctx, checkpointWait)
	defer cancel()
	sess, err := s.Store.GetSession(ctx, scope, id)
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	last, err := s.Store.LatestCheckpoint(ctx, scope, id)
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return err
	}
	if err == nil && last.Trigger == kv.TriggerPreCompaction && last.Epoch == sess.Compactions &&
		s.Now().Sub(last.CreatedAt).Abs() < SameCompaction {
		return nil
	}
	var extra []string
	if instructions != "" {
		extra = append(extra, "Compaction instructions: "+instructions)
	}
	_, err = s.checkpoint(ctx, scope, id, kv.TriggerPreCompaction, extra...)
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	return err
}

// prune deletes old checkpoints now and then every PruneEvery until the server closes. It runs
// in the background: a hook never waits for it.
func (s *Server) prune() {
	defer s.wg.Done()
	c := s.Checkpoints.withDefaults()
	t := time.NewTicker(c.PruneEvery)
	defer t.Stop()
	for {
		n, err := s.Store.PruneCheckpoints(s.ctx, "", s.Now().Add(-c.Retention), c.Keep)
		if err != nil && s.ctx.Err() == nil {
			s.Logger.Warn("checkpoints not pruned", "error", err)
		} else if n > 0 {
			s.Logger.Debug("checkpoints pruned", "deleted", n)
		}
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// reinforcement returns the objective block for session sess: its objective, its latest
// pre-compaction checkpoint (else its latest), and the sub-agents it spawned that finished.
func (s *Server) reinforcement(ctx context.Context, sess kv.Session) (string, error) {
	if s.Checkpoints.NoBlocks {
		return "", nil
	}
	cps, err := s.Store.Checkpoints(ctx, sess.Scope, sess.ID, 20)
	if err != nil {
		return "", err
	}
	var cp *kv.Checkpoint
	for i := range cps {
		if cps[i].Trigger == kv.TriggerPreCompaction {
			cp = &cps[i]
			break
		}
	}
	if cp == nil && len(cps) > 0 {
		cp = &cps[0]
	}
	runs, err := s.Store.ListRuns(ctx, sess.Scope, kv.RunFilter{ParentID: sess.ID})
	if err != nil {
		return "", err
	}
	return inject.ObjectiveBlock(inject.Reinforcement{Objective: sess.Objective, Checkpoint: cp, Finished: runs}, s.MaxContextChars), nil
}

// recovered returns the recovered-checkpoint block for session sess starting: with resume its
// own latest checkpoint, else the newest checkpoint of another session of its scope and
// normalised project within RecoveryWindow; "" when there is none.
func (s *Server) recovered(ctx context.Context, sess kv.Session, resume bool) (string, error) {
	if s.Checkpoints.NoBlocks {
		return "", nil
	}
	now := s.Now()
	var c kv.Checkpoint
	var err error
	switch {
	case resume:
		c, err = s.Store.LatestCheckpoint(ctx, sess.Scope, sess.ID)
	case sess.ProjectNorm == "":
		return "", nil
	default:
		window := s.Checkpoints.withDefaults().RecoveryWindow
		c, err = s.Store.LatestProjectCheckpoint(ctx, sess.Scope, sess.ProjectNorm, now.Add(-window), sess.ID)
	}
	if errors.Is(err, kv.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if resume && c.Trigger == kv.TriggerPreCompaction && c.Epoch == sess.Compactions-1 && sess.ReinforcedEpoch == sess.Compactions {
		// The session's context already holds this checkpoint: the reinforcement given after
		// the compaction it preceded. Recovering it again would repeat the same digest.
		return "", nil
	}
	budget := min(inject.DefaultRecoveredChars, s.MaxContextChars)
	return inject.RecoveredBlock(c, resume, now, budget), nil
}
