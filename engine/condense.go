package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// Level-2 condensation: when a Condenser is set (condense.url), a run that ends with a result
// longer than Runs.MaxResultTokens gets an LLM summary, made in the background right after it
// ended and stored on the run (Run.Summary), so that every later cast of it (after a
// compaction, in recovery, on the API) shows the summary without waiting for a model: a hook
// never waits on one. Until the summary is stored, or when the call failed or timed out, casts
// show level 3. Each run is asked about once per process; a restart asks again for those still
// without one.

// Condenser makes level-2 condensations: a summary, in labelled sections, of result, the answer
// a sub-agent gave to task. It returns an error when it cannot (the caller uses level 3).
// condense.Client implements it.
type Condenser interface {
	Condense(ctx context.Context, task, result string) (string, error)
}

// summaries remembers which runs were asked about in this process.
type summaries struct {
	mu    sync.Mutex
	asked map[string]bool
}

// claim reports whether key was not asked about yet, and marks it asked.
func (s *summaries) claim(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asked[key] {
		return false
	}
	if s.asked == nil {
		s.asked = map[string]bool{}
	}
	s.asked[key] = true
	return true
}

// forget drops key (its result was swept: it is never asked about again).
func (s *summaries) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.asked, key)
}

// wantsSummary reports whether r is to get a level-2 summary: a condenser is set, and r holds a
// full result longer than the level-1 limit and no summary yet.
func (e *Engine) wantsSummary(r kv.Run) bool {
	return e.Condenser != nil && !r.Open() && !r.Swept && r.Summary == "" &&
		inject.EstimateTokens(r.Result) > e.Config.Runs.MaxResultTokens
}

// summarize asks the condenser for r's summary, within Runs.CondenseTimeout, once per run per
// process: a run asked about already gets an error at once. The task and the result are sent
// redacted (inject.Redact): no secret a sub-agent read leaves heirloom.
func (e *Engine) summarize(ctx context.Context, r kv.Run) (string, error) {
	if !e.summaries.claim(lockKey(r.Scope, r.ID)) {
		return "", errors.New("asked already")
	}
	ctx, cancel := context.WithTimeout(ctx, e.Config.Runs.CondenseTimeout)
	defer cancel()
	start := time.Now()
	// The endpoint is outside heirloom: it gets the task and the result redacted, as every cast
	// shows them.
	s, err := e.Condenser.Condense(ctx, inject.Redact(r.Prompt), inject.Redact(r.Result))
	if err != nil {
		if e.ctx.Err() == nil {
			e.warn("result not summarised; it is shown at level 3 (head and tail)", err, "run", r.ID, "after", time.Since(start).Round(time.Millisecond))
		}
		return "", err
	}
	return s, nil
}

// condenseRun makes and stores the summary of run id of scope when it wants one (see
// wantsSummary). The summary is stored unless the run changed meanwhile (swept, or its result
// replaced).
func (e *Engine) condenseRun(ctx context.Context, scope, id string) error {
	r, err := e.Store.GetRun(ctx, scope, id)
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	if err != nil || !e.wantsSummary(r) {
		return err
	}
	s, err := e.summarize(ctx, r)
	if err != nil {
		return nil // logged; casts use level 3
	}
	unlock := e.lockRun(r)
	defer unlock()
	_, err = e.Store.UpdateRun(ctx, scope, id, func(cur *kv.Run, exists bool) error {
		if !exists || cur.Swept || cur.Summary != "" || cur.Result != r.Result {
			return errUnchanged
		}
		cur.Summary = s
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return fmt.Errorf("store the summary of run %s: %w", id, err)
	}
	return nil
}

// condenser summarises, in the background, the runs that end with a long result: it follows
// the live feed's run.ended, and first catches up with the runs that ended before (while
// heirloom was down, or while it fell behind the feed). One summary at a time.
func (e *Engine) condenser() {
	defer e.wg.Done()
	for e.ctx.Err() == nil {
		sub := e.Feed.Subscribe(EventFilter{Types: []string{EventRunEnded}}, DefaultSubscriberBuffer)
		if err := e.catchUpSummaries(e.ctx); err != nil && e.ctx.Err() == nil {
			e.warn("results not summarised", err)
		}
		e.followRunEnds(sub)
		sub.Close()
	}
}

// followRunEnds summarises the runs sub reports ended, until the engine closes or sub is
// dropped for falling behind.
func (e *Engine) followRunEnds(sub *Subscription) {
	for {
		select {
		case <-e.ctx.Done():
			return
		case ev, ok := <-sub.C:
			if !ok {
				return
			}
			if err := e.condenseRun(e.ctx, ev.Scope, ev.Run); err != nil && e.ctx.Err() == nil {
				e.warn("result not summarised", err, "run", ev.Run)
			}
		}
	}
}

// catchUpSummaries summarises the finished runs of every scope that hold a long full result
// and no summary.
func (e *Engine) catchUpSummaries(ctx context.Context) error {
	scopes, err := e.Store.FullResultScopes(ctx)
	if err != nil {
		return err
	}
	for _, scope := range scopes {
		runs, err := e.Store.FullResultRuns(ctx, scope, e.Now().Add(time.Hour), 0)
		if err != nil {
			return err
		}
		for _, r := range runs {
			if e.wantsSummary(r) {
				if err := e.condenseRun(ctx, scope, r.ID); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
