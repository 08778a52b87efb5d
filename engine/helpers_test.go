package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

// openEngine opens an engine over a real store in a temp dir that reads transcripts under
// tr.Root; both close at cleanup. configure runs before Open. The store keeps the search index,
// as serve's does, so what the tests count includes the postings written with every turn.
func openEngine(t testing.TB, tr cct.Tree, configure func(*engine.Engine)) *engine.Engine {
	t.Helper()
	store := kv.NewStore(t.TempDir())
	store.Index = search.Analyzer{}
	store.Ledger = inject.Ledger{}
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	reg, err := adapters.NewRegistry(claudecode.Registration(), adapters.Registration{Name: "opencode"})
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
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.Close(ctx); err != nil {
			t.Error(err)
		}
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

// hook decodes one Claude Code hook payload as the hook endpoint does and gives it to the
// engine, returning the context and the engine's error.
func hook(t testing.TB, e *engine.Engine, fields map[string]any) (string, error) {
	t.Helper()
	a, err := hookAnswer(t, e, fields)
	return a.Context, err
}

// hookAnswer is hook returning the engine's whole answer.
func hookAnswer(t testing.TB, e *engine.Engine, fields map[string]any) (adapters.Answer, error) {
	t.Helper()
	body, _ := json.Marshal(fields)
	ev, err := claudecode.Adapter{}.Decode(body)
	if err != nil {
		t.Fatalf("decode %v: %v", fields["hook_event_name"], err)
	}
	return e.Hook(t.Context(), ev)
}

// mustHook is hook that fails the test on an engine error.
func mustHook(t testing.TB, e *engine.Engine, fields map[string]any) string {
	t.Helper()
	text, err := hook(t, e, fields)
	if err != nil {
		t.Fatalf("%v: %v", fields["hook_event_name"], err)
	}
	return text
}

// started sends the SessionStart that begins session sid of tree tr: heirloom records a
// session the harness started, not one a later event merely names.
func started(t testing.TB, e *engine.Engine, tr cct.Tree, sid string) {
	t.Helper()
	mustHook(t, e, cct.Event(tr, sid, "SessionStart", map[string]any{"source": "startup"}))
}

func mustSession(t testing.TB, e *engine.Engine, id string) kv.Session {
	t.Helper()
	sess, err := e.Store.GetSession(context.Background(), "default", id)
	if err != nil {
		t.Fatalf("session %s: %v", id, err)
	}
	return sess
}

func mustRun(t testing.TB, e *engine.Engine, id string) kv.Run {
	t.Helper()
	r, err := e.Store.GetRun(context.Background(), "default", id)
	if err != nil {
		t.Fatalf("run %s: %v", id, err)
	}
	return r
}

// exchange is one prompt and reply of session sid, numbered i, as transcript lines.
func exchange(sid string, i int, prompt, reply string) []string {
	return []string{cct.UserLine(fmt.Sprintf("%s-u%d", sid, i), prompt), cct.AssistantLine(fmt.Sprintf("%s-a%d", sid, i), reply)}
}

// waitFor polls cond every 5ms for up to 10s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// checkpointCount is how many checkpoints session id has.
func checkpointCount(t testing.TB, e *engine.Engine, id string) int {
	t.Helper()
	cps, err := e.Store.Checkpoints(context.Background(), "default", id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(cps)
}

// Session ids of the tests' Claude Code sessions, named for the letters the tests call them
// by. Claude Code names a session by a UUID, and heirloom takes no other session_id from it.
const (
	S = "5e550000-0000-4000-8000-000000000001"
	P = "5e550000-0000-4000-8000-000000000002"
	R = "5e550000-0000-4000-8000-000000000003"
	Q = "5e550000-0000-4000-8000-000000000004"
	C = "5e550000-0000-4000-8000-000000000005"
	L = "5e550000-0000-4000-8000-000000000006"
	T = "5e550000-0000-4000-8000-000000000007"
)

// short names a session by the letter the tests call its top-level session by: R:b for
// sub-agent b of R.
func short(id string) string {
	return strings.NewReplacer(S, "S", P, "P", R, "R", Q, "Q", C, "C", L, "L", T, "T").Replace(id)
}
