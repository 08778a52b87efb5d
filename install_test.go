package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallCommands runs `heirloom install` for both harnesses twice: the second run changes
// nothing, and the files written are where each harness reads them.
func TestInstallCommands(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(heirloomBin, args...)
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("heirloom %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := run("install", "claude-code", "--project", project); !strings.Contains(out, "Installed") {
		t.Fatalf("first claude-code install: %s", out)
	}
	settings, err := os.ReadFile(filepath.Join(project, ".claude", "settings.json"))
	if err != nil || !strings.Contains(string(settings), heirloomBin+" hook claude-code") {
		t.Fatalf("settings.json: %v\n%s", err, settings)
	}
	claudeJSON := filepath.Join(home, ".claude.json")
	if b, err := os.ReadFile(claudeJSON); err != nil || !strings.Contains(string(b), `"heirloom": {
      "type": "http",
      "url": "http://127.0.0.1:7433/mcp"`) {
		t.Fatalf("~/.claude.json: want mcpServers.heirloom: %v\n%s", err, b)
	}
	if out := run("install", "claude-code", "--project", project); !strings.Contains(out, "already installed") || !strings.Contains(out, "MCP server is already registered") {
		t.Fatalf("second claude-code install: %s", out)
	}
	if out := run("install", "opencode"); !strings.Contains(out, "installed plugin") {
		t.Fatalf("first opencode install: %s", out)
	}
	if _, err := os.Stat(filepath.Join(home, ".config", "opencode", "plugin", "heirloom.ts")); err != nil {
		t.Fatal(err)
	}
	opencodeJSON := filepath.Join(home, ".config", "opencode", "opencode.json")
	if b, err := os.ReadFile(opencodeJSON); err != nil || !strings.Contains(string(b), `"$schema": "https://opencode.ai/config.json"`) || !strings.Contains(string(b), `"heirloom": {
      "type": "remote",
      "url": "http://127.0.0.1:7433/mcp",
      "enabled": true`) {
		t.Fatalf("opencode.json: want mcp.heirloom: %v\n%s", err, b)
	}
	if out := run("install", "opencode"); !strings.Contains(out, "already installed") || !strings.Contains(out, "MCP server already registered") || strings.Contains(out, "Restart") {
		t.Fatalf("second opencode install: %s", out)
	}
	cmd := exec.Command(heirloomBin, "install", "nope")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "unknown harness") {
		t.Fatalf("unknown harness: err %v, output %s", err, out)
	}
}

// TestInstallMCPEntries: the MCP entries follow $HEIRLOOM_URL and carry the token as a reference
// to the harness's own environment, never the token; --mcp=false leaves them out, and a project
// opencode.json keeps its settings.
func TestInstallMCPEntries(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(heirloomBin, args...)
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "HEIRLOOM_URL=http://127.0.0.1:7555", "HEIRLOOM_TOKEN=s3cret"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("heirloom %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"numStartups": 3, "mcpServers": {"mine": {"command": "x"}}}`), 0o600)
	run("install", "claude-code", "--project", project)
	b, _ := os.ReadFile(filepath.Join(home, ".claude.json"))
	for _, want := range []string{`"numStartups": 3`, `"mine": {`, `"url": "http://127.0.0.1:7555/mcp"`, `"Authorization": "Bearer ${HEIRLOOM_TOKEN}"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("~/.claude.json lacks %s:\n%s", want, b)
		}
	}
	os.WriteFile(filepath.Join(project, "opencode.json"), []byte(`{"model": "fake/m"}`), 0o644)
	run("install", "opencode", "--project", project)
	b, _ = os.ReadFile(filepath.Join(project, "opencode.json"))
	for _, want := range []string{`"model": "fake/m"`, `"url": "http://127.0.0.1:7555/mcp"`, `"Authorization": "Bearer {env:HEIRLOOM_TOKEN}"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("opencode.json lacks %s:\n%s", want, b)
		}
	}
	for _, f := range []string{filepath.Join(home, ".claude.json"), filepath.Join(project, "opencode.json")} {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "s3cret") {
			t.Errorf("%s holds the token itself", f)
		}
	}
	other := t.TempDir()
	run("install", "opencode", "--project", other, "--mcp=false")
	if _, err := os.Stat(filepath.Join(other, "opencode.json")); !os.IsNotExist(err) {
		t.Errorf("--mcp=false wrote opencode.json: %v", err)
	}
}

