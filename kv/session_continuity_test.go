package kv_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

func TestSessionPrompts(t *testing.T) {
	s := MustOpenStore(t)
	ctx := t.Context()
	if err := s.PutSession(ctx, kv.Session{Scope: "sc", ID: "S", Harness: "opencode", Status: kv.StatusActive, Prompts: 7}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetSession(ctx, "sc", "S"); got.Prompts != 0 {
		t.Fatalf("new session: got prompts %d, want 0 (store-owned)", got.Prompts)
	}
	// New user turns count; a user record streamed again, and other roles, do not.
	for range 2 {
		if _, _, err := s.UpsertTurns(ctx, "sc", "S", []kv.Turn{
			{SourceID: "u1", Role: "user", Text: "one"},
			{SourceID: "a1", Role: "assistant", Text: "ok"},
			{SourceID: "t1", Role: "tool", Tool: "read"},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AppendTurns(ctx, "sc", "S", []kv.Turn{{SourceID: "u1", Role: "user", Text: "one"}, {SourceID: "u2", Role: "user", Text: "two"}}, kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
	// A writer's stale or made-up count is ignored.
	sess, err := s.UpdateSession(ctx, "sc", "S", func(sess *kv.Session, _ bool) error { sess.Prompts = 99; return nil })
	if err != nil || sess.Prompts != 2 {
		t.Fatalf("prompts: got %d, %v, want 2", sess.Prompts, err)
	}
}

func TestSessionContinuityFieldsRoundTrip(t *testing.T) {
	s := MustOpenStore(t)
	ctx := t.Context()
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	if err := s.PutSession(ctx, newSession("sc", "S")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSession(ctx, "sc", "S", func(sess *kv.Session, _ bool) error {
		sess.Decisions, sess.Constraints = []string{"use koanf"}, []string{"keep the API stable"}
		sess.LastCheckpointPrompts, sess.LastCheckpointAt = 10, at
		sess.ReinforcedEpoch, sess.FirstInjectDone = 2, true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSession(ctx, "sc", "S")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Decisions, got.Constraints) != "[use koanf] [keep the API stable]" ||
		got.LastCheckpointPrompts != 10 || !got.LastCheckpointAt.Equal(at) || got.ReinforcedEpoch != 2 || !got.FirstInjectDone {
		t.Fatalf("got %+v", got)
	}
}

func TestAddStatements(t *testing.T) {
	got := kv.AddStatements([]string{"a", "b"}, " b ", "", "c")
	if fmt.Sprint(got) != "[a b c]" {
		t.Fatalf("got %q", got)
	}
	var many []string
	for i := range kv.MaxStatements + 5 {
		many = kv.AddStatements(many, fmt.Sprint(i))
	}
	if len(many) != kv.MaxStatements || many[0] != "5" {
		t.Fatalf("capped: got %d, first %q", len(many), many[0])
	}
}

func TestCrossScopeLinks(t *testing.T) {
	s := MustOpenStore(t)
	ctx := t.Context()
	child := newSession("ops", "agent:ops:subagent:1")
	child.ParentID, child.ParentScope, child.Depth = "agent:main:main", "main", 1
	if err := s.PutSession(ctx, child); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSession(ctx, "ops", child.ID); err != nil || got.ParentScope != "main" || got.ParentID != "agent:main:main" {
		t.Fatalf("child read back: %+v, %v", got, err)
	}
	r := kv.Run{Scope: "main", ID: "call-1", Harness: "openclaw", RootID: "agent:main:main", ParentID: "agent:main:main",
		ChildID: child.ID, ChildScope: "ops", Status: kv.RunRunning}
	if err := putRun(ctx, s, r); err != nil {
		t.Fatal(err)
	}
	if got, err := s.RunByChild(ctx, "main", child.ID); err != nil || got.ChildScope != "ops" {
		t.Fatalf("run read back by its child: %+v, %v", got, err)
	}

	// A link to the session's own scope, or to no valid scope, is refused: "" says "same scope".
	for _, ps := range []string{"ops", "a\x00b"} {
		bad := child
		bad.ParentScope = ps
		if err := s.PutSession(ctx, bad); err == nil {
			t.Errorf("parent scope %q: stored, want an error", ps)
		}
	}
	badRun := r
	badRun.ChildScope = "main"
	if err := putRun(ctx, s, badRun); err == nil {
		t.Error("a run whose child scope is its own: stored, want an error")
	}
	// Across scopes, the same key may be a parent: not its own parent.
	same := newSession("ops", "agent:main:main")
	same.ParentID, same.ParentScope = "agent:main:main", "main"
	if err := s.PutSession(ctx, same); err != nil {
		t.Errorf("a parent with the same id in another scope: %v", err)
	}
}

// putRun stores r as it is.
func putRun(ctx context.Context, s *kv.Store, r kv.Run) error {
	_, err := s.UpdateRun(ctx, r.Scope, r.ID, func(cur *kv.Run, _ bool) error { *cur = r; return nil })
	return err
}

func TestChildrenAcrossScopes(t *testing.T) {
	s := MustOpenStore(t)
	ctx := t.Context()
	put := func(sess kv.Session) {
		t.Helper()
		if err := s.PutSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	put(newSession("main", "P"))
	same := newSession("main", "C1")
	same.ParentID = "P"
	put(same)
	cross := newSession("ops", "C2")
	cross.ParentID, cross.ParentScope = "P", "main"
	put(cross)
	names := func(ss []kv.Session) string {
		var out []string
		for _, x := range ss {
			out = append(out, x.Scope+"/"+x.ID)
		}
		return strings.Join(out, " ")
	}
	kids, err := s.Children(ctx, "main", "P")
	if err != nil || names(kids) != "main/C1 ops/C2" {
		t.Fatalf("children of main/P: %q, %v; want main/C1 ops/C2", names(kids), err)
	}
	top, err := s.ListSessions(ctx, "ops", kv.SessionFilter{TopLevel: true})
	if err != nil || names(top) != "ops/C2" {
		t.Errorf("top of scope ops: %q, %v; want the child whose parent is in main", names(top), err)
	}
	// The link moves with the parent, and goes with the session.
	if _, err := s.UpdateSession(ctx, "ops", "C2", func(c *kv.Session, _ bool) error { c.ParentID, c.ParentScope = "", ""; return nil }); err != nil {
		t.Fatal(err)
	}
	if kids, _ := s.Children(ctx, "main", "P"); names(kids) != "main/C1" {
		t.Errorf("after C2 lost its parent: children %q", names(kids))
	}
	if _, err := s.UpdateSession(ctx, "ops", "C2", func(c *kv.Session, _ bool) error { c.ParentID, c.ParentScope = "P", "main"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteSession(ctx, "ops", "C2"); err != nil {
		t.Fatal(err)
	}
	if kids, err := s.Children(ctx, "main", "P"); err != nil || names(kids) != "main/C1" {
		t.Errorf("after deleting ops/C2: children %q, %v", names(kids), err)
	}
}
