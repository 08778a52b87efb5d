package codex

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const shimCmd = "/opt/bin/heirloom hook codex"

// mustParse parses the config.toml in home.
func mustParse(t *testing.T, home string) *doc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, configFile))
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseDoc(b)
	if err != nil {
		t.Fatalf("config.toml is not valid TOML: %v\n%s", err, b)
	}
	return d
}

// checkTrusted fails unless each event's heirloom group, running command, is at index[event]
// (0 unless given) and trusted by the hash TrustHash computes.
func checkTrusted(t *testing.T, home, command string, index map[string]int) {
	t.Helper()
	d := mustParse(t, home)
	keyFile, _ := keyPath(home)
	for _, he := range hookEvents {
		groups := d.groups(he.name)
		i := index[he.name]
		if ours := oursIn(groups); len(ours) != 1 || ours[0] != i || !isWanted(groups[i], he.name, command) {
			t.Errorf("%s: heirloom's groups at %v, want one at %d running %q", he.name, ours, i, command)
			continue
		}
		key := TrustKey(keyFile, he.snake, i, 0)
		if got, want := d.trustedHash(key), TrustHash(he.snake, "", command, timeoutOf(he.name)); got != want {
			t.Errorf("%s: trusted_hash of %s = %q, want %q", he.name, key, got, want)
		}
	}
}

