package codex

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
)

// TestInstallerCommands runs `heirloom install codex` and `heirloom uninstall codex` as main
// does: the flags, $CODEX_HOME, and what each says.
func TestInstallerCommands(t *testing.T) {
	home := filepath.Join(t.TempDir(), "codex")
	var out bytes.Buffer
	env := adapters.InstallEnv{
		HookCommand: "/opt/bin/heirloom-hook",
		Getenv: func(k string) string {
			return map[string]string{"CODEX_HOME": home, "HEIRLOOM_URL": "http://127.0.0.1:8000"}[k]
		},
		Stdout: &out,
		Stderr: &out,
	}
	run := func(f func() error) string {
		t.Helper()
		out.Reset()
		if err := f(); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		return out.String()
	}
	var in Installer
	ctx := t.Context()
	said := run(func() error { return in.Install(ctx, []string{"--dry-run"}, env) })
	if !strings.Contains(said, "+command = \"/opt/bin/heirloom-hook codex\"") || !strings.Contains(said, "+url = \"http://127.0.0.1:8000/mcp\"") {
		t.Errorf("dry run said:\n%s", said)
	}
	if _, err := os.Stat(home); err == nil {
		t.Fatal("dry run created Codex's home")
	}
	said = run(func() error { return in.Install(ctx, []string{"--mcp=false"}, env) })
	if !strings.Contains(said, "Installed heirloom's hooks for 10 events in "+filepath.Join(home, configFile)) || !strings.Contains(said, "heirloom serve") || strings.Contains(said, "MCP") {
		t.Errorf("install said:\n%s", said)
	}
	said = run(func() error { return in.Install(ctx, []string{"--mcp=false"}, env) })
	if !strings.Contains(said, "already installed") {
		t.Errorf("second install said:\n%s", said)
	}
	said = run(func() error { return in.Uninstall(ctx, []string{"--dry-run"}, env) })
	if !strings.Contains(said, "would delete") || !strings.Contains(said, "-[[hooks.SessionStart]]") {
		t.Errorf("uninstall dry run said:\n%s", said)
	}
	said = run(func() error { return in.Uninstall(ctx, nil, env) })
	if !strings.Contains(said, "deleted "+filepath.Join(home, configFile)) {
		t.Errorf("uninstall said:\n%s", said)
	}
	out.Reset()
	if err := in.Install(ctx, []string{"extra"}, env); !errors.Is(err, adapters.ErrUsage) {
		t.Errorf("an extra argument: got %v, want ErrUsage", err)
	}
}
