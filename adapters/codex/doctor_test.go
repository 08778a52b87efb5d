package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
)

// TestHooksFinding: installed is ok; no file a warning; a hook whose trust entry is missing
// or records another hash (Codex skips it) and an event with no hook are failures naming them.
func TestHooksFinding(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "heirloom")
	os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755)
	cmd := prog + " hook codex"
	install := func() (string, string) {
		home := t.TempDir()
		if _, err := Install(InstallOptions{CodexHome: home, Command: cmd}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(home, configFile))
		return home, string(b)
	}
	keyFile := func(home string) string { k, _ := keyPath(home); return k }
	edit := func(home, old, new string) {
		t.Helper()
		path := filepath.Join(home, configFile)
		b, _ := os.ReadFile(path)
		if !strings.Contains(string(b), old) {
			t.Fatalf("no %q in\n%s", old, b)
		}
		os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o600)
	}

	home, _ := install()
	if f := HooksFinding(home); f.Status != adapters.StatusOK {
		t.Errorf("installed: %s %q", f.Status, f.Detail)
	}
	if f := HooksFinding(t.TempDir()); f.Status != adapters.StatusWarn || f.Fix != "heirloom install codex" {
		t.Errorf("no file: %s %q %q", f.Status, f.Detail, f.Fix)
	}

	home, _ = install()
	stopHash := TrustHash("stop", "", cmd, timeoutOf("Stop"))
	edit(home, stopHash, "sha256:00")
	edit(home, "[hooks.state."+tomlString(keyFile(home)+":pre_compact:0:0")+"]", "[hooks.state."+tomlString(keyFile(home)+":pre_compact:9:0")+"]")
	f := HooksFinding(home)
	if f.Status != adapters.StatusFail || !strings.Contains(f.Detail, "not trusted") || !strings.Contains(f.Detail, "PreCompact, Stop") || strings.Contains(f.Detail, "SessionStart") || !strings.HasPrefix(f.Fix, "heirloom install codex") {
		t.Errorf("untrusted: %s %q %q", f.Status, f.Detail, f.Fix)
	}

	home, _ = install()
	edit(home, "timeout = 3", "timeout = 4") // the hook changed since it was trusted
	if f := HooksFinding(home); f.Status != adapters.StatusFail || !strings.Contains(f.Detail, "SessionEnd") {
		t.Errorf("changed hook: %s %q", f.Status, f.Detail)
	}

	home, _ = install()
	edit(home, "[[hooks.PostCompact]]\n[[hooks.PostCompact.hooks]]\ntype = \"command\"\ncommand = "+tomlString(cmd), "[[hooks.PostCompact]]\n[[hooks.PostCompact.hooks]]\ntype = \"command\"\ncommand = \"other\"")
	if f := HooksFinding(home); f.Status != adapters.StatusFail || !strings.Contains(f.Detail, "no heirloom hook for PostCompact") {
		t.Errorf("missing: %s %q", f.Status, f.Detail)
	}

	home = t.TempDir()
	if _, err := Install(InstallOptions{CodexHome: home, Command: "/nowhere/heirloom hook codex"}); err != nil {
		t.Fatal(err)
	}
	if f := HooksFinding(home); f.Status != adapters.StatusFail || !strings.Contains(f.Detail, "does not exist") {
		t.Errorf("program gone: %s %q", f.Status, f.Detail)
	}
}

func TestMCPFinding(t *testing.T) {
	home := t.TempDir()
	if f := MCPFinding(home, "http://127.0.0.1:7433"); f.Status != adapters.StatusWarn {
		t.Errorf("no file: %s %q", f.Status, f.Detail)
	}
	if _, err := Install(InstallOptions{CodexHome: home, Command: shimCmd, MCPURL: "http://localhost:7433"}); err != nil {
		t.Fatal(err)
	}
	if f := MCPFinding(home, "http://127.0.0.1:7433"); f.Status != adapters.StatusOK {
		t.Errorf("same sidecar: %s %q", f.Status, f.Detail)
	}
	if f := MCPFinding(home, "http://127.0.0.1:9999"); f.Status != adapters.StatusFail || !strings.Contains(f.Fix, "--url http://127.0.0.1:9999") {
		t.Errorf("another sidecar: %s %q %q", f.Status, f.Detail, f.Fix)
	}
}
