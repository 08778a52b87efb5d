package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// These tests count what one reply reads and decodes, so that a reply whose cost starts to grow
// with what the scope holds (every run it ever recorded, every session, every checkpoint) fails
// CI instead of waiting for a benchmark to be re-run.

// crowd fills the scope with history that no reply of session root should read: finished runs
// of other sessions and of root itself, other sessions with indexed turns in the words root's
// own turns use, and checkpoints of both.
func crowd(t *testing.T, e *engine.Engine, root string, runs int) {
	t.Helper()
	ctx := context.Background()
	for batch := 0; batch < runs; batch += 1000 {
		err := e.Store.Update(ctx, func(tx *kv.Tx) error {
			for i := batch; i < min(batch+1000, runs); i++ {
				owner := fmt.Sprintf("other-%d", i%50)
				if i%10 == 0 {
					owner = root // the session's own history of finished sub-agents
				}
				if i < 50 {
					if _, err := tx.UpdateSession("default", owner, func(s *kv.Session, exists bool) error {
						if !exists {
							s.Harness, s.Status = "claude-code", kv.StatusEnded
						}
						return nil
					}); err != nil {
						return err
					}
				}
				_, err := tx.UpdateRun("default", fmt.Sprintf("old-%d", i), func(r *kv.Run, _ bool) error {
					r.Harness, r.RootID, r.ParentID = "claude-code", owner, owner
					r.ChildID, r.Type, r.Status = fmt.Sprintf("%s:old-%d", owner, i), "general-purpose", kv.RunCompleted
					r.Prompt, r.Result = "an old task", "an old result"
					return nil
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range min(runs, 50) {
		if i%10 == 0 {
			continue // root's: it has no session of its own here
		}
		turns := make([]kv.Turn, 20)
		for j := range turns {
			turns[j] = kv.Turn{Role: []string{"user", "assistant"}[j%2], SourceID: fmt.Sprintf("t%d", j),
				Text: fmt.Sprintf("step %d: keep the parser API stable while reading parse.go", j)}
		}
		if _, _, err := e.Store.UpsertTurns(ctx, "default", fmt.Sprintf("other-%d", i), turns); err != nil {
			t.Fatal(err)
		}
	}
	if runs > 0 && e.Store.IndexStatus().Building {
		t.Fatal("the search index is not kept as turns arrive")
	}
	for i := range 200 {
		if _, err := e.Store.PutCheckpoint(ctx, kv.Checkpoint{Scope: "default", SessionID: fmt.Sprintf("other-%d", i%50), Trigger: kv.TriggerPeriodic}); err != nil {
			t.Fatal(err)
		}
	}
}

// noPeriodic turns periodic checkpoints off, so no background writer runs while a test counts.
func noPeriodic(e *engine.Engine) {
	e.Config.Checkpoints.EveryPrompts, e.Config.Checkpoints.Every = 1<<30, 1000*time.Hour
}

// waitCheckpointed waits until session id's latest checkpoint has trigger and is recorded on
// the session: the background writer is done.
func waitCheckpointed(t *testing.T, e *engine.Engine, id, trigger string) {
	t.Helper()
	waitFor(t, "a "+trigger+" checkpoint of "+id+", recorded on the session", func() bool {
		c, err := e.Store.LatestCheckpoint(context.Background(), "default", id)
		if err != nil || c.Trigger != trigger {
			return false
		}
		sess, err := e.Store.GetSession(context.Background(), "default", id)
		return err == nil && sess.LastCheckpointAt.Equal(c.CreatedAt)
	})
}

// subagentStartCost spawns one sub-agent of a parent with a real transcript and returns what
// its SubagentStart read: the counters around the reply alone, with the spawn's background
// checkpoint written before.
func subagentStartCost(t *testing.T, runsInScope int) (kv.Stats, string) {
	tr := cct.NewTree(t, "P")
	e := openEngine(t, tr, noPeriodic) // only the spawn's checkpoint runs in the background
	for i := range 60 {
		cct.AppendLines(t, tr.Transcript, exchange("P", i, fmt.Sprintf("step %d: keep the parser API stable", i), strings.Repeat("reply words ", 20))...)
		mustHook(t, e, cct.Event(tr, P, "UserPromptSubmit", map[string]any{"prompt": "x"}))
	}
	crowd(t, e, P, runsInScope)
	cct.AppendLines(t, tr.Transcript, cct.ToolUseLine("P-spawn", "toolu_1", "Delegating."))
	mustHook(t, e, cct.Spawn(tr, P, "toolu_1", "general-purpose", "Port the lexer"))
	waitCheckpointed(t, e, P, kv.TriggerSpawn)
	before := e.Store.Stats()
	block := mustHook(t, e, cct.Start(tr, P, "a1", "general-purpose"))
	return costSince(e, before), block
}

// TestSubagentStart_Cost: a SubagentStart reads its parent once (one session record, one window
// of turns, one checkpoint), decodes only the run it pairs, commits twice (the top-level
// session's activity, the pairing), and reads exactly as much with 10,000 finished runs, 50
// other sessions and 200 checkpoints in the scope as with none.
func TestSubagentStart_Cost(t *testing.T) {
	empty, block := subagentStartCost(t, 0)
	crowded, crowdedBlock := subagentStartCost(t, 10000)
	if !strings.Contains(block, "## Inherited from Parent Session") || !strings.Contains(block, "step 59") {
		t.Fatalf("block without the parent's latest work:\n%s", block)
	}
	if !strings.Contains(crowdedBlock, "step 59") || !strings.Contains(crowdedBlock, "Sub-agents finished") {
		t.Errorf("crowded: block without the parent's latest work or its finished sub-agents:\n%s", crowdedBlock)
	}
	// Sessions: the top-level session as touchSession updates it, and the parent's one view.
	// Runs: the pending spawn, and the same run as the pairing updates it. Gets and Iterators
	// are as measured with the search index on (serve's store): each new one needs a reason.
	// The passages relevant to the task ("Port the lexer") add a Get of the index's figures,
	// an Iterator over the parent's children (the family: the child itself is left out) and
	// one per task term (port, lexer), each seeking the family's sessions only. The parent's
	// facts ledger, a record of its own, is one more Get. The delivery's record (what `heirloom
	// explain` shows) is one Iterator (a seek for the session's last number) and one unsynced
	// Commit.
	want := kv.Stats{Gets: 10, Iterators: 8, Sessions: 2, Runs: 2, Checkpoints: 1, Commits: 3, Unsynced: 1}
	got := empty
	got.Turns = 0
	if got != want {
		t.Errorf("decodes and commits per SubagentStart: got %+v, want %+v", got, want)
	}
	if empty.Turns == 0 || empty.Turns > 200 {
		t.Errorf("turns decoded: got %d, want the tail window (1..200)", empty.Turns)
	}
	if crowded != empty {
		t.Errorf("cost grows with the scope:\nempty   %+v\ncrowded %+v", empty, crowded)
	}
}

// injectCost asks the inherited block of a streamed child and returns what the call read.
func injectCost(t *testing.T, runsInScope int) (kv.Stats, string) {
	e := openEngine(t, cct.NewTree(t, "unused"), noPeriodic)
	ctx := t.Context()
	parent := adapters.Event{Harness: "opencode", Kind: adapters.KindSessionStart, SessionID: "ses_parent", Cwd: "/work/app", Title: "parser refactor"}
	child := adapters.Event{Harness: "opencode", Kind: adapters.KindSessionStart, SessionID: "ses_child", ParentSessionID: "ses_parent", Cwd: "/work/app"}
	turns := adapters.Event{Harness: "opencode", Kind: adapters.KindTurns, SessionID: "ses_parent"}
	for i := range 200 {
		role := []string{"user", "assistant", "tool"}[i%3]
		turns.Turns = append(turns.Turns, adapters.Turn{ID: fmt.Sprintf("prt_%03d", i), Role: role, Tool: map[bool]string{true: "read"}[role == "tool"],
			Text: strings.Repeat(fmt.Sprintf("turn %d must keep the API stable while reading parse.go; ", i), 8)})
	}
	for _, ev := range []adapters.Event{parent, child, turns} {
		if err := e.Consume(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	crowd(t, e, "ses_parent", runsInScope)
	if _, err := e.Checkpoint(ctx, "default", "ses_parent", kv.TriggerAgent, engine.Statements{}); err != nil {
		t.Fatal(err)
	}
	before := e.Store.Stats()
	text, err := e.Inject(ctx, engine.InjectRequest{Harness: "opencode", Session: "ses_child"})
	if err != nil {
		t.Fatal(err)
	}
	return costSince(e, before), text
}

// TestInject_Cost: a plugin's inject for a sub-agent reads the child and its parent's one view,
// writes only the delivery's record, and costs the same whatever else the scope holds.
func TestInject_Cost(t *testing.T) {
	empty, text := injectCost(t, 0)
	crowded, _ := injectCost(t, 10000)
	if !strings.Contains(text, "## Inherited from Parent Session") || !strings.Contains(text, "turn 199") {
		t.Fatalf("inject without the parent's latest turns:\n%s", text)
	}
	// Gets and Iterators as measured with the search index on: the child, the parent's session
	// record, its turns, its checkpoint and its facts ledger; the delivery's record, one seek
	// and one unsynced commit.
	want := kv.Stats{Gets: 4, Iterators: 3, Sessions: 2, Checkpoints: 1, Commits: 1, Unsynced: 1}
	got := empty
	got.Turns = 0
	if got != want {
		t.Errorf("decodes and commits per inject: got %+v, want %+v", got, want)
	}
	if empty.Turns == 0 || empty.Turns > 200 {
		t.Errorf("turns decoded: got %d, want the tail window (1..200)", empty.Turns)
	}
	if crowded != empty {
		t.Errorf("cost grows with the scope:\nempty   %+v\ncrowded %+v", empty, crowded)
	}
}

// TestCheckpoint_Cost: a periodic checkpoint reads the session's own runs through the parent
// index, not every run of the scope.
func TestCheckpoint_Cost(t *testing.T) {
	cost := func(runsInScope int) kv.Stats {
		tr := cct.NewTree(t, "P")
		e := openEngine(t, tr, noPeriodic)
		cct.AppendLines(t, tr.Transcript, exchange("P", 0, "the first prompt", "ok")...)
		mustHook(t, e, cct.Event(tr, P, "UserPromptSubmit", map[string]any{"prompt": "the first prompt"}))
		crowd(t, e, P, runsInScope)
		before := e.Store.Stats()
		if _, err := e.Checkpoint(t.Context(), "default", P, kv.TriggerExplicit, engine.Statements{}); err != nil {
			t.Fatal(err)
		}
		return costSince(e, before)
	}
	empty, crowded := cost(0), cost(10000)
	// The crowd gives P 1,000 finished runs of its own: those are its digest's to read.
	if crowded.Runs != 1000 || empty.Runs != 0 {
		t.Errorf("runs decoded per checkpoint: got %d empty, %d crowded; want 0 and the session's own 1000", empty.Runs, crowded.Runs)
	}
	// Each of its own runs is one Get through the parent index; nothing else grows.
	if crowded.Sessions != empty.Sessions || crowded.Turns != empty.Turns || crowded.Checkpoints != empty.Checkpoints ||
		crowded.Iterators != empty.Iterators || crowded.Gets-crowded.Runs != empty.Gets || crowded.Commits != empty.Commits {
		t.Errorf("checkpoint cost grows with the scope:\nempty   %+v\ncrowded %+v", empty, crowded)
	}
}

// TestSpawnCheckpoint_Cost: a spawn with no new turns since the latest checkpoint lists the
// parent's own runs once, to see whether a sibling finished and then for the new checkpoint's
// digest, not once for each.
func TestSpawnCheckpoint_Cost(t *testing.T) {
	tr := cct.NewTree(t, "P")
	e := openEngine(t, tr, noPeriodic)
	cct.AppendLines(t, tr.Transcript, exchange("P", 0, "port the lexer", "on it")...)
	mustHook(t, e, cct.Event(tr, P, "UserPromptSubmit", map[string]any{"prompt": "port the lexer"}))
	if _, err := e.Checkpoint(t.Context(), "default", P, kv.TriggerExplicit, engine.Statements{}); err != nil {
		t.Fatal(err)
	}
	crowd(t, e, P, 10000) // P's own 1,000 finished runs arrive after its checkpoint
	before := e.Store.Stats()
	mustHook(t, e, cct.Spawn(tr, P, "toolu_1", "general-purpose", "Port the lexer"))
	waitCheckpointed(t, e, P, kv.TriggerSpawn)
	cost := costSince(e, before)
	if cost.Runs < 1000 || cost.Runs >= 1100 {
		t.Errorf("runs decoded by a spawn and its checkpoint: got %d, want the parent's 1000 once (and the spawn's own few)", cost.Runs)
	}
	c, err := e.Store.LatestCheckpoint(t.Context(), "default", P)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Digest.FinishedRuns) != 8 {
		t.Errorf("spawn checkpoint: got %d finished runs, want the 8 latest", len(c.Digest.FinishedRuns))
	}
}

// TestPrompt_Cost: a prompt's hook, which ingests the transcript's new turns and writes their
// search postings in the same batch, reads the same with 10,000 runs, 50 other sessions, their
// indexed turns in the same words and 200 checkpoints in the scope as with none.
func TestPrompt_Cost(t *testing.T) {
	cost := func(runsInScope int) kv.Stats {
		tr := cct.NewTree(t, "P")
		e := openEngine(t, tr, noPeriodic)
		cct.AppendLines(t, tr.Transcript, exchange("P", 0, "the first prompt", "ok")...)
		mustHook(t, e, cct.Event(tr, P, "UserPromptSubmit", map[string]any{"prompt": "the first prompt"}))
		crowd(t, e, P, runsInScope)
		cct.AppendLines(t, tr.Transcript, exchange("P", 1, "step 1: keep the parser API stable while reading parse.go", "reading parse.go now")...)
		before := e.Store.Stats()
		mustHook(t, e, cct.Event(tr, P, "UserPromptSubmit", map[string]any{"prompt": "next"}))
		cost := costSince(e, before)
		if n := mustSession(t, e, P).TurnCount; n != 4 {
			t.Fatalf("turns stored: got %d, want 4 (the prompt's hook ingests the new two)", n)
		}
		return cost
	}
	empty, crowded := cost(0), cost(10000)
	// Sessions: the one read of the session before its transcript, and the record the ingest
	// writes; one Get is the scope's index figures (turn and term counts), which the new postings
	// update; one is the session's facts ledger, read because the prompt states a constraint
	// ("keep the parser API stable": a prompt that states nothing does not read it).
	want := kv.Stats{Gets: 6, Sessions: 2, Commits: 2}
	if empty != want {
		t.Errorf("reads per prompt: got %+v, want %+v", empty, want)
	}
	if crowded != empty {
		t.Errorf("cost grows with the scope:\nempty   %+v\ncrowded %+v", empty, crowded)
	}
}

// TestSessionStart_Cost: the blocks a SessionStart hands out read only the runs they may cast:
// after a compaction the reinforcement reads the session's 8 newest finished runs, a new
// session's recovery the 3 of the session it recovers, however many that session finished: the
// same with 1,000 runs of its own as with 20.
func TestSessionStart_Cost(t *testing.T) {
	cost := func(runsInScope int) (compact, recovery kv.Stats) {
		tr := cct.NewTree(t, "P")
		e := openEngine(t, tr, noPeriodic)
		cct.AppendLines(t, tr.Transcript, exchange("P", 0, "port the parser", "on it")...)
		mustHook(t, e, cct.Event(tr, P, "UserPromptSubmit", map[string]any{"prompt": "port the parser"}))
		crowd(t, e, P, runsInScope) // P's own finished runs: a tenth of them
		mustHook(t, e, cct.Event(tr, P, "PreCompact", map[string]any{"trigger": "manual"}))

		before := e.Store.Stats()
		block := mustHook(t, e, cct.Event(tr, P, "SessionStart", map[string]any{"source": "compact"}))
		compact = costSince(e, before)
		if !strings.Contains(block, "[Objective Reinforcement]") || strings.Count(block, "[Subagent Result: ") == 0 {
			t.Fatalf("reinforcement without the finished sub-agents:\n%s", block)
		}

		before = e.Store.Stats()
		block = mustHook(t, e, map[string]any{"session_id": Q, "transcript_path": tr.Transcript, "cwd": "/work/app", "hook_event_name": "SessionStart", "source": "startup"})
		recovery = costSince(e, before)
		if !strings.Contains(block, "## Recovered Session Checkpoint") || strings.Count(block, "[Subagent Result: ") == 0 {
			t.Fatalf("recovery without the finished sub-agents:\n%s", block)
		}
		return compact, recovery
	}
	compact, recovery := cost(200)
	crowdedCompact, crowdedRecovery := cost(10000)
	if compact.Runs != int64(inject.ReinforcedRuns) || recovery.Runs != int64(inject.RecoveredRuns) {
		t.Errorf("runs decoded: %d after a compaction, %d in recovery; want %d and %d", compact.Runs, recovery.Runs, inject.ReinforcedRuns, inject.RecoveredRuns)
	}
	if crowdedCompact != compact || crowdedRecovery != recovery {
		t.Errorf("SessionStart cost grows with the session's runs:\ncompact  %+v\ncrowded  %+v\nrecovery %+v\ncrowded  %+v", compact, crowdedCompact, recovery, crowdedRecovery)
	}
}

// costSince is the store's work since before, less the group syncs: those run on the store's
// own clock (every 100 ms while unsynced writes wait), so one may fall inside the window of an
// operation that only committed unsynced, on a slow machine.
func costSince(e *engine.Engine, before kv.Stats) kv.Stats {
	c := e.Store.Stats().Sub(before)
	c.Syncs, c.SyncErrors = 0, 0
	return c
}
