package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/claudecode"
)

const shimCmd = "/opt/bin/heirloom hook claude-code"

func readSettings(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("settings not JSON: %v\n%s", err, b)
	}
	return m
}

// commands lists every hook command configured for event.
func commands(settings map[string]any, event string) []string {
	var out []string
	groups, _ := settings["hooks"].(map[string]any)[event].([]any)
	for _, g := range groups {
		for _, h := range g.(map[string]any)["hooks"].([]any) {
			out = append(out, h.(map[string]any)["command"].(string))
		}
	}
	return out
}

func TestInstall(t *testing.T) {
	t.Run("NewFile", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), ".claude", "settings.json")
		res, err := claudecode.Install(claudecode.InstallOptions{SettingsPath: path, Command: shimCmd})
		if err != nil || !res.Changed || res.Backup != "" {
			t.Fatalf("got %+v, %v", res, err)
		}
		s := readSettings(t, path)
		for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "SubagentStart", "SubagentStop", "PreCompact", "Stop", "SessionEnd"} {
			if got := commands(s, ev); len(got) != 1 || got[0] != shimCmd {
				t.Errorf("%s: got %v", ev, got)
			}
		}
		if m := s["hooks"].(map[string]any)["PreToolUse"].([]any)[0].(map[string]any)["matcher"]; m != "Agent|Task" {
			t.Errorf("PreToolUse matcher: got %v", m)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("mode: got %v", fi.Mode().Perm())
		}
	})
	t.Run("KeepsOtherSettingsAndIsIdempotent", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settings.json")
		orig := `{"model":"opus","permissions":{"allow":["Bash(ls)"]},"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}],"Notification":[{"hooks":[{"type":"command","command":"x"}]}]}}`
		os.WriteFile(path, []byte(orig), 0o644)
		now := func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }
		res, err := claudecode.Install(claudecode.InstallOptions{SettingsPath: path, Command: shimCmd, Now: now})
		if err != nil || !res.Changed {
			t.Fatalf("got %+v, %v", res, err)
		}
		if b, _ := os.ReadFile(res.Backup); string(b) != orig {
			t.Fatalf("backup: got %q", b)
		}
		s := readSettings(t, path)
		if s["model"] != "opus" || s["permissions"] == nil {
			t.Fatalf("other settings lost: %v", s)
		}
		if got := commands(s, "Stop"); len(got) != 2 || got[0] != "notify-send done" || got[1] != shimCmd {
			t.Fatalf("Stop hooks: got %v, want the user's then ours", got)
		}
		if got := commands(s, "Notification"); len(got) != 1 {
			t.Fatalf("Notification: got %v", got)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
			t.Errorf("mode changed to %v", fi.Mode().Perm())
		}
		// Again, with the binary moved: replaced in place, not duplicated; unchanged → no write.
		res, err = claudecode.Install(claudecode.InstallOptions{SettingsPath: path, Command: "heirloom hook claude-code", Now: now})
		if err != nil || !res.Changed {
			t.Fatalf("second install: %+v, %v", res, err)
		}
		if got := commands(readSettings(t, path), "Stop"); len(got) != 2 || got[1] != "heirloom hook claude-code" {
			t.Fatalf("Stop hooks after reinstall: got %v", got)
		}
		res, err = claudecode.Install(claudecode.InstallOptions{SettingsPath: path, Command: "heirloom hook claude-code"})
		if err != nil || res.Changed || res.Backup != "" {
			t.Fatalf("third install: got %+v, %v, want no change", res, err)
		}
	})
	t.Run("DryRun", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settings.json")
		os.WriteFile(path, []byte(`{"model":"opus"}`), 0o600)
		res, err := claudecode.Install(claudecode.InstallOptions{SettingsPath: path, Command: shimCmd, DryRun: true})
		if err != nil || !res.Changed || !strings.Contains(string(res.After), shimCmd) {
			t.Fatalf("got %+v, %v", res, err)
		}
		if b, _ := os.ReadFile(path); string(b) != `{"model":"opus"}` {
			t.Fatalf("dry run wrote: %s", b)
		}
		if m, _ := filepath.Glob(path + ".bak-*"); len(m) != 0 {
			t.Fatalf("dry run made a backup: %v", m)
		}
	})
	t.Run("ErrNotJSON", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settings.json")
		os.WriteFile(path, []byte(`{"model": "opus",`), 0o600)
		if _, err := claudecode.Install(claudecode.InstallOptions{SettingsPath: path, Command: shimCmd}); err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("got %v, want an error naming the file", err)
		}
		if b, _ := os.ReadFile(path); string(b) != `{"model": "opus",` {
			t.Fatalf("broken file was changed: %s", b)
		}
	})
	t.Run("ErrHooksNotObject", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settings.json")
		os.WriteFile(path, []byte(`{"hooks": []}`), 0o600)
		if _, err := claudecode.Install(claudecode.InstallOptions{SettingsPath: path, Command: shimCmd}); err == nil {
			t.Fatal("got nil error")
		}
	})
}

