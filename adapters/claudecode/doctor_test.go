package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
)

// TestHooksFinding: every event hooked with a program that exists is ok, whatever its quoting;
// a program gone is a failure; http hooks posting to the sidecar by another name for the same
// address are ok, to another port a failure.
func TestHooksFinding(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "My Tools", "heirloom")
	if err := os.MkdirAll(filepath.Dir(prog), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(cmd string, web *HTTPHooks) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "settings.json")
		if _, err := Install(InstallOptions{SettingsPath: path, Command: cmd, HTTP: web}); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for name, c := range map[string]struct {
		path, sidecar, status, detail string
	}{
		"quoted path":        {write(`"`+prog+`" hook claude-code`, nil), adapters.DefaultSidecarURL, adapters.StatusOK, "every event"},
		"program gone":       {write("/nowhere/heirloom hook claude-code", nil), adapters.DefaultSidecarURL, adapters.StatusFail, "does not exist"},
		"http, another port": {write("/bin/true hook claude-code", &HTTPHooks{URL: "http://127.0.0.1:9"}), "http://127.0.0.1:7433", adapters.StatusFail, "posts to http://127.0.0.1:9"},
		"http, same address": {write("/bin/true hook claude-code", &HTTPHooks{URL: "http://localhost:7433/"}), "http://127.0.0.1:7433", adapters.StatusOK, "every event"},
	} {
		f := HooksFinding(c.path, c.sidecar)
		if f.Status != c.status || !strings.Contains(f.Detail, c.detail) {
			t.Errorf("%s: %s %q; want %s with %q", name, f.Status, f.Detail, c.status, c.detail)
		}
	}
}
