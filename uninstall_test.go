package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// uninstallEnv runs the built binary against a private HOME, failing t on a non-zero exit.
type uninstallEnv struct {
	t    *testing.T
	home string
	env  []string
}

func newUninstallEnv(t *testing.T, extra ...string) *uninstallEnv {
	home := t.TempDir()
	return &uninstallEnv{t: t, home: home, env: append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, extra...)}
}

func (u *uninstallEnv) run(args ...string) string {
	u.t.Helper()
	cmd := exec.Command(heirloomBin, args...)
	cmd.Env = u.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		u.t.Fatalf("heirloom %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// write writes a user's file under HOME.
func (u *uninstallEnv) write(rel, content string) string {
	u.t.Helper()
	path := filepath.Join(u.home, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		u.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		u.t.Fatal(err)
	}
	return path
}

// same fails t unless the file at path holds exactly want.
func (u *uninstallEnv) same(path, want, when string) {
	u.t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		u.t.Errorf("%s: %s is\n%s(%v)\nwant the user's file, byte for byte:\n%s", when, path, got, err, want)
	}
}

// The user's own Claude Code settings: their own hooks (one on an event heirloom also hooks),
// their key order, four-space indent; and Claude Code's user config with its own state.
const (
	userClaudeSettings = `{
    "model": "opus",
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "~/bin/audit-bash"}]
            }
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}]
    },
    "permissions": {"allow": ["Bash(go test:*)"]}
}
`
	userClaudeJSON = `{"numStartups": 42, "projects": {"/src/app": {"allowedTools": []}}, "mcpServers": {"github": {"type": "http", "url": "https://api.example/mcp"}}}
`
)

// TestUninstall_ClaudeCode: install then uninstall gives back the user's settings and user
// config byte for byte; --dry-run shows the change and makes none; a second uninstall has
// nothing to do; a change the user made after the install survives the uninstall.
func TestUninstall_ClaudeCode(t *testing.T) {
	u := newUninstallEnv(t)
	settings := u.write(".claude/settings.json", userClaudeSettings)
	claudeJSON := u.write(".claude.json", userClaudeJSON)
	u.run("install", "claude-code")
	if b, _ := os.ReadFile(settings); !strings.Contains(string(b), "hook claude-code") || !strings.Contains(string(b), "audit-bash") {
		t.Fatalf("install did not add heirloom's hooks beside the user's:\n%s", b)
	}
	installed, _ := os.ReadFile(settings)

	out := u.run("uninstall", "claude-code", "--dry-run")
	if !strings.Contains(out, "would restore") || !strings.Contains(out, "-") || !strings.Contains(out, "+++ ") {
		t.Errorf("dry run says:\n%s", out)
	}
	u.same(settings, string(installed), "after a dry run")

	out = u.run("uninstall", "claude-code")
	u.same(settings, userClaudeSettings, "after install and uninstall")
	u.same(claudeJSON, userClaudeJSON, "after install and uninstall")
	if !strings.Contains(out, "restored it as it was before the install") {
		t.Errorf("uninstall says:\n%s", out)
	}
	if out := u.run("uninstall", "claude-code"); !strings.Contains(out, "no heirloom's hooks in") {
		t.Errorf("a second uninstall says:\n%s", out)
	}

	// Installed, then changed by the user: their change stays, heirloom's hooks go.
	u.run("install", "claude-code")
	b, _ := os.ReadFile(settings)
	changed := strings.Replace(string(b), `"model": "opus"`, `"model": "sonnet"`, 1)
	if changed == string(b) {
		t.Fatalf("the installed settings lost the user's model:\n%s", b)
	}
	u.write(".claude/settings.json", changed)
	u.run("uninstall", "claude-code", "--mcp-config", "none")
	b, _ = os.ReadFile(settings)
	if s := string(b); strings.Contains(s, "hook claude-code") || !strings.Contains(s, `"model": "sonnet"`) || !strings.Contains(s, "audit-bash") || !strings.Contains(s, "notify-send") {
		t.Errorf("uninstall after the user's change:\n%s\nwant their change and hooks kept, heirloom's gone", s)
	}
	if backups, _ := filepath.Glob(settings + ".bak-*"); len(backups) < 3 {
		t.Errorf("backups of the settings: %v; want one per change", backups)
	}
}

// TestUninstall_ClaudeCodeNoFile: a settings file the install created is deleted by the
// uninstall (nothing of the user's was in it).
func TestUninstall_ClaudeCodeNoFile(t *testing.T) {
	u := newUninstallEnv(t)
	u.run("install", "claude-code", "--mcp=false")
	settings := filepath.Join(u.home, ".claude", "settings.json")
	u.run("uninstall", "claude-code", "--mcp-config", "none")
	if _, err := os.Stat(settings); !os.IsNotExist(err) {
		t.Errorf("the settings file install created: %v; want it gone", err)
	}
}

// TestUninstall_OpenCode: the plugin goes (a copy OpenCode does not load is kept), and the
// user's opencode.json is given back byte for byte.
func TestUninstall_OpenCode(t *testing.T) {
	u := newUninstallEnv(t)
	u.env = append(u.env, "XDG_CONFIG_HOME="+filepath.Join(u.home, ".config"))
	const userConfig = "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"model\": \"anthropic/claude-sonnet\",\n  \"mcp\": {\"local\": {\"type\": \"local\", \"command\": [\"my-mcp\"]}}\n}\n"
	cfg := u.write(".config/opencode/opencode.json", userConfig)
	u.run("install", "opencode")
	plugin := filepath.Join(u.home, ".config", "opencode", "plugin", "heirloom.ts")
	if _, err := os.Stat(plugin); err != nil {
		t.Fatalf("install wrote no plugin: %v", err)
	}
	out := u.run("uninstall", "opencode")
	u.same(cfg, userConfig, "after install and uninstall")
	if _, err := os.Stat(plugin); !os.IsNotExist(err) {
		t.Errorf("the plugin after uninstall: %v; want it gone", err)
	}
	if copies, _ := filepath.Glob(plugin + ".bak-*"); len(copies) != 1 || !strings.Contains(out, "removed the plugin") {
		t.Errorf("the plugin's copy: %v; uninstall says:\n%s", copies, out)
	}
}

// TestUninstall_OpenClaw: the plugin folder is moved aside, and the user's openclaw.json is
// given back byte for byte (plugins.entries.heirloom and its plugins.allow entry gone).
func TestUninstall_OpenClaw(t *testing.T) {
	u := newUninstallEnv(t)
	const userConfig = "{\n  \"gateway\": {\"mode\": \"local\", \"auth\": {\"mode\": \"token\", \"token\": \"gw\"}},\n  \"plugins\": {\"allow\": [\"telegram\"], \"entries\": {\"telegram\": {\"enabled\": true}}}\n}\n"
	cfg := u.write(".openclaw/openclaw.json", userConfig)
	u.run("install", "openclaw")
	if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), `"heirloom"`) {
		t.Fatalf("install did not add heirloom to the config:\n%s", b)
	}
	out := u.run("uninstall", "openclaw")
	u.same(cfg, userConfig, "after install and uninstall")
	dir := filepath.Join(u.home, ".openclaw", "extensions", "heirloom")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the plugin folder after uninstall: %v; want it moved aside", err)
	}
	if aside, _ := filepath.Glob(dir + ".backup-*"); len(aside) != 1 || !strings.Contains(out, "does not load") {
		t.Errorf("the folder moved aside: %v; uninstall says:\n%s", aside, out)
	}
}