// hooksOf returns heirloom's hook for event, as written.
func hooksOf(t *testing.T, settings map[string]any, event string) []map[string]any {
	t.Helper()
	var out []map[string]any
	groups, _ := settings["hooks"].(map[string]any)[event].([]any)
	for _, g := range groups {
		for _, h := range g.(map[string]any)["hooks"].([]any) {
			out = append(out, h.(map[string]any))
		}
	}
	return out
}

// TestInstall_HTTPHooks: http hooks for every event that takes them, each with a short timeout
// and the token header read from Claude Code's environment; SessionStart (no http hooks there)
// and SessionEnd keep the command hook, SessionEnd with room past Claude Code's 1.5 s. Going
// back to command hooks replaces the http entries: both kinds are heirloom's.
func TestInstall_HTTPHooks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	web := &claudecode.HTTPHooks{URL: "http://127.0.0.1:7433/", Token: true}
	if _, err := claudecode.Install(claudecode.InstallOptions{SettingsPath: path, Command: shimCmd, HTTP: web}); err != nil {
		t.Fatal(err)
	}
	s := readSettings(t, path)
	for _, ev := range []string{"UserPromptSubmit", "PreToolUse", "PostToolUse", "SubagentStart", "SubagentStop", "PreCompact", "Stop"} {
		hs := hooksOf(t, s, ev)
		if len(hs) != 1 || hs[0]["type"] != "http" || hs[0]["url"] != "http://127.0.0.1:7433/hooks/claude-code" || hs[0]["timeout"] != float64(2) {
			t.Errorf("%s: got %v, want one http hook with a 2 s timeout", ev, hs)
			continue
		}
		if h, _ := hs[0]["headers"].(map[string]any); h["Authorization"] != "Bearer $HEIRLOOM_TOKEN" {
			t.Errorf("%s: headers %v", ev, hs[0]["headers"])
		}
	}
	if hs := hooksOf(t, s, "SessionStart"); len(hs) != 1 || hs[0]["command"] != shimCmd || hs[0]["timeout"] != nil {
		t.Errorf("SessionStart: got %v, want the command hook", hs)
	}
	if hs := hooksOf(t, s, "SessionEnd"); len(hs) != 1 || hs[0]["command"] != shimCmd || hs[0]["timeout"] != float64(3) {
		t.Errorf("SessionEnd: got %v, want the command hook with a 3 s timeout", hs)
	}
	res, err := claudecode.Install(claudecode.InstallOptions{SettingsPath: path, Command: shimCmd, HTTP: web})
	if err != nil || res.Changed {
		t.Fatalf("second http install: changed %v, %v; want unchanged", res.Changed, err)
	}
	if _, err := claudecode.Install(claudecode.InstallOptions{SettingsPath: path, Command: shimCmd}); err != nil {
		t.Fatal(err)
	}
	s = readSettings(t, path)
	for _, ev := range []string{"UserPromptSubmit", "Stop", "SessionStart"} {
		if got := commands(s, ev); len(got) != 1 || got[0] != shimCmd {
			t.Errorf("%s after going back to command hooks: %v", ev, got)
		}
	}
	if _, err := claudecode.Install(claudecode.InstallOptions{SettingsPath: path, Command: shimCmd, HTTP: &claudecode.HTTPHooks{URL: "127.0.0.1:7433"}}); err == nil {
		t.Error("http hooks with a URL that is not http(s): got nil error")
	}
}

func TestInstallMCP(t *testing.T) {
	if got := claudecode.MCPConfigPath("/home/u", func(string) string { return "" }); got != "/home/u/.claude.json" {
		t.Errorf("MCPConfigPath = %s", got)
	}
	if got := claudecode.MCPConfigPath("/home/u", func(k string) string { return map[string]string{"CLAUDE_CONFIG_DIR": "/cfg"}[k] }); got != "/cfg/.claude.json" {
		t.Errorf("MCPConfigPath with CLAUDE_CONFIG_DIR = %s", got)
	}
	path := filepath.Join(t.TempDir(), ".claude.json")
	res, err := claudecode.InstallMCP(claudecode.MCPOptions{ConfigPath: path, URL: "http://127.0.0.1:7433/", DryRun: true})
	if err != nil || !res.Changed || !strings.Contains(res.Entry, `"url": "http://127.0.0.1:7433/mcp"`) {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("dry run wrote %s", path)
	}
	if _, err := claudecode.InstallMCP(claudecode.MCPOptions{ConfigPath: path, URL: "127.0.0.1:7433"}); err == nil {
		t.Error("a URL without a scheme was taken")
	}
	os.WriteFile(path, []byte(`{"mcpServers": ["not", "an", "object"]}`), 0o600)
	if _, err := claudecode.InstallMCP(claudecode.MCPOptions{ConfigPath: path, URL: "http://127.0.0.1:7433"}); err == nil || !strings.Contains(err.Error(), "mcpServers is not an object") {
		t.Errorf("mcpServers a list: %v", err)
	}
}
