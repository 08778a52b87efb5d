package engine_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
)

// lineage is the pairing state a correction changes: each sub-agent's parent, depth, title and
// objective, and each run's child, provisional mark and status; sessions named by letter (see
// short).
type lineage struct {
	Sessions map[string]string
	Runs     map[string]string
}

func readLineage(t *testing.T, e *engine.Engine) lineage {
	t.Helper()
	l := lineage{Sessions: map[string]string{}, Runs: map[string]string{}}
	sessions, err := e.Store.ListSessions(t.Context(), "default", kv.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		l.Sessions[short(s.ID)] = fmt.Sprintf("parent=%q depth=%d title=%q objective=%q", short(s.ParentID), s.Depth, s.Title, s.Objective)
	}
	runs, err := e.Store.ListRuns(t.Context(), "default", kv.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		l.Runs[r.ID] = fmt.Sprintf("child=%q provisional=%v status=%s", short(r.ChildID), r.Provisional, r.Status)
	}
	return l
}

// quiet makes an engine write nothing in the background (no periodic checkpoint, and in passive
// mode no spawn checkpoint), so a test that counts or fails the store's steps sees only its own.
func quiet(e *engine.Engine) {
	noPeriodic(e)
	e.Config.Passive = true
}

// TestCorrection_AtomicAtEveryStep: two same-type sub-agents are paired by guess, each with the
// other's spawn. The spawn's result then says which sub-agent served it, which swaps both runs'
// children and both sub-agents' tasks. With a failure injected at each step of that hook in
// turn, the store is found exactly as before the hook every time (the hook answers, failing
// open); let through, the swap is complete. Never half made.
func TestCorrection_AtomicAtEveryStep(t *testing.T) {
	tr := cct.NewTree(t, "R")
	e := openEngine(t, tr, quiet)
	cct.AppendLines(t, tr.Transcript, exchange("R", 0, "Split the work in two.", "Spawning two.")...)
	mustHook(t, e, cct.Event(tr, R, "UserPromptSubmit", map[string]any{"prompt": "Split the work in two."}))
	mustHook(t, e, cct.Spawn(tr, R, "t1", "general-purpose", "Task one"))
	mustHook(t, e, cct.Spawn(tr, R, "t2", "general-purpose", "Task two"))
	// Claude Code starts the second spawn's sub-agent first: both pairings are guesses, and wrong.
	mustHook(t, e, cct.Start(tr, R, "b", "general-purpose"))
	mustHook(t, e, cct.Start(tr, R, "a", "general-purpose"))
	before := readLineage(t, e)
	if before.Runs["t1"] != `child="R:b" provisional=true status=running` || before.Sessions["R:b"] != `parent="R" depth=1 title="desc t1" objective="Task one"` {
		t.Fatalf("setup: want b paired with t1 by guess, got\n%v", before)
	}

	injected := errors.New("injected")
	steps := 0
	for k := 0; ; k++ {
		step := 0
		e.Store.Fault = func(string) error {
			if step++; step-1 == k {
				return injected
			}
			return nil
		}
		_, err := hook(t, e, cct.Result(tr, R, "t2", "b", "done two"))
		e.Store.Fault = nil
		if err == nil {
			steps = k
			break
		}
		if !errors.Is(err, injected) {
			t.Fatalf("step %d: got %v, want the injected error", k, err)
		}
		if got := readLineage(t, e); !reflect.DeepEqual(got, before) {
			t.Fatalf("failed at step %d: the store is half changed:\ngot  %v\nwant %v", k, got, before)
		}
	}
	if steps < 5 {
		t.Fatalf("the hook went through after %d injected failures; want a correction of several steps", steps)
	}
	after := readLineage(t, e)
	want := map[string]string{
		"t2": `child="R:b" provisional=false status=completed`,
		"t1": `child="R:a" provisional=true status=running`,
	}
	for id, w := range want {
		if after.Runs[id] != w {
			t.Errorf("run %s after the correction: got %s, want %s", id, after.Runs[id], w)
		}
	}
	if got := after.Sessions["R:b"]; got != `parent="R" depth=1 title="desc t2" objective="Task two"` {
		t.Errorf("sub-agent b after the correction: %s", got)
	}
	if got := after.Sessions["R:a"]; got != `parent="R" depth=1 title="desc t1" objective="Task one"` {
		t.Errorf("sub-agent a after the correction: %s", got)
	}
	t.Logf("a failure at each of %d steps left the store as it was", steps)
}

// TestPairing_OneCommit: the pairing at SubagentStart (the sub-agent's session and its run) is
// one commit beside the top-level session's own activity, and a correction is one commit
// beside it.
func TestPairing_OneCommit(t *testing.T) {
	tr := cct.NewTree(t, "R")
	e := openEngine(t, tr, quiet)
	started(t, e, tr, R)
	mustHook(t, e, cct.Spawn(tr, R, "t1", "Explore", "Look around"))
	mustHook(t, e, cct.Spawn(tr, R, "t2", "Explore", "Look elsewhere"))
	before := e.Store.Stats()
	mustHook(t, e, cct.Start(tr, R, "b", "Explore"))
	if got := e.Store.Stats().Sub(before).Commits; got != 2 {
		t.Errorf("commits for a SubagentStart: got %d, want 2 (activity, pairing)", got)
	}
	mustHook(t, e, cct.Start(tr, R, "a", "Explore"))
	before = e.Store.Stats()
	mustHook(t, e, cct.Result(tr, R, "t2", "b", "found it"))
	if got := e.Store.Stats().Sub(before).Commits; got != 2 {
		t.Errorf("commits for a correcting PostToolUse: got %d, want 2 (activity, correction with the result)", got)
	}
}
