package kv

import (
	"errors"
	"testing"
)

// TestOnCommit: every committed change of a session, run or checkpoint is reported once, as it
// was and is, in commit order; an aborted change reports nothing.
func TestOnCommit(t *testing.T) {
	dir := t.TempDir()
	s := NewStore(dir)
	var got []Change
	s.OnCommit = func(cs []Change) { got = append(got, cs...) }
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()

	if err := s.PutSession(ctx, Session{Scope: "default", ID: "root", Harness: "claude-code", Status: StatusActive}); err != nil {
		t.Fatal(err)
	}
	putTestRun(t, s, Run{ID: "r1", ParentID: "root", Status: RunPending})
	putTestRun(t, s, Run{ID: "r1", ParentID: "root", ChildID: "root:a", Status: RunRunning})
	if _, err := s.AppendTurns(ctx, "default", "root", []Turn{{Role: "user", Text: "hi"}}, TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCheckpoint(ctx, Checkpoint{Scope: "default", SessionID: "root", Trigger: TriggerAgent}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateRun(ctx, "default", "r1", func(*Run, bool) error { return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}

	if len(got) != 5 {
		t.Fatalf("%d changes reported, want 5: %+v", len(got), got)
	}
	if c := got[0].Session; c == nil || c.Existed || c.New.ID != "root" {
		t.Errorf("change 0: %+v, want the new session", got[0])
	}
	if c := got[1].Run; c == nil || c.Existed || c.New.Status != RunPending {
		t.Errorf("change 1: %+v, want the new pending run", got[1])
	}
	if c := got[2].Run; c == nil || !c.Existed || c.Old.Status != RunPending || c.New.Status != RunRunning {
		t.Errorf("change 2: %+v, want the run from pending to running", got[2])
	}
	if c := got[3].Session; c == nil || !c.Existed || c.Old.TurnCount != 0 || c.New.TurnCount != 1 {
		t.Errorf("change 3: %+v, want the session with its new turn", got[3])
	}
	if c := got[4].Checkpoint; c == nil || c.ID == "" || c.SessionID != "root" {
		t.Errorf("change 4: %+v, want the checkpoint as stored", got[4])
	}
}
