package kv_test

import (
	"fmt"
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
