package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/search"
)

// shortRuns sets the run sweeps' durations: watchdog, ghost grace, result retention.
func shortRuns(watchdog, ghost, retention time.Duration) func(*engine.Engine) {
	return func(e *engine.Engine) {
		noPeriodic(e)
		e.Config.Runs.WatchdogTimeout, e.Config.Runs.GhostGrace, e.Config.Runs.ResultRetention = watchdog, ghost, retention
	}
}

// waitRun waits until run id satisfies ok, and returns it.
func waitRun(t *testing.T, e *engine.Engine, id, what string, ok func(kv.Run) bool) kv.Run {
	t.Helper()
	var r kv.Run
	waitFor(t, "run "+id+": "+what, func() bool {
		r = mustRun(t, e, id)
		return ok(r)
	})
	return r
}

// spawnStarted spawns sub-agent agent of session S through tool and starts it.
func spawnStarted(t *testing.T, e *engine.Engine, tr cct.Tree, tool, agent string) {
	t.Helper()
	mustHook(t, e, cct.Spawn(tr, S, tool, "Explore", "task "+tool, ""))
	mustHook(t, e, cct.Start(tr, S, agent, "Explore"))
}

// TestWatchdog: a run running longer than runs.watchdog_timeout ends as watchdog_timeout, on the
// feed too; the sub-agent's session is left as it is (heirloom stops no agent); when the
// sub-agent reports back after all, its harness's account replaces the watchdog's.
func TestWatchdog(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, shortRuns(150*time.Millisecond, time.Hour, time.Hour))
	ended := e.Feed.Subscribe(engine.EventFilter{Types: []string{engine.EventRunEnded}}, 0)
	defer ended.Close()
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "go"}))
	spawnStarted(t, e, tr, "toolu_1", "a1")

	r := waitRun(t, e, "toolu_1", "ended by the watchdog", func(r kv.Run) bool { return !r.Open() })
	if r.Status != kv.RunFailed || r.EndReason != kv.EndWatchdogTimeout || !strings.Contains(r.Reason, "runs.watchdog_timeout (150ms)") {
		t.Fatalf("run: status %q, end %q, reason %q", r.Status, r.EndReason, r.Reason)
	}
	if age := r.EndedAt.Sub(r.StartedAt); age < 150*time.Millisecond || age > 5*time.Second {
		t.Errorf("ended %s after its start; want just past the 150ms timeout", age)
	}
	if c := mustSession(t, e, S+":a1"); c.Status != kv.StatusActive {
		t.Errorf("the sub-agent's session is %s; heirloom must not end it", c.Status)
	}
	if evs := drain(ended); len(evs) != 1 || evs[0].Run != "toolu_1" || evs[0].Data["end_reason"] != kv.EndWatchdogTimeout {
		t.Errorf("feed: %+v; want one run.ended with end_reason watchdog_timeout", evs)
	}
	if cast := e.CastRun(r, 0, false); !strings.Contains(cast, "Status: failed (end reason: watchdog_timeout)") {
		t.Errorf("cast:\n%s", cast)
	}

	// The sub-agent was only slow: its result arrives and is believed.
	mustHook(t, e, cct.Event(tr, S, "SubagentStop", map[string]any{"agent_id": "a1", "agent_type": "Explore", "last_assistant_message": "Late but done."}))
	mustHook(t, e, cct.Result(tr, S, "toolu_1", "a1", "Late but done: three callers."))
	r = mustRun(t, e, "toolu_1")
	if r.Status != kv.RunCompleted || r.EndReason != kv.EndCompleted || r.Result != "Late but done: three callers." || !strings.Contains(r.Reason, "after heirloom's watchdog_timeout") {
		t.Errorf("late end: status %q, end %q, result %q, reason %q", r.Status, r.EndReason, r.Result, r.Reason)
	}
}

