package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// checkpointTurns is how many of a session's latest turns one checkpoint reads; what came
// before them reaches the digest through the previous checkpoint.
const checkpointTurns = 200

// checkpointWait bounds a checkpoint written while a harness waits (before a compaction).
const checkpointWait = 2 * time.Second

// reinforcementLookback is how many of a session's newest checkpoints the objective
// reinforcement looks through for the one taken before the compaction.
const reinforcementLookback = 20

// SameCompaction is how close two compaction reports for one session must be to count as one:
// OpenClaw reports a compaction on its Gateway and through the plugin's after_compaction, moments
// apart, and a real compaction takes a model call, far longer.
const SameCompaction = 10 * time.Second

// Statements are what an agent or user states about a session through the API: kept on the
// session before a checkpoint is taken. Every field may be empty.
type Statements struct {
	Decisions   []string // decisions made
	Constraints []string // constraints that must keep holding
	Objective   string   // replaces the session's objective when not blank
	// Summary and NextSteps are the agent's account of where the session stands and what it
	// does next; they go into this checkpoint and carry forward into later ones until the agent
	// writes new ones.
	Summary   string
	NextSteps []string
}

// Checkpoint keeps st on session key of scope (its objective replaced when one is given) and
// writes a checkpoint with trigger (kv.TriggerAgent or kv.TriggerExplicit). It returns an
// error wrapping kv.ErrNotFound when the session is not stored, and an *InvalidError for
// statements past their bounds (statements.go).
func (e *Engine) Checkpoint(ctx context.Context, scope, key, trigger string, st Statements) (kv.Checkpoint, error) {
	if err := st.check(); err != nil {
		return kv.Checkpoint{}, err
	}
	unlock := e.locks.lock(lockKey(scope, key))
	defer unlock()
	_, err := e.Store.UpdateSession(ctx, scope, key, func(sess *kv.Session, exists bool) error {
		if !exists {
			return kv.ErrNotFound
		}
		if o := strings.TrimSpace(st.Objective); o != "" {
			sess.Objective = o
		}
		sess.Decisions = kv.AddStatements(sess.Decisions, st.Decisions...)
		sess.Constraints = kv.AddStatements(sess.Constraints, st.Constraints...)
		return nil
	})
	if err != nil {
		return kv.Checkpoint{}, fmt.Errorf("checkpoint %s: %w", key, err)
	}
	return e.checkpoint(ctx, scope, key, trigger, checkpointInput{summary: st.Summary, nextSteps: st.NextSteps})
}

// checkpointInput is what a caller of checkpoint already holds, or adds.
type checkpointInput struct {
	extra  []string  // decisions to record in this checkpoint only (a compaction's custom instructions)
	recent []kv.Turn // the latest turns, when the stored ones lag behind the transcript; nil: read them
	runs   []kv.Run  // the runs the session spawned, when listed holds them
	listed bool      // runs was read by the caller (nil then means none); false: read them

	summary   string   // the agent's summary (Statements.Summary); "" carries the previous one
	nextSteps []string // the agent's next steps, with summary
}

