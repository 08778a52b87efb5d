package opencode_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

// mustReadPlugin returns the content of the plugin file at path.
func mustReadPlugin(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// pluginBackups returns the backup files beside the plugin at path.
func pluginBackups(tb testing.TB, path string) []string {
	tb.Helper()
	found, err := filepath.Glob(path + ".bak-*")
	if err != nil {
		tb.Fatal(err)
	}
	return found
}

func TestInstall_Project(t *testing.T) {
	project := t.TempDir()
	want := filepath.Join(project, ".opencode", "plugin", opencode.PluginFile)

	var out bytes.Buffer
	res, err := opencode.Install(opencode.InstallOptions{Project: project, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != want || res.Action != opencode.InstallCreated || res.Backup != "" || res.DryRun {
		t.Errorf("got %+v, want created at %s", res, want)
	}
	if got := mustReadPlugin(t, want); !bytes.Equal(got, opencode.PluginSource()) {
		t.Error("installed file differs from the embedded plugin")
	}
	if !strings.Contains(out.String(), "installed plugin at "+want) {
		t.Errorf("output %q, want it to name the new file", out.String())
	}

	t.Run("Unchanged", func(t *testing.T) {
		before, err := os.Stat(want)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		res, err := opencode.Install(opencode.InstallOptions{Project: project, Out: &out})
		if err != nil {
			t.Fatal(err)
		}
		if res.Action != opencode.InstallUnchanged {
			t.Errorf("second install: action %q, want %q", res.Action, opencode.InstallUnchanged)
		}
		if !strings.Contains(out.String(), "already installed") {
			t.Errorf("output %q, want it to say the plugin is already installed", out.String())
		}
		after, err := os.Stat(want)
		if err != nil {
			t.Fatal(err)
		}
		if !after.ModTime().Equal(before.ModTime()) {
			t.Error("second install rewrote an identical file")
		}
		if got := pluginBackups(t, want); len(got) != 0 {
			t.Errorf("second install left backups %v", got)
		}
	})
}

func TestInstall_Updated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, opencode.PluginFile)
	old := []byte("export const Old = async () => ({})\n")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	res, err := opencode.Install(opencode.InstallOptions{Global: dir, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != opencode.InstallUpdated || res.Path != path {
		t.Errorf("got %+v, want updated at %s", res, path)
	}
	if got := mustReadPlugin(t, path); !bytes.Equal(got, opencode.PluginSource()) {
		t.Error("updated file differs from the embedded plugin")
	}
	if got := pluginBackups(t, path); len(got) != 1 || got[0] != res.Backup {
		t.Fatalf("backups %v, want exactly %q", got, res.Backup)
	}
	if got := mustReadPlugin(t, res.Backup); !bytes.Equal(got, old) {
		t.Errorf("backup holds %q, want the replaced file", got)
	}
	// OpenCode loads {plugin,plugins}/*.{ts,js}: a backup must not match.
	for _, pattern := range []string{"*.ts", "*.js"} {
		if ok, _ := filepath.Match(pattern, filepath.Base(res.Backup)); ok {
			t.Errorf("backup name %s matches %s: OpenCode would load it as a plugin", filepath.Base(res.Backup), pattern)
		}
	}
	if !strings.Contains(out.String(), "backed up "+path+" to "+res.Backup) {
		t.Errorf("output %q, want it to name the backup", out.String())
	}

	t.Run("SecondBackup", func(t *testing.T) {
		if err := os.WriteFile(path, []byte("// edited again\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		res2, err := opencode.Install(opencode.InstallOptions{Global: dir})
		if err != nil {
			t.Fatal(err)
		}
		if res2.Backup == "" || res2.Backup == res.Backup {
			t.Errorf("second backup %q, want a new file beside %q", res2.Backup, res.Backup)
		}
		if got := pluginBackups(t, path); len(got) != 2 {
			t.Errorf("backups %v, want two", got)
		}
	})
}

func TestInstall_DryRun(t *testing.T) {
	t.Run("Create", func(t *testing.T) {
		home := t.TempDir()
		var out bytes.Buffer
		res, err := opencode.Install(opencode.InstallOptions{Home: home, DryRun: true, Out: &out})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(home, ".config", "opencode", "plugin", opencode.PluginFile)
		if res.Path != path || res.Action != opencode.InstallCreated || !res.DryRun {
			t.Errorf("got %+v, want a dry-run create at %s", res, path)
		}
		if _, err := os.Stat(filepath.Join(home, ".config")); !os.IsNotExist(err) {
			t.Errorf("dry run touched the config dir (stat: %v)", err)
		}
		lines := strings.Count(string(opencode.PluginSource()), "\n")
		for _, want := range []string{"would create " + path, "--- /dev/null\n", "+++ " + path + "\n", "@@ -0,0 +1," + strconv.Itoa(lines) + " @@\n", "+export const HeirloomPlugin"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, firstLines(out.String()))
			}
		}
	})

	t.Run("Update", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, opencode.PluginFile)
		src := string(opencode.PluginSource())
		old := strings.Replace(src, "const TIMEOUT_MS = 1000", "const TIMEOUT_MS = 5000", 1)
		if old == src {
			t.Fatal("plugin source has no TIMEOUT_MS line to change")
		}
		if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		res, err := opencode.Install(opencode.InstallOptions{Global: dir, DryRun: true, Out: &out})
		if err != nil {
			t.Fatal(err)
		}
		if res.Action != opencode.InstallUpdated || res.Backup != "" {
			t.Errorf("got %+v, want a dry-run update without backup", res)
		}
		if got := mustReadPlugin(t, path); string(got) != old {
			t.Error("dry run changed the installed file")
		}
		if got := pluginBackups(t, path); len(got) != 0 {
			t.Errorf("dry run left backups %v", got)
		}
		diff := out.String()
		hunks := regexp.MustCompile(`(?m)^@@ -\d+,7 \+\d+,7 @@$`).FindAllString(diff, -1)
		if len(hunks) != 1 || !strings.Contains(diff, "\n-const TIMEOUT_MS = 5000\n+const TIMEOUT_MS = 1000\n") {
			t.Errorf("diff, want one 7-line hunk replacing the TIMEOUT_MS line:\n%s", diff)
		}
	})
}

func TestInstall_Dirs(t *testing.T) {
	home, config, global := t.TempDir(), t.TempDir(), t.TempDir()
	tests := []struct {
		name string
		opts opencode.InstallOptions
		want string
	}{
		{"Home", opencode.InstallOptions{Home: home}, filepath.Join(home, ".config", "opencode", "plugin")},
		{"ConfigHome", opencode.InstallOptions{Home: home, ConfigHome: config}, filepath.Join(config, "opencode", "plugin")},
		{"Global", opencode.InstallOptions{Home: home, ConfigHome: config, Global: global}, global},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.DryRun = true
			res, err := opencode.Install(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(tt.want, opencode.PluginFile); res.Path != want {
				t.Errorf("path %s, want %s", res.Path, want)
			}
		})
	}
}