func TestInstall(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }
	t.Run("MissingHome", func(t *testing.T) {
		home := filepath.Join(t.TempDir(), "codex-home")
		res, err := Install(InstallOptions{CodexHome: home, Command: shimCmd, MCPURL: "http://127.0.0.1:7433/", Token: true})
		if err != nil || !res.Changed || res.Backup != "" {
			t.Fatalf("got %+v, %v", res, err)
		}
		checkTrusted(t, home, shimCmd, nil)
		d := mustParse(t, home)
		mcp, _ := d.value["mcp_servers"].(map[string]any)[MCPServerName].(map[string]any)
		if mcp["url"] != "http://127.0.0.1:7433/mcp" || mcp["bearer_token_env_var"] != "HEIRLOOM_TOKEN" || len(mcp) != 2 {
			t.Errorf("mcp_servers.heirloom = %v", mcp)
		}
		if fi, _ := os.Stat(filepath.Join(home, configFile)); fi.Mode().Perm() != 0o600 {
			t.Errorf("mode: got %v", fi.Mode().Perm())
		}
		if bytes.HasPrefix(res.After, []byte("\n")) {
			t.Errorf("a new file starts with a blank line:\n%s", res.After)
		}
		res, err = Install(InstallOptions{CodexHome: home, Command: shimCmd, MCPURL: "http://127.0.0.1:7433", Token: true})
		if err != nil || res.Changed || res.Backup != "" {
			t.Fatalf("second install: got changed %v, backup %q, %v; want no change", res.Changed, res.Backup, err)
		}
	})
	t.Run("KeepsUserContent", func(t *testing.T) {
		home := t.TempDir()
		path := filepath.Join(home, configFile)
		orig := "# my Codex config\nmodel = \"gpt-5\"   # the default\n\n[[hooks.Stop]]\n# notify me\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"notify-send done\"\n\n[hooks.state.\"" +
			filepath.Join(home, configFile) + ":stop:0:0\"]\ntrusted_hash = \"sha256:0f\"\n\n[profiles.fast]\nmodel = 'gpt-5-mini'" // no newline at the end
		os.WriteFile(path, []byte(orig), 0o644)
		res, err := Install(InstallOptions{CodexHome: home, Command: shimCmd, Now: now})
		if err != nil || !res.Changed {
			t.Fatalf("got %+v, %v", res, err)
		}
		if b, _ := os.ReadFile(res.Backup); string(b) != orig {
			t.Fatalf("backup: got %q", b)
		}
		after, _ := os.ReadFile(path)
		if !strings.HasPrefix(string(after), orig+"\n") {
			t.Fatalf("the user's text changed; got:\n%s", after)
		}
		checkTrusted(t, home, shimCmd, map[string]int{"Stop": 1})
		if got := mustParse(t, home).trustedHash(filepath.Join(home, configFile) + ":stop:0:0"); got != "sha256:0f" {
			t.Errorf("the user's trust entry: got %q", got)
		}
		if strings.Contains(string(after), "mcp_servers") {
			t.Errorf("MCP server written without MCPURL")
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
			t.Errorf("mode changed to %v", fi.Mode().Perm())
		}
	})
	t.Run("ReplacesOldCommand", func(t *testing.T) {
		home := t.TempDir()
		if _, err := Install(InstallOptions{CodexHome: home, Command: "/old/heirloom hook codex", MCPURL: "http://127.0.0.1:9"}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(home, configFile)
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString("\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"mine\"\n")
		f.Close()
		res, err := Install(InstallOptions{CodexHome: home, Command: shimCmd, MCPURL: "http://127.0.0.1:7433", Now: now})
		if err != nil || !res.Changed || res.Backup == "" {
			t.Fatalf("got %+v, %v", res, err)
		}
		checkTrusted(t, home, shimCmd, nil) // in place: Stop's stays first, before the user's
		after := string(res.After)
		if strings.Contains(after, "/old/") || strings.Contains(after, ":9/mcp") {
			t.Errorf("the old install is still there:\n%s", after)
		}
		if n := len(mustParse(t, home).state()); n != len(hookEvents) {
			t.Errorf("%d trust entries, want %d (stale ones left?)", n, len(hookEvents))
		}
		if !strings.Contains(after, "command = \"mine\"") {
			t.Errorf("the user's group is gone")
		}
	})
	t.Run("DuplicateGroupsRekeysUsers", func(t *testing.T) {
		home := t.TempDir()
		keyFile, _ := keyPath(home)
		userHash := TrustHash("stop", "", "mine", 600)
		orig := "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"a/heirloom hook codex\"\n\n" +
			"[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"b/heirloom hook codex\"\n\n" +
			"[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"mine\"\n\n" +
			"[hooks.state]\n" + tomlString(keyFile+":stop:1:0") + " = { trusted_hash = \"sha256:b\" }\n\n" +
			"[hooks.state." + tomlString(keyFile+":stop:2:0") + "]\ntrusted_hash = " + tomlString(userHash) + "\n"
		os.WriteFile(filepath.Join(home, configFile), []byte(orig), 0o600)
		if _, err := Install(InstallOptions{CodexHome: home, Command: shimCmd}); err != nil {
			t.Fatal(err)
		}
		checkTrusted(t, home, shimCmd, nil)
		d := mustParse(t, home)
		if g := d.groups("Stop"); len(g) != 2 {
			t.Fatalf("Stop groups: %v", g)
		}
		if got := d.trustedHash(keyFile + ":stop:1:0"); got != userHash {
			t.Errorf("the user's group, now at 1: trusted_hash %q, want %q", got, userHash)
		}
		if _, ok := d.state()[keyFile+":stop:2:0"]; ok {
			t.Errorf("the user's old key is still there")
		}
	})
	t.Run("DryRun", func(t *testing.T) {
		home := filepath.Join(t.TempDir(), "codex")
		res, err := Install(InstallOptions{CodexHome: home, Command: shimCmd, DryRun: true})
		if err != nil || !res.Changed || !strings.Contains(string(res.After), shimCmd) {
			t.Fatalf("got %+v, %v", res, err)
		}
		if _, err := os.Stat(home); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("dry run created %s", home)
		}
		home = t.TempDir()
		os.WriteFile(filepath.Join(home, configFile), []byte("model = \"o3\"\n"), 0o600)
		if _, err := Install(InstallOptions{CodexHome: home, Command: shimCmd, DryRun: true}); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(home, configFile)); string(b) != "model = \"o3\"\n" {
			t.Fatalf("dry run wrote: %s", b)
		}
		if m, _ := filepath.Glob(filepath.Join(home, "*.bak-*")); len(m) != 0 {
			t.Fatalf("dry run made a backup: %v", m)
		}
	})
	for name, src := range map[string]string{
		"ErrInvalidTOML":   "model = \"o3\nx = 1\n",
		"ErrDuplicateKey":  "model = 1\nmodel = 2\n",
		"ErrInlineHooks":   "[hooks]\nStop = [{ hooks = [{ type = \"command\", command = \"x\" }] }]\n",
		"ErrInlineHookTbl": "hooks = { }\n",
	} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, configFile)
			os.WriteFile(path, []byte(src), 0o600)
			_, err := Install(InstallOptions{CodexHome: home, Command: shimCmd, MCPURL: "http://127.0.0.1:7433"})
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("got %v, want an error naming the file", err)
			}
			if b, _ := os.ReadFile(path); string(b) != src {
				t.Fatalf("the file was changed: %s", b)
			}
			if m, _ := filepath.Glob(path + ".bak-*"); len(m) != 0 {
				t.Fatalf("a backup was made: %v", m)
			}
		})
	}
	t.Run("ThroughALink", func(t *testing.T) {
		dir := t.TempDir()
		home := filepath.Join(dir, ".codex")
		os.MkdirAll(home, 0o700)
		target := filepath.Join(dir, "dotfiles", "codex.toml")
		os.MkdirAll(filepath.Dir(target), 0o700)
		os.WriteFile(target, []byte("model = \"o3\"\n"), 0o600)
		os.Symlink(target, filepath.Join(home, configFile))
		if _, err := Install(InstallOptions{CodexHome: home, Command: shimCmd}); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(filepath.Join(home, configFile)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("config.toml is no longer a link: %v %v", fi.Mode(), err)
		}
		checkTrusted(t, home, shimCmd, nil)
	})
}