// TestInstallOpenClaw runs `heirloom install openclaw` twice against a private HOME: the plugin
// folder and the config entry land where OpenClaw reads them, the second run changes nothing,
// --dry-run writes nothing, and --url / $HEIRLOOM_URL / $HEIRLOOM_TOKEN reach the config.
func TestInstallOpenClaw(t *testing.T) {
	home := t.TempDir()
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(heirloomBin, args...)
		cmd.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("heirloom %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	state := filepath.Join(home, ".openclaw")
	config := filepath.Join(state, "openclaw.json")

	if out := run(nil, "install", "openclaw", "--dry-run"); !strings.Contains(out, "would create") || !strings.Contains(out, "+++ "+config) {
		t.Fatalf("dry run: %s", out)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("dry run created %s (stat: %v)", state, err)
	}

	out := run([]string{"HEIRLOOM_URL=http://127.0.0.1:7555", "HEIRLOOM_TOKEN=tok"}, "install", "openclaw")
	if !strings.Contains(out, "installed plugin at "+filepath.Join(state, "extensions", "heirloom")) || !strings.Contains(out, "Restart the OpenClaw Gateway") ||
		!strings.Contains(out, "HEIRLOOM_ADAPTERS__OPENCLAW__URL=ws://127.0.0.1:18789") {
		t.Fatalf("first openclaw install: %s", out)
	}
	if _, err := os.Stat(filepath.Join(state, "extensions", "heirloom", "openclaw.plugin.json")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"allowConversationAccess": true`, `"url": "http://127.0.0.1:7555"`, `"token": "tok"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("openclaw.json lacks %s:\n%s", want, b)
		}
	}
	if out := run([]string{"HEIRLOOM_URL=http://127.0.0.1:7555", "HEIRLOOM_TOKEN=tok"}, "install", "openclaw"); !strings.Contains(out, "already installed") || !strings.Contains(out, "config already set") || strings.Contains(out, "Restart") {
		t.Fatalf("second openclaw install: %s", out)
	}
	if out := run(nil, "install", "openclaw", "--url", "http://127.0.0.1:7666"); !strings.Contains(out, "url http://127.0.0.1:7666") {
		t.Fatalf("install with --url: %s", out)
	}

	// A JSON5 config is left alone, with the commands that make the change instead.
	json5 := "{\n  // mine\n  gateway: { mode: 'local' },\n}\n"
	if err := os.WriteFile(config, []byte(json5), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(heirloomBin, "install", "openclaw")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "openclaw config set plugins.entries.heirloom") {
		t.Fatalf("JSON5 config: err %v, output %s", err, out)
	}
	if b, _ := os.ReadFile(config); string(b) != json5 {
		t.Errorf("JSON5 config changed:\n%s", b)
	}
}

// TestInstall_LightHookBinary: with heirloom-hook installed beside heirloom (go install puts them
// in one directory), the hooks run it rather than `heirloom hook`; --hooks http writes http
// hooks that reach the given sidecar.
func TestInstall_LightHookBinary(t *testing.T) {
	dir := t.TempDir()
	bin, light := filepath.Join(dir, "heirloom"), filepath.Join(dir, "heirloom-hook")
	for out, pkg := range map[string]string{bin: ".", light: "./cmd/heirloom-hook"} {
		if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, b)
		}
	}
	project := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("heirloom %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("install", "claude-code", "--project", project)
	settings, err := os.ReadFile(filepath.Join(project, ".claude", "settings.json"))
	if err != nil || !strings.Contains(string(settings), `"`+light+` claude-code"`) {
		t.Fatalf("settings.json: want %s claude-code: %v\n%s", light, err, settings)
	}
	out := run("install", "claude-code", "--project", project, "--hooks", "http", "--url", "http://127.0.0.1:7999")
	settings, _ = os.ReadFile(filepath.Join(project, ".claude", "settings.json"))
	if !strings.Contains(out, "http://127.0.0.1:7999/hooks/claude-code") || !strings.Contains(string(settings), `"url": "http://127.0.0.1:7999/hooks/claude-code"`) ||
		!strings.Contains(string(settings), `"`+light+` claude-code"`) {
		t.Fatalf("http install:\n%s\n%s", out, settings)
	}
	cmd := exec.Command(bin, "install", "claude-code", "--hooks", "carrier-pigeon")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "want command or http") {
		t.Fatalf("bad --hooks: err %v, output %s", err, out)
	}
}
