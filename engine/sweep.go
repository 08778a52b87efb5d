package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// The run sweeps: heirloom's records of runs no harness reported the end of, and of full
// results kept past their time. They only change heirloom's records: heirloom never stops a
// harness's agent, and a harness that later reports a swept run's end is believed (finishRun).
//
//   - the watchdog ends a run running longer than Runs.WatchdogTimeout (from its sub-agent's
//     start) as watchdog_timeout;
//   - the ghost sweep ends a pending run whose sub-agent never started within Runs.GhostGrace,
//     and a running run whose parent session ended (at least min(GhostGrace, a minute) ago, so
//     the harness's own report of the run's end, on its way, wins), as ghost_sweep;
//   - the retention sweep replaces the full result of a run that ended more than
//     Runs.ResultRetention ago by its condensed form (inject.Condense: level 1, 2 when the
//     background condenser stored a summary, else 3), keeping its length (ResultChars) and when
//     (Swept, SweptAt). It never asks a model itself.
//
// Each pass also drops the spawn reservations that expired (see reserve.go).
//
// They run once when the engine opens (for runs left open, or results kept, while heirloom was
// down) and then every sweepEvery. Each looks only at what it sweeps (the store's indexes of
// open runs and of full results, scope by scope), and changes a run under the locks of the
// sessions whose events change it (the same ones a hook or a stream event takes), after
// reading it again: a run a hook ended meanwhile is left alone.

// maxSweepEvery is the longest the sweeps wait between two passes: a quarter of the shortest of
// the watchdog timeout, the ghost grace and the result retention, at most a minute.
const maxSweepEvery = time.Minute

// minSweepEvery keeps very short durations (tests) from spinning.
const minSweepEvery = 10 * time.Millisecond

// sweepPage is how many runs one store read of a sweep takes.
const sweepPage = 64

// parentSettle is the longest the ghost sweep waits after a parent session ended before it ends
// the parent's running runs.
const parentSettle = time.Minute

// sweepEvery is the period of the sweeps (see maxSweepEvery).
func (e *Engine) sweepEvery() time.Duration {
	r := e.Config.Runs
	d := min(r.WatchdogTimeout, r.GhostGrace, r.ResultRetention) / 4
	return max(minSweepEvery, min(d, maxSweepEvery))
}

