package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// Engine makes heirloom's decisions: it turns the normalised events of every harness into
// durable state (sessions, lineage, runs, transcript turns, checkpoints) and gathers what the
// context blocks need. It knows nothing of HTTP. Set its fields, then Open it; it follows
// New → Open → Close.
type Engine struct {
	// Store keeps everything the engine learns. Required.
	Store *kv.Store
	// Scope is the memory scope of harnesses whose events name none. Required.
	Scope string
	// Harnesses are the harnesses the engine reads transcripts, sub-agent metadata and session
	// keys of, by Event.Harness. Nil knows none: events are still recorded, no file is read.
	Harnesses *adapters.Registry
	// Describers ask a streaming harness about a session now, by harness name: a plugin's
	// first model call for a sub-agent whose parent is not known yet waits on one for at most
	// Config.DescribeWait. Nil or missing means never ask.
	Describers map[string]adapters.Describer
	// Config holds the limits and cadences; New sets DefaultConfig.
	Config Config
	// Logger receives the engine's warnings and errors. New sets a null logger.
	Logger hclog.Logger
	// Now returns the current time. New sets time.Now.
	Now func() time.Time
	// Feed is the live feed of lifecycle events (see Event). New makes it and subscribes it to
	// the store's commits.
	Feed *Feed
	// Condenser makes the level-2 summaries of long results (condense.url), in the background.
	// Nil means none: a long result is cast at level 3.
	Condenser Condenser

	stats       counters
	locks       keyLocks
	checkpoints flights  // checkpoints written in the background, by session
	heard       heard    // when each harness was last heard from (LastHeard)
	receipts    receipts // spawn receipts naming sub-agents not started yet (Codex)
	first       harnessFirst
	searching   chan struct{} // a token per search running (see Search)
	counts      counts        // blocks delivered and runs ended, for /metrics
	catchups    flights       // transcripts read in the background, by session
	ctx         context.Context
	cancel      context.CancelFunc
	life        sync.Mutex // guards closing and wg.Add against Close
	closing     bool       // Close began: no new background work
	wg          sync.WaitGroup
	openedAt    time.Time
	closeOnce   sync.Once

	// summaries remembers the runs whose level-2 summary was asked for.
	summaries summaries
	// reservations hold the places of allowed spawns whose runs the harness names by the child,
	// until the child's run appears (see reserve.go).
	reservations reservations
	// refusals count the spawns over a limit (SpawnRefusals).
	refusals refusalCounts
}

// Stats counts what the engine read of transcripts since it was made. Counters only grow.
type Stats struct {
	HookBytes       int64 // transcript bytes read while a harness waited for a hook's reply
	BackgroundBytes int64 // transcript bytes read in the background (catch-ups of long transcripts)
	CatchUps        int64 // background catch-ups started
}

// counters are an Engine's Stats, updated atomically.
type counters struct {
	hookBytes, backgroundBytes, catchUps atomic.Int64
}

// Stats returns a snapshot of the engine's counters. Safe to call at any time.
func (e *Engine) Stats() Stats {
	return Stats{
		HookBytes:       e.stats.hookBytes.Load(),
		BackgroundBytes: e.stats.backgroundBytes.Load(),
		CatchUps:        e.stats.catchUps.Load(),
	}
}

// New returns an Engine over store for scope with the default configuration.
// The store's commits feed the engine's live feed (kv.Store.OnCommit): call New before the
// first write.
func New(store *kv.Store, scope string) *Engine {
	e := &Engine{
		Store:  store,
		Scope:  scope,
		Config: DefaultConfig(),
		Logger: hclog.NewNullLogger(),
		Now:    time.Now,
		Feed:   &Feed{},

		searching: make(chan struct{}, searchesAtOnce),
	}
	if store != nil {
		store.OnCommit = e.observe
	}
	return e
}

