package proxy_test

// Helpers that drive a Server the way Claude Code drives heirloom: a transcript tree, hook
// payloads and a POST per hook. The decisions themselves are tested in package engine.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

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

// openEngine opens a server reading transcripts under tr. Its SubagentStart waits only briefly
// for spawning turns (tests that write none would otherwise wait the full bound each time);
// TestSpawnRecordAwaited sets the real bound.
func openEngine(t *testing.T, tr cct.Tree) *proxy.Server {
	return MustOpenServer(t, func(s *proxy.Server) {
		s.Engine.Config.TranscriptRoots = []string{tr.Root}
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

// Session ids of the tests' Claude Code sessions, named for the letters the tests call them
// by. Claude Code names a session by a UUID, and heirloom takes no other session_id from it.
const (
	S  = "5e550000-0000-4000-8000-000000000001"
	P  = "5e550000-0000-4000-8000-000000000002"
	A  = "5e550000-0000-4000-8000-000000000008"
	U  = "5e550000-0000-4000-8000-000000000009"
	Y  = "5e550000-0000-4000-8000-00000000000a"
	S2 = "5e550000-0000-4000-8000-00000000000b"
)
