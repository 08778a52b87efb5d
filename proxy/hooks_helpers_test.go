package proxy_test

// Helpers that drive a Server the way Claude Code drives heirloom: a transcript tree, hook
// payloads and a POST per hook. The decisions themselves are tested in package engine.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

// tree is a fake Claude Code projects dir: a transcript root with one session's transcript.
type tree struct {
	root       string // the allowed transcript root
	transcript string // the session's transcript path
}

func newTree(t *testing.T, sid string) tree {
	root := filepath.Join(t.TempDir(), "projects")
	dir := filepath.Join(root, "-work-app")
	if err := os.MkdirAll(filepath.Join(dir, sid, "subagents"), 0o755); err != nil {
		t.Fatal(err)
	}
	return tree{root: root, transcript: filepath.Join(dir, sid+".jsonl")}
}

// appendLines appends JSONL records to path.
func appendLines(t *testing.T, path string, lines ...string) {
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

// hook posts one Claude Code hook payload built from fields and returns the additionalContext.
func hook(t *testing.T, s *proxy.Server, fields map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(fields)
	resp, err := http.Post(s.URL()+"/hooks/claude-code", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reply struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if resp.StatusCode != 200 {
		t.Fatalf("%v: status %d", fields["hook_event_name"], resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
		t.Fatal(err)
	}
	return reply.HookSpecificOutput.AdditionalContext
}

// ev builds a hook payload for session sid of tree tr.
func ev(tr tree, sid, event string, extra map[string]any) map[string]any {
	m := map[string]any{"session_id": sid, "transcript_path": tr.transcript, "cwd": "/work/app", "hook_event_name": event}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func spawnEv(tr tree, sid, toolUseID, typ, prompt, agentID string) map[string]any {
	extra := map[string]any{"tool_name": "Agent", "tool_use_id": toolUseID,
		"tool_input": map[string]any{"description": "desc " + toolUseID, "prompt": prompt, "subagent_type": typ}}
	if agentID != "" {
		extra["agent_id"] = agentID
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

// openEngine opens a server reading transcripts under tr. Its SubagentStart waits only briefly
// for spawning turns (tests that write none would otherwise wait the full bound each time);
// TestSpawnRecordAwaited sets the real bound.
func openEngine(t *testing.T, tr tree) *proxy.Server {
	return MustOpenServer(t, func(s *proxy.Server) {
		s.Engine.Config.TranscriptRoots = []string{tr.root}
		s.Engine.Config.SpawnRecordWait = 5 * time.Millisecond
	})
}

func mustSession(t *testing.T, s *proxy.Server, id string) kv.Session {
	t.Helper()
	sess, err := s.Engine.Store.GetSession(t.Context(), "default", id)
	if err != nil {
		t.Fatalf("session %s: %v", id, err)
	}
	return sess
}

func mustRun(t *testing.T, s *proxy.Server, id string) kv.Run {
	t.Helper()
	r, err := s.Engine.Store.GetRun(t.Context(), "default", id)
	if err != nil {
		t.Fatalf("run %s: %v", id, err)
	}
	return r
}