// checkpoint builds the digest of session sessionID in scope from its stored session, its
// latest turns, the runs it spawned and its previous checkpoint (each taken from in when it
// holds them), and stores it as a checkpoint with trigger. It returns an error wrapping
// kv.ErrNotFound when the session is not stored.
func (e *Engine) checkpoint(ctx context.Context, scope, sessionID, trigger string, in checkpointInput) (kv.Checkpoint, error) {
	window := checkpointTurns
	if in.recent != nil {
		window = 0
	}
	view, err := e.Store.View(ctx, scope, sessionID, kv.ViewOptions{
		Tail: kv.TailWindow{MinTurns: window, MaxTurns: window}, Checkpoint: true, Facts: true,
	})
	if err != nil {
		return kv.Checkpoint{}, fmt.Errorf("checkpoint %s: %w", sessionID, err)
	}
	sess, turns := view.Session, view.Tail
	if in.recent != nil {
		turns = in.recent
	}
	view.Checkpoint, turns = sinceReset(sess, view.Checkpoint, turns)
	runs := in.runs
	if !in.listed {
		if runs, err = e.Store.ListRuns(ctx, scope, kv.RunFilter{ParentID: sessionID}); err != nil {
			return kv.Checkpoint{}, fmt.Errorf("checkpoint %s: %w", sessionID, err)
		}
	}
	var prev kv.Digest
	if view.Checkpoint != nil {
		prev = view.Checkpoint.Digest
	}
	d := inject.BuildDigest(inject.DigestInput{
		Session:     sess,
		Turns:       turns,
		Runs:        runs,
		Decisions:   append(append([]string(nil), sess.Decisions...), in.extra...),
		Constraints: sess.Constraints,
		Facts:       view.Facts,
		Summary:     in.summary,
		NextSteps:   in.nextSteps,
		Previous:    prev,
	})
	// A sub-agent's checkpoint is kept out of its project's index: a new session recovers the
	// latest checkpoint of another session, and a sub-agent's task is not one to resume.
	projectNorm := sess.ProjectNorm
	if sess.ParentID != "" {
		projectNorm = ""
	}
	c, err := e.Store.PutCheckpoint(ctx, kv.Checkpoint{
		Scope: scope, SessionID: sessionID, Harness: sess.Harness,
		Project: sess.Project, ProjectNorm: projectNorm, Trigger: trigger,
		Epoch: sess.Compactions, Prompts: sess.Prompts, TurnSeq: sess.TurnCount,
		Digest: d, CreatedAt: e.Now(),
	})
	if err != nil {
		return kv.Checkpoint{}, fmt.Errorf("checkpoint %s: %w", sessionID, err)
	}
	_, err = e.Store.UpdateSession(ctx, scope, sessionID, func(sess *kv.Session, exists bool) error {
		if !exists {
			return errUnchanged
		}
		sess.LastCheckpointPrompts = max(sess.LastCheckpointPrompts, c.Prompts)
		if c.CreatedAt.After(sess.LastCheckpointAt) {
			sess.LastCheckpointAt = c.CreatedAt
		}
		if trigger == kv.TriggerPreCompaction {
			sess.CompactionCheckpoint = c.ID
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
// when the engine opened if that is later: a session resynced from the harness's history is
// not due at once for its age. Only top-level sessions take periodic checkpoints: a sub-agent's
// task is short, and its parent's checkpoints cover it.
func (e *Engine) checkpointDue(sess kv.Session, now time.Time) bool {
	c := e.Config.Checkpoints
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
		if e.openedAt.After(base) {
			base = e.openedAt
		}
	}
	return !base.IsZero() && now.Sub(base) >= c.Every
}

// maybeCheckpoint writes a periodic checkpoint of sess in the background when one is due. At
// most one checkpoint is in flight per session; a prompt arriving meanwhile is covered by the
// next one. Nothing waits for it: errors are logged.
func (e *Engine) maybeCheckpoint(sess kv.Session) {
	if !e.checkpointDue(sess, e.Now()) {
		return
	}
	e.checkpointInBackground(sess.Scope, sess.ID, kv.TriggerPeriodic, false, nil)
}

// spawnCheckpoint writes, in the background, the checkpoint of sess as it spawns a sub-agent:
// the digest its child inherits (the child's start waits for it, briefly; see parentView). It is
// skipped when the latest checkpoint still tells the child everything a new one would: it
// covers every stored turn and lists the same finished runs (parallel spawns share one; the
// open runs are left out of the inherited block, so new spawns do not count). It is skipped
// too when blocks are off (no child would read it).
func (e *Engine) spawnCheckpoint(sess kv.Session) {
	if e.Config.Passive {
		return
	}
	e.checkpointInBackground(sess.Scope, sess.ID, kv.TriggerSpawn, true, func(ctx context.Context) (checkpointInput, bool) {
		last, err := e.Store.LatestCheckpoint(ctx, sess.Scope, sess.ID)
		if err != nil || last.TurnSeq != sess.TurnCount {
			return checkpointInput{}, true
		}
		runs, err := e.Store.ListRuns(ctx, sess.Scope, kv.RunFilter{ParentID: sess.ID})
		if err != nil {
			return checkpointInput{}, true
		}
		return checkpointInput{runs: runs, listed: true}, !slices.Equal(inject.FinishedRuns(runs), last.Digest.FinishedRuns)
	})
}

// checkpointInBackground writes a checkpoint of session id with trigger in the background,
// unless prepare (when given) says it is not needed when its turn comes; what prepare read
// for its answer the checkpoint reuses. One asked for while
// another of the session is being written is skipped (a periodic one: the next prompt asks
// again), or with queue runs after it (a spawn's: the child waits for it; the latest asked for
// wins).
func (e *Engine) checkpointInBackground(scope, id, trigger string, queue bool, prepare func(context.Context) (checkpointInput, bool)) {
	key := lockKey(scope, id)
	job := func(ctx context.Context) {
		var in checkpointInput
		if prepare != nil {
			var due bool
			if in, due = prepare(ctx); !due {
				return
			}
		}
		if _, err := e.checkpoint(ctx, scope, id, trigger, in); err != nil && ctx.Err() == nil {
			e.warn("checkpoint not written", err, "session", id, "trigger", trigger)
		}
	}
	if queue && !e.checkpoints.startOrQueue(key, job) || !queue && !e.checkpoints.start(key) {
		return
	}
	started := e.goBackground(func(ctx context.Context) {
		for job := job; job != nil; job = e.checkpoints.finish(key) {
			job(ctx)
		}
	})
	if !started {
		for e.checkpoints.finish(key) != nil {
		}
	}
}

// preCompactionCheckpoint writes a pre_compaction checkpoint of session id in scope while the
// harness waits, within checkpointWait. A session heirloom does not know is skipped, and so is
// a second report of the same compaction (OpenClaw reports one through its Gateway and its
// plugin): one in the same epoch within SameCompaction of the last. recent, when not nil,
// stands in for the stored turns (see checkpoint).
func (e *Engine) preCompactionCheckpoint(ctx context.Context, scope, id, instructions string, recent []kv.Turn) error {
	ctx, cancel := context.WithTimeout(ctx, checkpointWait)
	defer cancel()
	sess, err := e.Store.GetSession(ctx, scope, id)
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if last, err := e.compactionCheckpoint(ctx, sess); err == nil && last.Epoch == sess.Compactions &&
		e.Now().Sub(last.CreatedAt).Abs() < SameCompaction {
		return nil
	} else if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return err
	}
	var extra []string
	if instructions != "" {
		extra = append(extra, "Compaction instructions: "+instructions)
	}
	_, err = e.checkpoint(ctx, scope, id, kv.TriggerPreCompaction, checkpointInput{extra: extra, recent: recent})
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	return err
}

// prune deletes old checkpoints now and then every PruneEvery until the engine closes. It runs
// in the background: a hook never waits for it.
func (e *Engine) prune() {
	defer e.wg.Done()
	c := e.Config.Checkpoints
	t := time.NewTicker(c.PruneEvery)
	defer t.Stop()
	for {
		n, err := e.Store.PruneCheckpoints(e.ctx, "", e.Now().Add(-c.Retention), c.Keep)
		if err != nil && e.ctx.Err() == nil {
			e.warn("checkpoints not pruned", err)
		} else if n > 0 {
			e.Logger.Debug("checkpoints pruned", "deleted", n)
		}
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// compactionCheckpoint returns sess's latest pre-compaction checkpoint: the one it names, else
// (a session recorded before it named one, or that one pruned) the newest among its latest
// reinforcementLookback checkpoints; an error wrapping kv.ErrNotFound when there is none.
func (e *Engine) compactionCheckpoint(ctx context.Context, sess kv.Session) (kv.Checkpoint, error) {
	if sess.CompactionCheckpoint != "" {
		c, err := e.Store.GetCheckpoint(ctx, sess.Scope, sess.CompactionCheckpoint)
		if !errors.Is(err, kv.ErrNotFound) {
			return c, err
		}
	}
	return e.Store.LatestCheckpointWith(ctx, sess.Scope, sess.ID, kv.TriggerPreCompaction, reinforcementLookback)
}

// countCompaction starts a new compaction epoch for sess at at, unless the latest one was
// reported within SameCompaction of it (another source reporting the same compaction).
func countCompaction(sess *kv.Session, at time.Time) {
	if !sess.CompactedAt.IsZero() && at.Sub(sess.CompactedAt).Abs() < SameCompaction {
		return
	}
	sess.Compactions++
	sess.CompactedAt = at
}

// reinforcement returns the objective block for session sess: its objective, its latest
// pre-compaction checkpoint (else its latest), and the sub-agents it spawned that finished,
// each result cast (inject.CastRun).
func (e *Engine) reinforcement(ctx context.Context, sess kv.Session) (string, error) {
	if e.Config.Passive {
		return "", nil
	}
	cp, err := e.compactionCheckpoint(ctx, sess)
	if errors.Is(err, kv.ErrNotFound) {
		cp, err = e.Store.LatestCheckpoint(ctx, sess.Scope, sess.ID)
	}
	var found *kv.Checkpoint
	switch {
	case err == nil:
		found = &cp
	case !errors.Is(err, kv.ErrNotFound):
		return "", err
	}
	var d *kv.Digest
	if found != nil {
		d = &found.Digest
	}
	runs, err := e.castRuns(ctx, sess.Scope, sess.ID, inject.ReinforcedRuns, d)
	if err != nil {
		return "", err
	}
	return inject.ObjectiveBlock(inject.Reinforcement{Objective: sess.Objective, Checkpoint: found, Finished: runs, Cast: e.castOptions()}, e.Config.MaxContextChars), nil
}

// recovered returns the recovered-checkpoint block for session sess starting: with resume its
// own latest checkpoint, else the newest checkpoint of another session of its scope and
// normalised project within RecoveryWindow, with the results of that session's finished
// sub-agents cast; "" when there is none.
func (e *Engine) recovered(ctx context.Context, sess kv.Session, resume bool) (string, error) {
	if e.Config.Passive {
		return "", nil
	}
	now := e.Now()
	var c kv.Checkpoint
	var err error
	switch {
	case resume:
		c, err = e.Store.LatestCheckpoint(ctx, sess.Scope, sess.ID)
	case sess.ProjectNorm == "":
		return "", nil
	default:
		c, err = e.Store.LatestProjectCheckpoint(ctx, sess.Scope, sess.ProjectNorm, now.Add(-e.Config.Checkpoints.RecoveryWindow), sess.ID)
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
	// The recovered session's sub-agents that finished are cast after its digest.
	runs, err := e.castRuns(ctx, c.Scope, c.SessionID, inject.RecoveredRuns, &c.Digest)
	if err != nil {
		return "", err
	}
	budget := min(inject.DefaultRecoveredChars, e.Config.MaxContextChars)
	return inject.RecoveryBlock(inject.Recovery{Checkpoint: c, SameSession: resume, Now: now, Finished: runs, Cast: e.castOptions()}, budget), nil
}

// castRuns reads the finished runs of session id a block may cast, at most n of them: the n
// newest finished (kv.Store.LatestFinishedRuns; the block casts the n that ended last among
// what it is given), and the runs digest d (nil: none) lists as open that have finished since,
// so the block shows none of them stale. What it reads does not grow with the session's runs:
// n records, those newer among its open and refused runs, and one per open run of d (at most
// eight).
func (e *Engine) castRuns(ctx context.Context, scope, id string, n int, d *kv.Digest) ([]kv.Run, error) {
	runs, err := e.Store.LatestFinishedRuns(ctx, scope, id, n)
	if err != nil || d == nil {
		return runs, err
	}
	for _, o := range d.OpenRuns {
		if slices.ContainsFunc(runs, func(r kv.Run) bool { return r.ID == o.RunID }) {
			continue
		}
		r, err := e.Store.GetRun(ctx, scope, o.RunID)
		switch {
		case errors.Is(err, kv.ErrNotFound):
		case err != nil:
			return nil, err
		case !r.Open() && r.Status != kv.RunRefused:
			runs = append(runs, r)
		}
	}
	return runs, nil
}