func TestInstall_ProjectMissing(t *testing.T) {
	_, err := opencode.Install(opencode.InstallOptions{Project: filepath.Join(t.TempDir(), "nope")})
	if !os.IsNotExist(err) && (err == nil || !strings.Contains(err.Error(), "project dir")) {
		t.Errorf("got %v, want a project dir error", err)
	}
}

// TestPluginSource guards the plugin file's contract with OpenCode: every
// export of a plugin file must be a plugin function, and it imports nothing
// (OpenCode installs no dependencies beside it).
func TestPluginSource(t *testing.T) {
	src := string(opencode.PluginSource())
	if n := len(regexp.MustCompile(`(?m)^export `).FindAllString(src, -1)); n != 1 {
		t.Errorf("plugin has %d exports, want exactly one", n)
	}
	if regexp.MustCompile(`(?m)^\s*import\s`).MatchString(src) || strings.Contains(src, "require(") {
		t.Error("plugin imports a module; it must load with nothing installed beside it")
	}
	for _, hook := range []string{`"experimental.chat.system.transform"`, `"experimental.session.compacting"`, `"tool.execute.before"`, "/api/inject", "/api/spawn-check", "HEIRLOOM_URL", "HEIRLOOM_TOKEN"} {
		if !strings.Contains(src, hook) {
			t.Errorf("plugin source lacks %s", hook)
		}
	}
}

// firstLines returns the first lines of s, for failure messages.
func firstLines(s string) string {
	lines := strings.SplitN(s, "\n", 12)
	return strings.Join(lines[:min(len(lines), 11)], "\n")
}
