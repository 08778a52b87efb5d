package engine_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/engine"
)

// writeBigTranscript writes n exchanges of session sid, each about 2 KB, and returns the
// file's size.
func writeBigTranscript(t *testing.T, path, sid string, n int) int64 {
	t.Helper()
	var b strings.Builder
	for i := range n {
		for _, l := range exchange(sid, i, fmt.Sprintf("prompt %d", i), fmt.Sprintf("reply %d: %s", i, strings.Repeat("filler words ", 150))) {
			b.WriteString(l + "\n")
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return int64(b.Len())
}

// TestUnseenTranscript: the first hook of a session whose transcript heirloom never saw, and
// which is longer than a hook reads, reads none of it while the harness waits: the transcript
// is read in the background, in order, each turn once. A sub-agent starting meanwhile inherits
// the parent's latest work, taken from the file's end.
func TestUnseenTranscript(t *testing.T) {
	tr := cct.NewTree(t, "P")
	e := openEngine(t, tr, func(e *engine.Engine) {
		noPeriodic(e)
		e.Config.HookReadBytes, e.Config.MaxReadBytes = 64<<10, 256<<10
	})
	const n = 1000 // 2 MB
	size := writeBigTranscript(t, tr.Transcript, "P", n)
	cct.AppendLines(t, tr.Transcript, cct.ToolUseLine("P-spawn", "toolu_1", "Handing the last part over."))

	mustHook(t, e, cct.Event(tr, P, "UserPromptSubmit", map[string]any{"prompt": "prompt 999"}))
	mustHook(t, e, cct.Spawn(tr, P, "toolu_1", "general-purpose", "Finish the last part"))
	block := mustHook(t, e, cct.Start(tr, P, "a1", "general-purpose"))
	if st := e.Stats(); st.HookBytes != 0 || st.CatchUps != 1 {
		t.Errorf("hooks read %d bytes while the harness waited, catch-ups %d; want 0 and 1", st.HookBytes, st.CatchUps)
	}
	if !strings.Contains(block, "reply 999") || !strings.Contains(block, "Handing the last part over.") {
		t.Errorf("inherited block without the parent's latest work:\n%s", block)
	}

	waitFor(t, "the catch-up", func() bool {
		s, err := e.Store.GetSession(t.Context(), "default", P)
		return err == nil && s.Transcript.Offset >= size
	})
	turns, err := e.Store.Turns(t.Context(), "default", P, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 2*n+1 {
		t.Fatalf("stored %d turns, want %d", len(turns), 2*n+1)
	}
	for i := range n {
		if want := fmt.Sprintf("P-u%d", i); turns[2*i].SourceID != want {
			t.Fatalf("turn %d: got %s, want %s (in order, each once)", 2*i, turns[2*i].SourceID, want)
		}
	}
	if st := e.Stats(); st.BackgroundBytes < size {
		t.Errorf("background read %d bytes, want the whole %d", st.BackgroundBytes, size)
	}
	// Caught up: the next hook reads its new bytes itself.
	cct.AppendLines(t, tr.Transcript, exchange("P", n, "one more", "done")...)
	mustHook(t, e, cct.Event(tr, P, "Stop", nil))
	if st := e.Stats(); st.HookBytes == 0 || st.CatchUps != 1 {
		t.Errorf("after the catch-up: hook bytes %d, catch-ups %d; want the hook to read, no new catch-up", st.HookBytes, st.CatchUps)
	}
}

// TestCatchUp_LongRecords: a catch-up reads hook_read_bytes at a time, but a record longer than
// that and within max_read_bytes is read whole and kept; only one longer than max_read_bytes is
// skipped.
func TestCatchUp_LongRecords(t *testing.T) {
	tr := cct.NewTree(t, "L")
	e := openEngine(t, tr, func(e *engine.Engine) {
		noPeriodic(e)
		e.Config.HookReadBytes, e.Config.MaxReadBytes = 1<<10, 8<<10
	})
	cct.AppendLines(t, tr.Transcript, cct.UserLine("u0", "first"), cct.UserLine("long", strings.Repeat("l", 4<<10)), cct.UserLine("u1", "second"),
		cct.UserLine("huge", strings.Repeat("h", 10<<10)), cct.UserLine("u2", "third"))
	mustHook(t, e, cct.Event(tr, L, "Stop", nil))
	size, _ := os.Stat(tr.Transcript)
	waitFor(t, "the catch-up", func() bool {
		s, err := e.Store.GetSession(t.Context(), "default", L)
		return err == nil && s.Transcript.Offset == size.Size()
	})
	turns, err := e.Store.Turns(t.Context(), "default", L, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tt := range turns {
		ids = append(ids, tt.SourceID)
	}
	if got := strings.Join(ids, ","); got != "u0,long,u1,u2" {
		t.Errorf("stored %s, want u0,long,u1,u2 (the 10 KiB record over max_read_bytes skipped)", got)
	}
}

// TestHookRead_RecordAtTheCap: a record still being written whose unread part is exactly what a
// hook reads is not skipped as oversized: it is read whole once it ends.
func TestHookRead_RecordAtTheCap(t *testing.T) {
	tr := cct.NewTree(t, "C")
	e := openEngine(t, tr, func(e *engine.Engine) {
		noPeriodic(e)
		e.Config.HookReadBytes, e.Config.MaxReadBytes = 1<<10, 4<<10
	})
	record := cct.UserLine("big", strings.Repeat("b", 1500)) + "\n"
	if err := os.WriteFile(tr.Transcript, []byte(record[:1<<10]), 0o644); err != nil {
		t.Fatal(err)
	}
	started(t, e, tr, C)
	mustHook(t, e, cct.Event(tr, C, "Stop", nil))
	f, err := os.OpenFile(tr.Transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(record[1<<10:])
	f.Close()
	waitFor(t, "the record", func() bool {
		mustHook(t, e, cct.Event(tr, C, "Stop", nil))
		turns, err := e.Store.Turns(t.Context(), "default", C, 0, 0)
		return err == nil && len(turns) == 1 && turns[0].SourceID == "big"
	})
}
