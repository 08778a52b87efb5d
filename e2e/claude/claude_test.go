package claude_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/claude"
)

func TestProjectFolder(t *testing.T) {
	tests := []struct{ dir, want string }{
		{"/home/dev/src/parser", "-home-dev-src-parser"},
		{"/tmp/TestX_y/001", "-tmp-TestX-y-001"},
		{"/a.b/c d", "-a-b-c-d"},
	}
	for _, tt := range tests {
		if got := claude.ProjectFolder(tt.dir); got != tt.want {
			t.Errorf("ProjectFolder(%q): got %q, want %q", tt.dir, got, tt.want)
		}
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "a-real-key")
	t.Setenv("CLAUDE_CONFIG_DIR", "/somewhere/else")
	env := claude.Env("/h", "http://127.0.0.1:1")
	if env["ANTHROPIC_API_KEY"] != "x" || env["HOME"] != "/h" || env["ANTHROPIC_BASE_URL"] != "http://127.0.0.1:1" {
		t.Errorf("got %v", env)
	}
	if _, ok := env["CLAUDE_CONFIG_DIR"]; ok {
		t.Error("CLAUDE_CONFIG_DIR leaked from the test's environment")
	}
	for _, k := range []string{"DISABLE_AUTOUPDATER", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"} {
		if env[k] != "1" {
			t.Errorf("%s = %q, want 1", k, env[k])
		}
	}
}

func TestBin_Absent(t *testing.T) {
	t.Setenv(claude.BinEnv, filepath.Join(t.TempDir(), "missing"))
	t.Setenv(claude.RequireEnv, "")
	var skipped bool
	t.Run("Skips", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		claude.Bin(t)
	})
	if !skipped {
		t.Error("Bin did not skip when the binary is absent")
	}
}

func TestHookRecorder(t *testing.T) {
	h := claude.NewHookRecorder(t, map[string]string{"SubagentStart": `{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"X"}}`})
	run := func(event, stdin string) string {
		t.Helper()
		cmd := exec.Command("/bin/sh", "-c", h.Command(event))
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run hook %s: %v", event, err)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run("SessionStart", `{"session_id":"s1"}`); got != "{}" {
		t.Errorf("SessionStart reply %q, want {}", got)
	}
	if got := run("SubagentStart", "{\n \"session_id\": \"s1\",\n \"agent_id\": \"a1\"\n}\n"); !strings.Contains(got, `"additionalContext":"X"`) {
		t.Errorf("SubagentStart reply %q, want the canned reply", got)
	}
	calls := h.Calls(t)
	if got, want := claude.Events(calls), []string{"SessionStart", "SubagentStart"}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if got := calls[1].Field("agent_id"); got != "a1" {
		t.Errorf("agent_id %q, want a1", got)
	}

	settings := h.Settings("PreToolUse")
	hooks := settings["hooks"].(map[string]any)["PreToolUse"].([]any)[0].(map[string]any)
	if hooks["matcher"] != "" {
		t.Errorf("matcher %v, want \"\"", hooks["matcher"])
	}
}
