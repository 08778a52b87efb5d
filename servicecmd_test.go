package main_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestInstallService: through the built binary on Linux, with a systemctl on PATH that records
// its calls (this machine has no user session bus): install writes the user unit and enables
// and starts it; --dry-run changes nothing; uninstall disables it and removes the file, keeping
// a copy; a systemctl that fails leaves the unit written and says how to finish.
func TestInstallService(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the systemd path; launchd's file is tested in package service")
	}
	home := t.TempDir()
	bin := t.TempDir()
	calls := filepath.Join(home, "calls")
	stub := "#!/bin/sh\necho \"$@\" >> " + calls + "\nexit ${SYSTEMCTL_EXIT:-0}\n"
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + bin + ":/usr/bin:/bin"}
	unit := filepath.Join(home, ".config", "systemd", "user", "heirloom.service")

	stdout, stderr, code := runCLI(t, env, "install", "service", "--dry-run")
	if code != 0 || !strings.Contains(stdout, "Would write "+unit) || !strings.Contains(stdout, "systemctl --user restart heirloom.service") {
		t.Errorf("dry run: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(unit); !os.IsNotExist(err) {
		t.Fatalf("the dry run wrote %s", unit)
	}

	stdout, stderr, code = runCLI(t, env, "install", "service")
	b, err := os.ReadFile(unit)
	if code != 0 || err != nil || !strings.Contains(string(b), "ExecStart="+heirloomBin+" serve") || !strings.Contains(string(b), "Restart=on-failure") {
		t.Fatalf("install service: exit %d\n%s%s\nunit:\n%s", code, stdout, stderr, b)
	}
	if got, _ := os.ReadFile(calls); string(got) != "--user daemon-reload\n--user enable heirloom.service\n--user restart heirloom.service\n" {
		t.Errorf("systemctl was called with:\n%s", got)
	}

	os.Remove(calls)
	stdout, stderr, code = runCLI(t, env, "uninstall", "service")
	if code != 0 || !strings.Contains(stdout, "removed "+unit) {
		t.Errorf("uninstall service: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(unit); !os.IsNotExist(err) {
		t.Errorf("the unit is still there: %v", err)
	}
	if got, _ := os.ReadFile(calls); string(got) != "--user disable --now heirloom.service\n--user daemon-reload\n" {
		t.Errorf("systemctl was called with:\n%s", got)
	}
	if copies, _ := filepath.Glob(unit + ".removed-*"); len(copies) != 1 {
		t.Errorf("copies of the removed unit: %v", copies)
	}

	_, stderr, code = runCLI(t, append(env, "SYSTEMCTL_EXIT=1"), "install", "service")
	if code != 1 || !strings.Contains(stderr, "enabling it failed") || !strings.Contains(stderr, "loginctl enable-linger") {
		t.Errorf("a systemctl that fails: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(unit); err != nil {
		t.Errorf("the unit after a failed enable: %v; want it written", err)
	}
}
