package opencode

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfig(t *testing.T) {
	cfg := Config("http://127.0.0.1:1/v1", map[string]any{"autoupdate": true, "compaction": map[string]any{"auto": false}})
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Provider map[string]struct {
			NPM     string            `json:"npm"`
			Options map[string]string `json:"options"`
			Models  map[string]struct {
				ToolCall bool `json:"tool_call"`
			} `json:"models"`
		} `json:"provider"`
		Model      string         `json:"model"`
		SmallModel string         `json:"small_model"`
		Autoupdate bool           `json:"autoupdate"`
		Share      string         `json:"share"`
		Compaction map[string]any `json:"compaction"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	p := got.Provider[ProviderID]
	if p.NPM != "@ai-sdk/openai-compatible" || p.Options["baseURL"] != "http://127.0.0.1:1/v1" || !p.Models[ModelID].ToolCall {
		t.Errorf("provider %+v", p)
	}
	if got.Model != "fake/m" || got.SmallModel != "fake/m" || got.Share != "disabled" {
		t.Errorf("got %s", b)
	}
	if !got.Autoupdate || got.Compaction["auto"] != false {
		t.Errorf("extra keys not merged: %s", b)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/somewhere/else")
	t.Setenv("OPENAI_API_KEY", "a-real-key")
	env := Env("/h", "/t", "http://127.0.0.1:1")
	for _, k := range []string{"XDG_CONFIG_HOME", "OPENAI_API_KEY", "OPENCODE_SERVER_PASSWORD"} {
		if _, ok := env[k]; ok {
			t.Errorf("%s leaked from the test's environment", k)
		}
	}
	for k, want := range map[string]string{
		"HOME": "/h", "TMPDIR": "/t", "HTTPS_PROXY": "http://127.0.0.1:1", "http_proxy": "http://127.0.0.1:1",
		"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	if !strings.Contains(env["NO_PROXY"], "127.0.0.1") {
		t.Errorf("NO_PROXY %q lacks loopback", env["NO_PROXY"])
	}
	if got := globalConfigDir(env); got != "/h/.config/opencode" {
		t.Errorf("globalConfigDir: %s", got)
	}
	env["XDG_CONFIG_HOME"] = "/x"
	if got := globalConfigDir(env); got != "/x/opencode" {
		t.Errorf("globalConfigDir with XDG_CONFIG_HOME: %s", got)
	}
}

func TestPrepare(t *testing.T) {
	dir, config := t.TempDir(), filepath.Join(t.TempDir(), "opencode")
	plugin := filepath.Join(t.TempDir(), "p.ts")
	if err := os.WriteFile(plugin, []byte("export const P = async () => ({})\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := prepare(dir, config, Options{ProviderURL: "http://127.0.0.1:1/v1", Plugins: []string{plugin}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"opencode.json", ".opencode/plugin/p.ts", ".opencode/node_modules", ".opencode/package-lock.json"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("project: %v", err)
		}
	}
	// The lock must name what OpenCode would install, or it installs anyway.
	b, err := os.ReadFile(filepath.Join(config, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct {
			Dependencies map[string]string `json:"dependencies"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil || lock.Packages[""].Dependencies["@opencode-ai/plugin"] == "" {
		t.Errorf("global config lock %s (%v)", b, err)
	}
	if _, err := os.Stat(filepath.Join(config, "node_modules")); err != nil {
		t.Error(err)
	}
}

func TestNewProject(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := NewProject(t)
	out, err := exec.Command("git", "-C", dir, "rev-list", "--max-parents=0", "HEAD").Output()
	if err != nil || len(strings.TrimSpace(string(out))) != 40 {
		t.Errorf("root commit %q: %v", out, err)
	}
}

func TestBin_Absent(t *testing.T) {
	t.Setenv(BinEnv, filepath.Join(t.TempDir(), "missing"))
	t.Setenv(RequireEnv, "")
	var skipped bool
	t.Run("Skips", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Bin(t)
	})
	if !skipped {
		t.Error("Bin did not skip when the binary is absent")
	}
}

func TestBin_Placeholder(t *testing.T) {
	// What npm leaves when the package's postinstall did not run.
	fake := filepath.Join(t.TempDir(), "opencode")
	script := "#!/bin/sh\necho \"Error: opencode-ai's postinstall script was not run.\" >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinEnv, fake)
	t.Setenv(RequireEnv, "")
	var skipped bool
	t.Run("Skips", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Bin(t)
	})
	if !skipped {
		t.Error("Bin did not skip the placeholder")
	}
}