// TestGhostSweep: a pending run whose sub-agent never starts within runs.ghost_grace, and a
// running run whose parent session ended, end as ghost_sweep; a running run under a live parent,
// within the watchdog, is left alone.
func TestGhostSweep(t *testing.T) {
	t.Run("NeverStarted", func(t *testing.T) {
		tr := cct.NewTree(t, "S")
		e := openEngine(t, tr, shortRuns(time.Hour, 100*time.Millisecond, time.Hour))
		started(t, e, tr, S)
		mustHook(t, e, cct.Spawn(tr, S, "toolu_1", "Explore", "a task no sub-agent takes", ""))
		r := waitRun(t, e, "toolu_1", "swept", func(r kv.Run) bool { return !r.Open() })
		if r.Status != kv.RunFailed || r.EndReason != kv.EndGhostSweep || !strings.Contains(r.Reason, "no sub-agent started for it within runs.ghost_grace (100ms)") {
			t.Fatalf("run: status %q, end %q, reason %q", r.Status, r.EndReason, r.Reason)
		}
		if n, err := e.Store.ActiveChildren(t.Context(), "default", S, 0); err != nil || n != 0 {
			t.Errorf("S's active children after the sweep: %d, %v; want 0 (spawn.max_children counts open runs)", n, err)
		}
	})
	t.Run("ParentEnded", func(t *testing.T) {
		tr := cct.NewTree(t, "S")
		e := openEngine(t, tr, shortRuns(time.Hour, 100*time.Millisecond, time.Hour))
		started(t, e, tr, S)
		spawnStarted(t, e, tr, "toolu_1", "a1")
		mustHook(t, e, cct.Event(tr, S, "SessionEnd", nil))
		r := waitRun(t, e, "toolu_1", "swept", func(r kv.Run) bool { return !r.Open() })
		if r.EndReason != kv.EndGhostSweep || !strings.Contains(r.Reason, "parent session "+S+" ended") {
			t.Fatalf("run: status %q, end %q, reason %q", r.Status, r.EndReason, r.Reason)
		}
	})
	t.Run("Live", func(t *testing.T) {
		tr := cct.NewTree(t, "S")
		e := openEngine(t, tr, shortRuns(time.Hour, 20*time.Millisecond, time.Hour))
		started(t, e, tr, S)
		spawnStarted(t, e, tr, "toolu_1", "a1")
		time.Sleep(150 * time.Millisecond) // many sweeps
		if err := e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		if r := mustRun(t, e, "toolu_1"); r.Status != kv.RunRunning {
			t.Fatalf("a running run under a live parent was ended: %+v", r)
		}
	})
}

// TestSweep_Restart: runs left open while heirloom was down are ended by the sweep at start-up:
// the engine and its store are closed with a pending and a running run, and reopened two hours
// later.
func TestSweep_Restart(t *testing.T) {
	dir := t.TempDir()
	tr := cct.NewTree(t, "S")
	e, closeAll := openEngineAt(t, dir, tr, noPeriodic)
	started(t, e, tr, S)
	mustHook(t, e, cct.Spawn(tr, S, "toolu_pending", "Plan", "never picked up", ""))
	spawnStarted(t, e, tr, "toolu_running", "a1")
	if err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"toolu_pending", "toolu_running"} {
		if r := mustRun(t, e, id); !r.Open() {
			t.Fatalf("run %s ended before the restart: %+v", id, r)
		}
	}
	closeAll()

	later := time.Now().Add(2 * time.Hour)
	e, closeAll = openEngineAt(t, dir, tr, func(e *engine.Engine) {
		noPeriodic(e)
		e.Now = func() time.Time { return later }
	})
	defer closeAll()
	p := waitRun(t, e, "toolu_pending", "ended at start-up", func(r kv.Run) bool { return !r.Open() })
	r := waitRun(t, e, "toolu_running", "ended at start-up", func(r kv.Run) bool { return !r.Open() })
	if p.EndReason != kv.EndGhostSweep || r.EndReason != kv.EndWatchdogTimeout {
		t.Errorf("after the restart: pending run ended as %q, running run as %q; want ghost_sweep and watchdog_timeout", p.EndReason, r.EndReason)
	}
	if !r.EndedAt.Equal(later) {
		t.Errorf("ended at %v, want the reopened engine's now %v", r.EndedAt, later)
	}
}

// openEngineAt opens a store at dir and an engine over it, as openEngine does, and returns a
// function closing both (also run at cleanup, once).
func openEngineAt(t *testing.T, dir string, tr cct.Tree, configure func(*engine.Engine)) (*engine.Engine, func()) {
	t.Helper()
	store := kv.NewStore(dir)
	store.Index = search.Analyzer{}
	store.Ledger = inject.Ledger{}
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	reg, err := adapters.NewRegistry(claudecode.Registration())
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(store, "default")
	e.Harnesses = reg
	e.Config.TranscriptRoots = []string{tr.Root}
	e.Config.SpawnRecordWait = 5 * time.Millisecond
	if configure != nil {
		configure(e)
	}
	if err := e.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	closeAll := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := e.Close(ctx); err != nil {
				t.Error(err)
			}
			if err := store.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(closeAll)
	return e, closeAll
}

