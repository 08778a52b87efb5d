package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
)

// tree is a fake Claude Code projects dir: a transcript root with one session's transcript.
type tree struct {
	root       string // the allowed transcript root
	transcript string // the session's transcript path
}

func newTree(t testing.TB, sid string) tree {
	t.Helper()
	root := filepath.Join(t.TempDir(), "projects")
	dir := filepath.Join(root, "-work-app")
	if err := os.MkdirAll(filepath.Join(dir, sid, "subagents"), 0o755); err != nil {
		t.Fatal(err)
	}
	return tree{root: root, transcript: filepath.Join(dir, sid+".jsonl")}
}

// openEngine opens an engine over a real store in a temp dir that reads transcripts under
// tr.root; both close at cleanup. configure runs before Open.
func openEngine(t testing.TB, tr tree, configure func(*engine.Engine)) *engine.Engine {
	t.Helper()
	store := kv.NewStore(t.TempDir())
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	reg, err := adapters.NewRegistry(claudecode.Registration(), adapters.Registration{Name: "opencode"})
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(store, "default")
	e.Harnesses = reg
	e.Config.TranscriptRoots = []string{tr.root}
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

// ev builds a hook payload for session sid of tree tr.
func ev(tr tree, sid, event string, extra map[string]any) map[string]any {
	m := map[string]any{"session_id": sid, "transcript_path": tr.transcript, "cwd": "/work/app", "hook_event_name": event}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// spawnEv is a PreToolUse(Agent) of session sid; agentID, when set, names the sub-agent that
// spawns (a nested spawn).
func spawnEv(tr tree, sid, toolUseID, typ, prompt string, agentID ...string) map[string]any {
	extra := map[string]any{"tool_name": "Agent", "tool_use_id": toolUseID,
		"tool_input": map[string]any{"description": "desc " + toolUseID, "prompt": prompt, "subagent_type": typ}}
	if len(agentID) > 0 && agentID[0] != "" {
		extra["agent_id"] = agentID[0]
		extra["agent_type"] = "general-purpose"
	}
	return ev(tr, sid, "PreToolUse", extra)
}

func startEv(tr tree, sid, agentID, typ string) map[string]any {
	return ev(tr, sid, "SubagentStart", map[string]any{"agent_id": agentID, "agent_type": typ})
}

func resultEv(tr tree, sid, toolUseID, agentID, text string) map[string]any {
	return ev(tr, sid, "PostToolUse", map[string]any{"tool_name": "Agent", "tool_use_id": toolUseID,
		"tool_input":    map[string]any{"prompt": "x"},
		"tool_response": map[string]any{"status": "completed", "agentId": agentID, "content": []any{map[string]any{"type": "text", "text": text}}, "totalTokens": 1234, "totalDurationMs": 5678}})
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

// appendLines appends JSONL records to path.
func appendLines(t testing.TB, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

func userLine(uuid, text string) string {
	return fmt.Sprintf(`{"type":"user","uuid":%q,"timestamp":"2026-11-01T10:00:00Z","message":{"role":"user","content":%q}}`, uuid, text)
}

func assistantLine(uuid, text string) string {
	return fmt.Sprintf(`{"type":"assistant","uuid":%q,"timestamp":"2026-11-01T10:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":%q}]}}`, uuid, text)
}

func toolUseLine(uuid, toolUseID, text string) string {
	return fmt.Sprintf(`{"type":"assistant","uuid":%q,"timestamp":"2026-11-01T10:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":%q},{"type":"tool_use","id":%q,"name":"Agent","input":{"prompt":"x","subagent_type":"general-purpose"}}]}}`, uuid, text, toolUseID)
}

// exchange is one prompt and reply of session sid, numbered i, as transcript lines.
func exchange(sid string, i int, prompt, reply string) []string {
	return []string{userLine(fmt.Sprintf("%s-u%d", sid, i), prompt), assistantLine(fmt.Sprintf("%s-a%d", sid, i), reply)}
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
