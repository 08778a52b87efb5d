package engine

import (
	"context"
	"errors"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

// reindexLogEvery is how often a running reindex logs its progress.
const reindexLogEvery = 10 * time.Second

// StartReindex begins rebuilding the search index (kv.Store.BeginReindex) and goes on in the
// background, logging its progress. Open starts one by itself when the store's index is due (an
// upgrade, a new analyzer version). It returns false, nil when a rebuild already runs.
func (e *Engine) StartReindex(ctx context.Context) (bool, error) {
	if e.Store.Index == nil {
		return false, errors.New("the store has no search index")
	}
	if !e.add() {
		return false, ErrNotOpen
	}
	err := e.Store.BeginReindex(ctx)
	if errors.Is(err, kv.ErrReindexRunning) {
		e.wg.Done()
		return false, nil
	}
	if err != nil {
		e.wg.Done()
		return false, err
	}
	go func() {
		defer e.wg.Done()
		e.reindex(e.ctx)
	}()
	return true, nil
}

func (e *Engine) reindex(ctx context.Context) {
	start := e.Now()
	e.Logger.Info("search index: building", "turns", e.Store.IndexStatus().Total)
	last := start
	err := e.Store.ResumeReindex(ctx, func(done, total uint64) {
		if now := e.Now(); now.Sub(last) >= reindexLogEvery {
			last = now
			e.Logger.Info("search index: building", "done", done, "total", total)
		}
	})
	switch {
	case err != nil && ctx.Err() != nil:
		e.Logger.Info("search index: stopped; it is rebuilt at the next start", "done", e.Store.IndexStatus().Done)
	case err != nil:
		e.Logger.Error("search index: build failed; searches see part of the turns", "error", err)
	default:
		st := e.Store.IndexStatus()
		e.Logger.Info("search index: ready", "turns", st.Done, "took", e.Now().Sub(start).Round(time.Millisecond))
	}
}
