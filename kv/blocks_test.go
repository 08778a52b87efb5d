package kv_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

// TestBlocks: deliveries read back newest first, whole; a session keeps its newest MaxBlocks;
// another session's are its own; deleting the session deletes them.
func TestBlocks(t *testing.T) {
	s := MustOpenStore(t)
	ctx := t.Context()
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	if err := s.PutSession(ctx, newSession("default", "S")); err != nil {
		t.Fatal(err)
	}
	for i := range kv.MaxBlocks + 5 {
		b := kv.Block{Scope: "default", SessionID: "S", At: t0.Add(time.Duration(i) * time.Second), Via: "inject",
			Headings: []string{"## Inherited from Parent Session"}, Chars: 100 + i, ParentID: "P", Provisional: i%2 == 0,
			Cut: "(cut to fit: the oldest decisions)", Text: fmt.Sprintf("block %d", i)}
		if err := s.RecordBlock(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordBlock(ctx, kv.Block{Scope: "default", SessionID: "other", At: t0, Text: "other's"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Blocks(ctx, "default", "S", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != kv.MaxBlocks || got[0].Text != fmt.Sprintf("block %d", kv.MaxBlocks+4) || got[len(got)-1].Text != "block 5" {
		t.Fatalf("%d blocks, newest %q, oldest %q; want the newest %d, newest first", len(got), got[0].Text, got[len(got)-1].Text, kv.MaxBlocks)
	}
	b := got[0]
	if b.Via != "inject" || b.Chars != 100+kv.MaxBlocks+4 || b.ParentID != "P" || !b.Provisional || b.Cut == "" || len(b.Headings) != 1 || !b.At.Equal(t0.Add(time.Duration(kv.MaxBlocks+4)*time.Second)) {
		t.Errorf("newest block read back: %+v", b)
	}
	if two, _ := s.Blocks(ctx, "default", "S", 2); len(two) != 2 {
		t.Errorf("limit 2: %d blocks", len(two))
	}
	if _, err := s.DeleteSession(ctx, "default", "S"); err != nil {
		t.Fatal(err)
	}
	if left, _ := s.Blocks(ctx, "default", "S", 0); len(left) != 0 {
		t.Errorf("after deleting the session: %d blocks left", len(left))
	}
	if other, _ := s.Blocks(ctx, "default", "other", 0); len(other) != 1 {
		t.Errorf("another session's blocks: %d, want 1", len(other))
	}

	// A parent's deletion takes its sub-agents' records, which quote it, with it.
	parent := newSession("default", "P")
	child := newSession("default", "P:c")
	child.ParentID = "P"
	cross := newSession("ops", "agent:ops:subagent:1")
	cross.ParentID, cross.ParentScope = "P", "default"
	for _, x := range []kv.Session{parent, child, cross} {
		if err := s.PutSession(ctx, x); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordBlock(ctx, kv.Block{Scope: x.Scope, SessionID: x.ID, Text: "secret from P"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DeleteSession(ctx, "default", "P"); err != nil {
		t.Fatal(err)
	}
	for _, x := range []kv.Session{child, cross} {
		if left, _ := s.Blocks(ctx, x.Scope, x.ID, 0); len(left) != 0 {
			t.Errorf("after deleting the parent: %s/%s keeps %d records quoting it", x.Scope, x.ID, len(left))
		}
	}
}

// BenchmarkRecordBlock is one delivery's record on the hook path: a 9,500-character block into
// a session that already keeps MaxBlocks (one seek for its number, a set and a point deletion,
// unsynced).
func BenchmarkRecordBlock(b *testing.B) {
	s := MustOpenStore(b)
	text := strings.Repeat("x", 9500)
	for b.Loop() {
		if err := s.RecordBlock(b.Context(), kv.Block{Scope: "default", SessionID: "S", Text: text}); err != nil {
			b.Fatal(err)
		}
	}
}
