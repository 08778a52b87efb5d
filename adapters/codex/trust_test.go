package codex

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTrustHash: golden values read from Codex CLI 0.169.0 (`codex app-server`, hooks/list,
// currentHash) for the hooks as written, including a command with characters encoding/json
// would escape and serde_json does not, and an empty matcher (Codex treats it as none).
func TestTrustHash(t *testing.T) {
	for _, c := range []struct {
		event, matcher, command string
		timeout                 int
		want                    string
	}{
		{"pre_tool_use", "Bash", "/opt/heirloom hook codex", 5, "sha256:cf1563dbe6be79f7b2e19dbf708d3aebbb15aba745b703830de68ccef36a248d"},
		{"session_start", "", "/opt/heirloom hook codex", 600, "sha256:3d770a69bba1eff2f5c582faad114317be9c999b2bc18dcec4f03cd50b297d9b"},
		{"session_end", "", "/opt/heirloom hook codex", 1, "sha256:4d3efed085017bc4ddad8072a71640e8c5599b9011065693171f62f8a3084474"},
		{"stop", "", "/opt/my tools/heirloom hook codex <x> & \"q\" \\ é \u2028 \t", 10, "sha256:cf42d153561387602eb3feffb7a6a749ae97ad45fc8625bcab9ec12e26d59d05"},
		{"stop", "", "echo user", 600, "sha256:0f24362f1b222dbf517bfabc482fd2525a354aa6d66010cb65f8c2c050a8ab9c"},
	} {
		if got := TrustHash(c.event, c.matcher, c.command, c.timeout); got != c.want {
			t.Errorf("TrustHash(%q, %q, %q, %d) = %s, want %s", c.event, c.matcher, c.command, c.timeout, got, c.want)
		}
	}
}

// TestTrustKey: the key names the config file, the snake_case event and the indexes; the path
// is Codex's home with its links resolved, then config.toml, itself not resolved (as Codex
// 0.169.0 lists them).
func TestTrustKey(t *testing.T) {
	if got := TrustKey("/h/.codex/config.toml", "pre_tool_use", 2, 0); got != "/h/.codex/config.toml:pre_tool_use:2:0" {
		t.Errorf("TrustKey = %s", got)
	}
	if ev, g, h, ok := parseTrustKey("/a:b/config.toml:stop:3:1", "/a:b/config.toml"); !ok || ev != "stop" || g != 3 || h != 1 {
		t.Errorf("parseTrustKey: %s %d %d %v", ev, g, h, ok)
	}
	for _, bad := range []string{"/other/config.toml:stop:0:0", "/a:b/config.toml:stop:x:0", "/a:b/config.toml:stop:0", "/a:b/config.toml:stop:01:0"} {
		if _, _, _, ok := parseTrustKey(bad, "/a:b/config.toml"); ok {
			t.Errorf("parseTrustKey(%q) took it", bad)
		}
	}

	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.MkdirAll(filepath.Join(real, ".codex"), 0o700)
	os.MkdirAll(filepath.Join(dir, "dots"), 0o700)
	os.Symlink(real, filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "dots", "codex.toml"), nil, 0o600)
	os.Symlink(filepath.Join(dir, "dots", "codex.toml"), filepath.Join(real, ".codex", "config.toml"))
	realDir, _ := filepath.EvalSymlinks(real)
	for home, want := range map[string]string{
		filepath.Join(dir, "link", ".codex"):          filepath.Join(realDir, ".codex", "config.toml"),
		filepath.Join(dir, "link", "new", "x", "sub"): filepath.Join(realDir, "new", "x", "sub", "config.toml"),
	} {
		if got, err := keyPath(home); err != nil || got != want {
			t.Errorf("keyPath(%s) = %s, %v; want %s", home, got, err, want)
		}
	}
}

func TestEventNames(t *testing.T) {
	for _, he := range hookEvents {
		if got := eventOf(he.snake); got != he.name {
			t.Errorf("eventOf(%s) = %s, want %s", he.snake, got, he.name)
		}
	}
}
