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
	if out := run("install", "claude-code", "--project", project); !strings.Contains(out, "already installed") {
		t.Fatalf("second claude-code install: %s", out)
	}
	if out := run("install", "opencode"); !strings.Contains(out, "installed plugin") {
		t.Fatalf("first opencode install: %s", out)
	}
	if _, err := os.Stat(filepath.Join(home, ".config", "opencode", "plugin", "heirloom.ts")); err != nil {
		t.Fatal(err)
	}
	if out := run("install", "opencode"); !strings.Contains(out, "already installed") {
		t.Fatalf("second opencode install: %s", out)
	}
	cmd := exec.Command(heirloomBin, "install", "nope")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "unknown harness") {
		t.Fatalf("unknown harness: err %v, output %s", err, out)
	}
}