// TestUninstall_ClaudeCodeWrappedHooks: a hook of the user's behind the shim ("heirloom-hook
// claude-code -- CMD") is theirs: install leaves it (its event reaches heirloom already) and
// adds no group beside it; uninstall unwraps it back to CMD rather than deleting it. A hook of
// heirloom's in a group of the user's goes, the user's hook stays.
func TestUninstall_ClaudeCodeWrappedHooks(t *testing.T) {
	u := newUninstallEnv(t)
	settings := u.write(".claude/settings.json", `{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "heirloom-hook claude-code -- ./my-guard.sh --strict"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}, {"type": "command", "command": "heirloom hook claude-code"}]}]
  }
}
`)
	u.run("install", "claude-code", "--mcp=false")
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	read := func() {
		t.Helper()
		b, _ := os.ReadFile(settings)
		s.Hooks = nil
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
	}
	read()
	if n := len(s.Hooks["PreToolUse"]); n != 1 || s.Hooks["PreToolUse"][0].Hooks[0].Command != "heirloom-hook claude-code -- ./my-guard.sh --strict" {
		t.Errorf("install beside a wrapped hook: PreToolUse %+v; want the wrapper alone", s.Hooks["PreToolUse"])
	}
	u.run("uninstall", "claude-code", "--mcp-config", "none")
	read()
	if pre := s.Hooks["PreToolUse"]; len(pre) != 1 || len(pre[0].Hooks) != 1 || pre[0].Hooks[0].Command != "./my-guard.sh --strict" {
		t.Errorf("uninstall of a wrapped hook: PreToolUse %+v; want the user's command unwrapped", pre)
	}
	if stop := s.Hooks["Stop"]; len(stop) != 1 || len(stop[0].Hooks) != 1 || stop[0].Hooks[0].Command != "notify-send done" {
		t.Errorf("uninstall of a mixed group: Stop %+v; want the user's hook alone", stop)
	}
	if _, ok := s.Hooks["SessionStart"]; ok {
		t.Errorf("heirloom's own SessionStart group survived the uninstall: %+v", s.Hooks)
	}
}