// Open validates the engine's fields and starts its background work (pruning old
// checkpoints; the run sweeps, a first time at once, for runs left open while heirloom was
// down; level-2 summaries, when a Condenser is set). ctx bounds Open only; the background work
// runs until Close.
func (e *Engine) Open(ctx context.Context) error {
	switch {
	case e.Store == nil:
		return errors.New("engine: store required")
	case e.Scope == "":
		return errors.New("engine: scope required")
	case e.Logger == nil || e.Now == nil:
		return errors.New("engine: logger and clock required (start from New)")
	case e.ctx != nil:
		return errors.New("engine: already open")
	}
	if err := e.Config.Validate(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.openedAt = e.Now()
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.wg.Add(1)
	go e.prune()
	e.wg.Add(1)
	go e.sweeper()
	if e.Condenser != nil {
		e.wg.Add(1)
		go e.condenser()
	}
	if e.Store.IndexStatus().Building {
		if _, err := e.StartReindex(ctx); err != nil {
			e.Logger.Error("search index: cannot start building it; searches see part of the turns", "error", err)
		}
	}
	return nil
}

// Close stops the background work and waits for it until ctx ends: no new work starts, and
// what runs (a hook's work its deadline cut short, background checkpoints and transcript
// reads, the pruner) sees the engine's context cancelled and stops at its next store call,
// each store write being whole or absent. It is safe to call twice and without Open.
func (e *Engine) Close(ctx context.Context) error {
	var err error
	e.closeOnce.Do(func() {
		if e.cancel == nil {
			return
		}
		e.life.Lock()
		e.closing = true
		e.life.Unlock()
		e.cancel()
		done := make(chan struct{})
		go func() {
			e.wg.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			err = fmt.Errorf("engine: background work still running: %w", ctx.Err())
		}
	})
	return err
}

// ErrNotOpen is returned by calls that need the engine's background context before Open or
// after Close.
var ErrNotOpen = errors.New("engine not open")

// detach runs fn under the engine's own context, so that what it writes is finished even when
// the caller stops waiting, and waits for it until ctx ends. It returns fn's result, or ctx's
// error when ctx ended first (fn then finishes in the background, and Close waits for it). A
// result detach returns was handed to the caller in time; one it did not, never was.
func detach[T any](ctx context.Context, e *Engine, fn func(context.Context) (T, error)) (T, error) {
	return detachLate(ctx, e, fn, nil)
}

// detachLate is detach, with late (when not nil) called with fn's result when the caller
// stopped waiting before it: what fn decided never reached the caller (a hook's harness got
// the empty answer instead). late runs in fn's goroutine, under the engine's context, and
// Close waits for it. Exactly one of the two gets the result: the caller, or late.
func detachLate[T any](ctx context.Context, e *Engine, fn func(context.Context) (T, error), late func(ctx context.Context, v T, err error)) (T, error) {
	var zero T
	if !e.add() {
		return zero, ErrNotOpen
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result) // unbuffered: the caller takes the result, or does not
	gone := make(chan struct{})
	go func() {
		defer e.wg.Done()
		v, err := fn(e.ctx)
		select {
		case done <- result{v, err}:
		case <-gone:
			if late != nil {
				late(e.ctx, v, err)
			}
		}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		close(gone)
		return zero, ctx.Err()
	}
}

// goBackground runs fn in the background under the engine's context, unless the engine is
// closing. Close waits for it.
func (e *Engine) goBackground(fn func(ctx context.Context)) bool {
	if !e.add() {
		return false
	}
	go func() {
		defer e.wg.Done()
		fn(e.ctx)
	}()
	return true
}

// add counts one more piece of background work for Close to wait for; false when the engine is
// not open or closing, and then nothing may start.
func (e *Engine) add() bool {
	e.life.Lock()
	defer e.life.Unlock()
	if e.ctx == nil || e.closing {
		return false
	}
	e.wg.Add(1)
	return true
}

// harness returns the registration of a harness; the zero Registration when none.
func (e *Engine) harness(name string) adapters.Registration {
	reg, _ := e.Harnesses.Get(name)
	return reg
}

// lockKey names the lock of session id in scope.
func lockKey(scope, id string) string { return scope + "\x00" + id }

// flights tracks one background job per key (a session), lets others wait for it, and queues
// one more job to run after it.
type flights struct {
	mu     sync.Mutex
	jobs   map[string]chan struct{}         // closed when the key's jobs are all done
	queued map[string]func(context.Context) // the job to run next for a key
}

// start registers a job for key; false when one is running. The caller runs it and then calls
// finish, and runs what finish returns, until nil.
func (f *flights) start(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, busy := f.jobs[key]; busy {
		return false
	}
	if f.jobs == nil {
		f.jobs, f.queued = map[string]chan struct{}{}, map[string]func(context.Context){}
	}
	f.jobs[key] = make(chan struct{})
	return true
}

// startOrQueue registers job for key and returns true for the caller to run it, as start
// does; when a job is running it makes job the next to run after it (replacing any queued
// before) and returns false.
func (f *flights) startOrQueue(key string, job func(context.Context)) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, busy := f.jobs[key]; busy {
		f.queued[key] = job
		return false
	}
	if f.jobs == nil {
		f.jobs, f.queued = map[string]chan struct{}{}, map[string]func(context.Context){}
	}
	f.jobs[key] = make(chan struct{})
	return true
}

// finish ends the job running for key and returns the one queued behind it, still registered;
// nil when there is none, and then the key is free and its waiters are woken.
func (f *flights) finish(key string) func(context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if next := f.queued[key]; next != nil {
		delete(f.queued, key)
		return next
	}
	if ch, ok := f.jobs[key]; ok {
		delete(f.jobs, key)
		close(ch)
	}
	return nil
}

// running reports whether a job for key is running.
func (f *flights) running(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, busy := f.jobs[key]
	return busy
}

// wait waits until no job for key is running, at most d (or until ctx ends). It reports
// whether none is running when it returns.
func (f *flights) wait(ctx context.Context, key string, d time.Duration) bool {
	f.mu.Lock()
	ch := f.jobs[key]
	f.mu.Unlock()
	if ch == nil {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// warn logs a failed write at Warn, or at Debug when the disk is full: the store says that once
// a minute, and every call on a full disk would otherwise say it again.
func (e *Engine) warn(msg string, err error, args ...any) {
	args = append(args, "error", err)
	if errors.Is(err, kv.ErrDiskFull) {
		e.Logger.Debug(msg, args...)
		return
	}
	e.Logger.Warn(msg, args...)
}