func TestRemove(t *testing.T) {
	t.Run("RoundTripByteForByte", func(t *testing.T) {
		home := t.TempDir()
		path := filepath.Join(home, configFile)
		orig := "# mine\r\nmodel = \"o3\" # keep\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"mine\"\n\n\n[mcp_servers.other]\nurl = \"http://x\"" // no final newline
		os.WriteFile(path, []byte(orig), 0o640)
		if _, err := Install(InstallOptions{CodexHome: home, Command: shimCmd, MCPURL: "http://127.0.0.1:7433"}); err != nil {
			t.Fatal(err)
		}
		res, err := Remove(home, false, time.Now())
		if err != nil || !res.Changed || res.Restored == "" {
			t.Fatalf("got %+v, %v", res, err)
		}
		if b, _ := os.ReadFile(path); string(b) != orig {
			t.Fatalf("got\n%q\nwant\n%q", b, orig)
		}
		if res, err := Remove(home, false, time.Now()); err != nil || res.Changed {
			t.Fatalf("second uninstall: %+v, %v", res, err)
		}
	})
	t.Run("EditedSinceKeepsEdits", func(t *testing.T) {
		home := t.TempDir()
		path := filepath.Join(home, configFile)
		os.WriteFile(path, []byte("model = \"o3\"\n"), 0o600)
		if _, err := Install(InstallOptions{CodexHome: home, Command: shimCmd, MCPURL: "http://127.0.0.1:7433"}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		os.WriteFile(path, append(b, "\n# added later\n[tui]\nnotifications = true\n"...), 0o600)
		res, err := Remove(home, false, time.Now())
		if err != nil || !res.Changed || res.Restored != "" {
			t.Fatalf("got %+v, %v", res, err)
		}
		if got, want := string(res.After), "model = \"o3\"\n\n# added later\n[tui]\nnotifications = true\n"; got != want {
			t.Fatalf("got\n%q\nwant\n%q", got, want)
		}
	})
	t.Run("CommentAddedSinceStays", func(t *testing.T) {
		// A comment changes no value: the pre-install backup holds the same TOML, yet giving
		// it back would drop the comment.
		home := t.TempDir()
		path := filepath.Join(home, configFile)
		os.WriteFile(path, []byte("model = \"o3\"\n"), 0o600)
		if _, err := Install(InstallOptions{CodexHome: home, Command: shimCmd, MCPURL: "http://127.0.0.1:7433"}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		os.WriteFile(path, append([]byte("# why o3: cheaper\n"), b...), 0o600)
		res, err := Remove(home, false, time.Now())
		if err != nil || !res.Changed || res.Restored != "" {
			t.Fatalf("got %+v, %v", res, err)
		}
		if got, _ := os.ReadFile(path); !strings.Contains(string(got), "# why o3: cheaper") || !strings.Contains(string(got), "model = \"o3\"") {
			t.Fatalf("the comment added since the install is gone:\n%s", got)
		}
	})
	t.Run("RekeysUserGroups", func(t *testing.T) {
		home := t.TempDir()
		path := filepath.Join(home, configFile)
		if _, err := Install(InstallOptions{CodexHome: home, Command: shimCmd}); err != nil {
			t.Fatal(err)
		}
		// The user adds a Stop group after heirloom's (index 1) and trusts it.
		keyFile, _ := keyPath(home)
		hash := TrustHash("stop", "", "notify-send done", 600)
		b, _ := os.ReadFile(path)
		b = append(b, "\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"notify-send done\"\n\n[hooks.state."+tomlString(keyFile+":stop:1:0")+"]\ntrusted_hash = \""+hash+"\"\n"...)
		os.WriteFile(path, b, 0o600)
		res, err := Remove(home, false, time.Now())
		if err != nil || !res.Changed || res.Removed {
			t.Fatalf("got %+v, %v", res, err)
		}
		d := mustParse(t, home)
		if g := d.groups("Stop"); len(g) != 1 || isOurs(g[0]) {
			t.Fatalf("Stop groups: %v", g)
		}
		if got := d.trustedHash(keyFile + ":stop:0:0"); got != hash {
			t.Errorf("the user's group, now at 0: trusted_hash %q, want %q\n%s", got, hash, res.After)
		}
		if n := len(d.state()); n != 1 {
			t.Errorf("%d trust entries left, want the user's 1:\n%s", n, res.After)
		}
	})
	t.Run("CreatedFileIsDeleted", func(t *testing.T) {
		home := t.TempDir()
		if _, err := Install(InstallOptions{CodexHome: home, Command: shimCmd, MCPURL: "http://127.0.0.1:7433"}); err != nil {
			t.Fatal(err)
		}
		res, err := Remove(home, true, time.Now())
		if err != nil || !res.Removed {
			t.Fatalf("dry run: %+v, %v", res, err)
		}
		if _, err := os.Stat(filepath.Join(home, configFile)); err != nil {
			t.Fatalf("dry run removed the file: %v", err)
		}
		if res, err = Remove(home, false, time.Now()); err != nil || !res.Removed || res.Backup == "" {
			t.Fatalf("got %+v, %v", res, err)
		}
		if _, err := os.Stat(filepath.Join(home, configFile)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("config.toml still there: %v", err)
		}
	})
	t.Run("ErrInvalidTOML", func(t *testing.T) {
		home := t.TempDir()
		os.WriteFile(filepath.Join(home, configFile), []byte("[x\n"), 0o600)
		if _, err := Remove(home, false, time.Now()); err == nil {
			t.Fatal("got nil error")
		}
	})
}

// TestIsShimCommand: only a command that runs heirloom's shim for Codex, and nothing else, is
// heirloom's; a user's command that merely mentions "hook codex" is not.
func TestIsShimCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		"/usr/local/bin/heirloom-hook codex":           true,
		"heirloom hook codex":                          true,
		"'/opt/my tools/heirloom-hook' codex":          true,
		`"/opt/my tools/heirloom" hook codex`:          true,
		`/opt/my\ tools/heirloom-hook codex`:           true,
		"/usr/local/bin/git-hook codex-notify":         false,
		"/usr/local/bin/heirloom-hook codex -- ./mine": false,
		"heirloom-hook claude-code":                    false,
		"my-heirloom-hook codex":                       false,
		"sh -c 'heirloom-hook codex'":                  false,
		"'/unterminated/heirloom-hook codex":           false,
		"":                                             false,
	} {
		if got := IsShimCommand(cmd); got != want {
			t.Errorf("IsShimCommand(%q) = %v, want %v", cmd, got, want)
		}
	}
}
