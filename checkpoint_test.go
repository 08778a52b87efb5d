package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckpointCommand records a session through the real hook endpoint and takes a
// checkpoint of it from the command line.
func TestCheckpointCommand(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"), baseEnv(t))
	for _, body := range []string{
		sessionStart(sessionID, "/tmp"),
		fmt.Sprintf(`{"session_id":%q,"cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"Ship CLI-4711. Never skip the tests."}`, sessionID),
	} {
		if status, reply := postHook(t, s.url, body); status != http.StatusOK {
			t.Fatalf("hook: got %d %s", status, reply)
		}
	}
	env := append(baseEnv(t), "HEIRLOOM_URL="+s.url)

	stdout, stderr, code := runCLI(t, env, "checkpoint", sessionID)
	if code != 0 || !strings.Contains(stdout, "CLI-4711") || !strings.Contains(stdout, "checkpoint ") {
		t.Fatalf("checkpoint: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, env, "checkpoint", sessionID, "--json")
	var cp struct{ Trigger, Session string }
	if code != 0 || json.Unmarshal([]byte(stdout), &cp) != nil || cp.Trigger != "explicit" || cp.Session != sessionID {
		t.Fatalf("checkpoint --json: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	if _, stderr, code := runCLI(t, env, "checkpoint", "no-such-session"); code != 1 || !strings.Contains(stderr, "not found") {
		t.Fatalf("unknown session: exit %d stderr %q", code, stderr)
	}
	if _, _, code := runCLI(t, env, "checkpoint"); code != 2 {
		t.Fatalf("no KEY: exit %d, want 2", code)
	}
}