// sweeper runs the sweeps now and then every sweepEvery until the engine closes.
func (e *Engine) sweeper() {
	defer e.wg.Done()
	t := time.NewTicker(e.sweepEvery())
	defer t.Stop()
	for {
		if err := e.Sweep(e.ctx); err != nil && e.ctx.Err() == nil {
			e.warn("runs not swept", err)
		}
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SweepStats counts what one Sweep changed.
type SweepStats struct {
	Watchdog int // runs ended as watchdog_timeout
	Ghosts   int // runs ended as ghost_sweep
	Results  int // full results swept
}

// Sweep runs the watchdog, the ghost sweep and the retention sweep once, over every scope (the
// engine runs it by itself; tests and tools may call it). It returns the first error that
// stopped a sweep; the others still ran.
func (e *Engine) Sweep(ctx context.Context) error {
	_, err := e.sweep(ctx)
	return err
}

func (e *Engine) sweep(ctx context.Context) (SweepStats, error) {
	var st SweepStats
	e.reservations.expire(e.Now(), e.reservationGrace())
	err := e.sweepOpen(ctx, &st)
	err = errors.Join(err, e.sweepResults(ctx, &st))
	if st != (SweepStats{}) {
		e.Logger.Debug("runs swept", "watchdog_timeout", st.Watchdog, "ghost_sweep", st.Ghosts, "results", st.Results)
	}
	return st, err
}

// sweepOpen ends the open runs of every scope that the watchdog or the ghost sweep gives up on.
// Open runs are few (what is running now): each scope's are read in one go.
func (e *Engine) sweepOpen(ctx context.Context, st *SweepStats) error {
	scopes, err := e.Store.OpenRunScopes(ctx)
	if err != nil {
		return err
	}
	for _, scope := range scopes {
		now := e.Now()
		open, err := e.Store.OpenRuns(ctx, scope, time.Time{}, 0)
		if err != nil {
			return err
		}
		for _, r := range open {
			reason, why, err := e.verdict(ctx, r, now)
			if err != nil {
				return err
			}
			if reason == "" {
				continue
			}
			ended, err := e.endRun(ctx, r, reason, why, now)
			if err != nil {
				return err
			}
			switch {
			case !ended:
			case reason == kv.EndWatchdogTimeout:
				st.Watchdog++
			default:
				st.Ghosts++
			}
		}
	}
	return nil
}

// verdict says whether open run r is to be ended at now, and why: its end reason and the words
// for it; "" when it is not.
func (e *Engine) verdict(ctx context.Context, r kv.Run, now time.Time) (reason, why string, err error) {
	rc := e.Config.Runs
	switch r.Status {
	case kv.RunPending:
		if now.Sub(r.CreatedAt) > rc.GhostGrace {
			return kv.EndGhostSweep, fmt.Sprintf("no sub-agent started for it within runs.ghost_grace (%s)", rc.GhostGrace), nil
		}
	case kv.RunRunning:
		started := r.StartedAt
		if started.IsZero() {
			started = r.CreatedAt
		}
		if now.Sub(started) > rc.WatchdogTimeout {
			return kv.EndWatchdogTimeout, fmt.Sprintf("ran longer than runs.watchdog_timeout (%s); heirloom stopped waiting for it, the agent itself was not stopped", rc.WatchdogTimeout), nil
		}
		parent, err := e.Store.GetSession(ctx, r.Scope, r.ParentID)
		if errors.Is(err, kv.ErrNotFound) {
			return "", "", nil
		}
		if err != nil {
			return "", "", err
		}
		if parent.Status == kv.StatusEnded && now.Sub(parent.UpdatedAt) >= min(rc.GhostGrace, parentSettle) {
			return kv.EndGhostSweep, "its parent session " + parent.ID + " ended while it was still running, and it never reported back", nil
		}
	}
	return "", "", nil
}

// endRun ends open run r as reason (kv.EndWatchdogTimeout or kv.EndGhostSweep), status failed,
// at now, under the locks of its sessions, unless it changed since it was read (a hook paired
// or ended it). ended says whether it did.
func (e *Engine) endRun(ctx context.Context, r kv.Run, reason, why string, now time.Time) (ended bool, err error) {
	unlock := e.lockRun(r)
	defer unlock()
	_, err = e.Store.UpdateRun(ctx, r.Scope, r.ID, func(cur *kv.Run, exists bool) error {
		if !exists || cur.Status != r.Status || cur.ChildID != r.ChildID || !cur.StartedAt.Equal(r.StartedAt) {
			return errUnchanged
		}
		cur.Status, cur.EndReason, cur.Reason, cur.EndedAt = kv.RunFailed, reason, why, now
		return nil
	})
	switch {
	case errors.Is(err, errUnchanged):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("end run %s as %s: %w", r.ID, reason, err)
	}
	return true, nil
}

// sweepResults sweeps, in every scope, the full results kept longer than Runs.ResultRetention,
// a page at a time.
func (e *Engine) sweepResults(ctx context.Context, st *SweepStats) error {
	scopes, err := e.Store.FullResultScopes(ctx)
	if err != nil {
		return err
	}
	for _, scope := range scopes {
		for {
			page, err := e.Store.FullResultRuns(ctx, scope, e.Now().Add(-e.Config.Runs.ResultRetention), sweepPage)
			if err != nil {
				return err
			}
			swept := 0
			for _, r := range page {
				ok, err := e.sweepResult(ctx, r)
				if err != nil {
					return err
				}
				if ok {
					swept++
				}
			}
			st.Results += swept
			if len(page) < sweepPage || swept == 0 {
				break
			}
		}
	}
	return nil
}

// sweepResult replaces r's full result by its condensed form: its level-2 summary when the
// background condenser stored one (see condenseRun), else level 3. It never asks a model: the
// sweeps' pass would wait on it, and the watchdog and the ghost sweep with it.
func (e *Engine) sweepResult(ctx context.Context, r kv.Run) (bool, error) {
	unlock := e.lockRun(r)
	defer unlock()
	_, err := e.Store.UpdateRun(ctx, r.Scope, r.ID, func(cur *kv.Run, exists bool) error {
		if !exists || cur.Swept || cur.Result != r.Result {
			return errUnchanged // changed meanwhile: the next sweep looks again
		}
		body, level := inject.Condense(*cur, e.Config.Runs.MaxResultTokens)
		cur.ResultChars, cur.Result, cur.Condensation = inject.Len(cur.Result), body, level
		cur.Swept, cur.SweptAt, cur.Summary = true, e.Now(), ""
		return nil
	})
	e.summaries.forget(lockKey(r.Scope, r.ID))
	switch {
	case errors.Is(err, errUnchanged):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("sweep the result of run %s: %w", r.ID, err)
	}
	return true, nil
}

// lockRun takes the locks of the sessions whose events change run r (its top-level session:
// Claude Code's hooks; its parent: a streamed spawn or result; its child: a streamed idle), in
// that order, and returns their release. Hooks and streams hold one lock at a time, and every
// lockRun takes its tree's top-level session's first, so the order cannot deadlock.
func (e *Engine) lockRun(r kv.Run) (unlock func()) {
	var unlocks []func()
	seen := map[string]bool{}
	for _, k := range []string{lockKey(r.Scope, r.RootID), lockKey(r.Scope, r.ParentID), lockKey(childScope(r), r.ChildID)} {
		if strings.HasSuffix(k, "\x00") || seen[k] {
			continue // no such session (a pending run's child)
		}
		seen[k] = true
		unlocks = append(unlocks, e.locks.lock(k))
	}
	return func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
}