// finished stores a finished run of session S with result, ended at ended.
func finished(t *testing.T, e *engine.Engine, id, result string, ended time.Time) {
	t.Helper()
	_, err := e.Store.UpdateRun(t.Context(), "default", id, func(r *kv.Run, _ bool) error {
		r.Harness, r.RootID, r.ParentID, r.ChildID = "claude-code", S, S, S+":"+id
		r.Description, r.Prompt, r.Type = "describe "+id, "task of "+id, "Explore"
		r.Status, r.EndReason, r.Result = kv.RunCompleted, kv.EndCompleted, result
		r.CreatedAt, r.StartedAt, r.EndedAt = ended.Add(-time.Minute), ended.Add(-time.Minute), ended
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// longResult is a result of about 12,000 characters: 3,000 estimated tokens.
var longResult = "FIRST-LINE findings follow.\n" + strings.Repeat("a detail of the survey that the parent may need.\n", 240) + "LAST-LINE: three callers."

// TestResultRetention: a full result kept longer than runs.result_retention is swept: a result
// within runs.max_result_tokens is kept whole (level 1), a longer one is kept as its head and
// tail (level 3); the run remembers when, and the full result's length.
func TestResultRetention(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, func(e *engine.Engine) {
		shortRuns(time.Hour, time.Hour, 200*time.Millisecond)(e)
		e.Config.Runs.MaxResultTokens = 500
	})
	now := time.Now()
	finished(t, e, "short", "Three callers: a.go, b.go, c.go.", now)
	finished(t, e, "long", longResult, now)

	short := waitRun(t, e, "short", "swept", func(r kv.Run) bool { return r.Swept })
	long := waitRun(t, e, "long", "swept", func(r kv.Run) bool { return r.Swept })
	if short.Condensation != inject.LevelPassthrough || short.Result != "Three callers: a.go, b.go, c.go." || short.ResultChars != 32 {
		t.Errorf("short result: level %d, %q, %d chars", short.Condensation, short.Result, short.ResultChars)
	}
	if long.Condensation != inject.LevelHeadTail || long.ResultChars != inject.Len(longResult) || inject.Len(long.Result) > 2000 ||
		!strings.Contains(long.Result, "FIRST-LINE") || !strings.Contains(long.Result, "LAST-LINE") || !strings.Contains(long.Result, "characters omitted") {
		t.Errorf("long result: level %d, %d chars kept of %d:\n%s", long.Condensation, inject.Len(long.Result), long.ResultChars, long.Result)
	}
	if long.SweptAt.Before(long.EndedAt.Add(200*time.Millisecond)) || long.SweptAt.After(time.Now()) {
		t.Errorf("swept at %v, ended at %v: want after the retention", long.SweptAt, long.EndedAt)
	}
	cast := e.CastRun(long, 0, false)
	for _, want := range []string{"Condensation: Level 3 (head/tail)", "FIRST-LINE", "LAST-LINE", "Full result: swept "} {
		if !strings.Contains(cast, want) {
			t.Errorf("cast of the swept run lacks %q:\n%s", want, cast)
		}
	}
	if full := e.CastRun(long, 0, true); strings.Contains(full, strings.Repeat("a detail of the survey that the parent may need.\n", 100)) {
		t.Errorf("a swept run still shows its full result")
	}
	if list, err := e.Store.FullResultRuns(t.Context(), "default", time.Now().Add(time.Hour), 0); err != nil || len(list) != 0 {
		t.Errorf("full-result runs after the sweep: %d, %v; want none", len(list), err)
	}
	// A stream's resync repeats the run's result: the swept run keeps its condensed form.
	err := e.Consume(t.Context(), adapters.Event{Harness: "opencode", Kind: adapters.KindSpawnResult, SessionID: S,
		Spawn: &adapters.Spawn{ToolUseID: "long", ChildSessionID: S + ":long"}, Result: &adapters.Result{Status: "completed", Text: longResult}})
	if err != nil {
		t.Fatal(err)
	}
	if again := mustRun(t, e, "long"); again.Result != long.Result || !again.Swept {
		t.Errorf("a repeated result brought the full result back: swept %v, %d chars", again.Swept, inject.Len(again.Result))
	}
}

// condenser is a Condenser that answers with summary (or err), after delay, and counts calls.
type condenser struct {
	mu      sync.Mutex
	calls   []string // the tasks asked about
	summary string
	err     error
	delay   time.Duration
}

func (c *condenser) Condense(ctx context.Context, task, result string) (string, error) {
	c.mu.Lock()
	c.calls = append(c.calls, task)
	c.mu.Unlock()
	if c.delay > 0 {
		select {
		case <-time.After(c.delay):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return c.summary, c.err
}

func (c *condenser) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

// TestCondense_Level2: with a condenser, a run that ends with a long result gets its level-2
// summary in the background, shown by every cast and kept when the result is swept; a condenser
// that fails or is too slow leaves level 3, and is asked once.
func TestCondense_Level2(t *testing.T) {
	limits := func(c *condenser, retention time.Duration) func(*engine.Engine) {
		return func(e *engine.Engine) {
			shortRuns(time.Hour, time.Hour, retention)(e)
			e.Config.Runs.MaxResultTokens, e.Config.Runs.CondenseTimeout = 500, 100*time.Millisecond
			if c != nil {
				e.Condenser = c
			}
		}
	}
	t.Run("Summary", func(t *testing.T) {
		c := &condenser{summary: "Summary: three callers.\nFile paths:\n- a.go"}
		tr := cct.NewTree(t, "S")
		e := openEngine(t, tr, limits(c, 300*time.Millisecond))
		started(t, e, tr, S)
		spawnStarted(t, e, tr, "toolu_1", "a1")
		spawnStarted(t, e, tr, "toolu_2", "a2")
		mustHook(t, e, cct.Result(tr, S, "toolu_1", "a1", longResult))
		mustHook(t, e, cct.Result(tr, S, "toolu_2", "a2", "short"))
		r := waitRun(t, e, "toolu_1", "summarised", func(r kv.Run) bool { return r.Summary != "" })
		if cast := e.CastRun(r, 0, false); !strings.Contains(cast, "Condensation: Level 2 (LLM summary)\nSummary: three callers.\nFile paths:\n- a.go\n---") {
			t.Errorf("cast:\n%s", cast)
		}
		r = waitRun(t, e, "toolu_1", "swept", func(r kv.Run) bool { return r.Swept })
		if r.Condensation != inject.LevelSummary || r.Result != c.summary || r.Summary != "" || r.ResultChars != inject.Len(longResult) {
			t.Errorf("swept: level %d, result %q, summary %q, %d chars", r.Condensation, r.Result, r.Summary, r.ResultChars)
		}
		waitRun(t, e, "toolu_2", "swept", func(r kv.Run) bool { return r.Swept })
		if n := c.count(); n != 1 {
			t.Errorf("the condenser was asked %d times, want once (the short result needs none)", n)
		}
	})
	for _, tc := range []struct {
		name string
		c    *condenser
	}{
		{"Failure", &condenser{err: errors.New("503 overloaded")}},
		{"Timeout", &condenser{summary: "too late", delay: 5 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := cct.NewTree(t, "S")
			e := openEngine(t, tr, limits(tc.c, 400*time.Millisecond))
			started(t, e, tr, S)
			spawnStarted(t, e, tr, "toolu_1", "a1")
			start := time.Now()
			mustHook(t, e, cct.Result(tr, S, "toolu_1", "a1", longResult))
			waitFor(t, "the condenser asked", func() bool { return tc.c.count() == 1 })
			if cast := e.CastRun(mustRun(t, e, "toolu_1"), 0, false); !strings.Contains(cast, "Condensation: Level 3 (head/tail)") {
				t.Errorf("cast while no summary:\n%s", cast)
			}
			r := waitRun(t, e, "toolu_1", "swept", func(r kv.Run) bool { return r.Swept })
			if r.Condensation != inject.LevelHeadTail || !strings.Contains(r.Result, "characters omitted") {
				t.Errorf("swept at level %d:\n%s", r.Condensation, r.Result)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("sweeping took %s: the condenser's timeout is 100ms", d)
			}
			if n := tc.c.count(); n != 1 {
				t.Errorf("the condenser was asked %d times, want once", n)
			}
		})
	}
	t.Run("CatchUpAtStart", func(t *testing.T) {
		dir := t.TempDir()
		tr := cct.NewTree(t, "S")
		e, closeAll := openEngineAt(t, dir, tr, limits(nil, time.Hour))
		finished(t, e, "old", longResult, time.Now())
		closeAll()
		c := &condenser{summary: "Summary: caught up."}
		e, _ = openEngineAt(t, dir, tr, limits(c, time.Hour))
		waitRun(t, e, "old", "summarised at start-up", func(r kv.Run) bool { return r.Summary == c.summary })
	})
}

// TestCondense_SweepAsksNoModel: the retention sweep never asks the model: a result without a
// stored summary is swept at level 3 at once, while the background condenser is still waiting on
// the model (here, for ever) about another run; the model is asked by the condenser alone.
func TestCondense_SweepAsksNoModel(t *testing.T) {
	dir := t.TempDir()
	tr := cct.NewTree(t, "S")
	configure := func(c *condenser) func(*engine.Engine) {
		return func(e *engine.Engine) {
			shortRuns(time.Hour, time.Hour, time.Hour)(e)
			e.Config.Runs.MaxResultTokens, e.Config.Runs.CondenseTimeout = 500, time.Minute
			if c != nil {
				e.Condenser = c
			}
		}
	}
	e, closeAll := openEngineAt(t, dir, tr, configure(nil))
	old := time.Now().Add(-2 * time.Hour) // past the retention
	finished(t, e, "first", longResult, old)
	finished(t, e, "second", longResult, old.Add(time.Second))
	closeAll()

	c := &condenser{summary: "Summary: never in time.", delay: time.Hour} // a model that never answers
	e, _ = openEngineAt(t, dir, tr, configure(c))
	start := time.Now()
	for _, id := range []string{"first", "second"} {
		r := waitRun(t, e, id, "swept", func(r kv.Run) bool { return r.Swept })
		if r.Condensation != inject.LevelHeadTail {
			t.Errorf("run %s swept at level %d, want 3 (no summary stored)", id, r.Condensation)
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("sweeping took %s: the sweep waited on the model", d)
	}
	if err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := c.count(); n > 1 {
		t.Errorf("the model was asked %d times, want once at most (by the background condenser, one run at a time, unless the sweep got there first)", n)
	}
}

// TestReinforcement_CastsResults: after a compaction, the reinforcement casts the results of the
// session's finished sub-agents, within the reply's cap.
func TestReinforcement_CastsResults(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, noPeriodic)
	cct.AppendLines(t, tr.Transcript, exchange("S", 0, "Port the parser.", "Delegating.")...)
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Port the parser."}))
	spawnStarted(t, e, tr, "toolu_1", "a1")
	mustHook(t, e, cct.Event(tr, S, "SubagentStop", map[string]any{"agent_id": "a1", "agent_type": "Explore", "last_assistant_message": "x"}))
	mustHook(t, e, cct.Result(tr, S, "toolu_1", "a1", "CHILD-RESULT-5531: three callers."))
	spawnStarted(t, e, tr, "toolu_2", "a2")
	mustHook(t, e, cct.Result(tr, S, "toolu_2", "a2", longResult+longResult+longResult))
	mustHook(t, e, cct.Event(tr, S, "PreCompact", map[string]any{"trigger": "manual"}))
	got := mustHook(t, e, cct.Event(tr, S, "SessionStart", map[string]any{"source": "compact"}))
	for _, want := range []string{"[Objective Reinforcement]", "[Subagent Result: desc toolu_1]", "CHILD-RESULT-5531", "Condensation: Level 1 (passthrough)",
		"[Subagent Result: desc toolu_2]", "Condensation: Level 3 (head/tail)", "FIRST-LINE", "LAST-LINE", "heirloom runs show toolu_2 (kept until "} {
		if !strings.Contains(got, want) {
			t.Errorf("reinforcement lacks %q:\n%s", want, got)
		}
	}
	if n := inject.Len(got); n > e.Config.MaxContextChars {
		t.Errorf("reinforcement is %d units, over the %d cap", n, e.Config.MaxContextChars)
	}
}
