package openclaw_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/openclaw"
)

// instEnv returns a Getenv over vars only: no OPENCLAW_* of the machine running the tests leaks in.
func instEnv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// instFixedNow stamps backups.
func instFixedNow() time.Time { return time.Date(2026, 11, 22, 5, 30, 0, 0, time.UTC) }

// instReadConfig decodes a config file.
func instReadConfig(tb testing.TB, path string) map[string]any {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("%s is not JSON: %v\n%s", path, err, b)
	}
	return m
}

// instDig walks nested objects by key; nil when a step is missing.
func instDig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// instCheckEntry fails unless config holds heirloom's entry with url.
func instCheckEntry(t *testing.T, config map[string]any, url string) {
	t.Helper()
	entry := instDig(config, "plugins", "entries", openclaw.PluginID)
	if instDig(entry, "enabled") != true || instDig(entry, "hooks", "allowConversationAccess") != true || instDig(entry, "config", "url") != url {
		t.Errorf("plugins.entries.heirloom = %v, want enabled, allowConversationAccess and url %s", entry, url)
	}
}

// instCheckPlugin fails unless dir holds exactly the embedded plugin files.
func instCheckPlugin(t *testing.T, dir string) {
	t.Helper()
	for name, want := range openclaw.PluginFiles() {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: differs from the embedded plugin (err %v)", filepath.Join(dir, name), err)
		}
	}
}

func TestInstall_FreshStateDir(t *testing.T) {
	home, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	var out bytes.Buffer
	res, err := openclaw.Install(openclaw.InstallOptions{
		Getenv: instEnv(map[string]string{"HOME": home, "OPENCLAW_STATE_DIR": state}),
		Out:    &out,
		Now:    instFixedNow,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := openclaw.InstallResult{
		PluginDir: filepath.Join(state, "extensions", "heirloom"), PluginAction: openclaw.InstallCreated,
		ConfigPath: filepath.Join(state, "openclaw.json"), ConfigAction: openclaw.InstallCreated,
	}
	if res != want {
		t.Errorf("got %+v\nwant %+v", res, want)
	}
	instCheckPlugin(t, res.PluginDir)
	config := instReadConfig(t, res.ConfigPath)
	instCheckEntry(t, config, openclaw.DefaultSidecarURL)
	if allow := instDig(config, "plugins", "allow"); allow != nil {
		t.Errorf("plugins.allow = %v: Install must never create an allowlist", allow)
	}
	if fi, err := os.Stat(res.ConfigPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config mode: %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if fi, err := os.Stat(res.PluginDir); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("plugin dir mode: %v, %v; want 0755 (OpenClaw blocks world-writable plugin dirs)", fi.Mode().Perm(), err)
	}
	if _, err := os.Stat(filepath.Join(home, ".openclaw")); !os.IsNotExist(err) {
		t.Errorf("install touched ~/.openclaw although OPENCLAW_STATE_DIR is set (stat: %v)", err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(state, "extensions", ".*"))
	if len(leftovers) != 0 {
		t.Errorf("temp files left behind: %v", leftovers)
	}
	for _, line := range []string{"installed plugin at " + res.PluginDir, "created " + res.ConfigPath} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}
}

// instExisting is a config with settings of every JSON type, in an order that is not sorted,
// indented by four spaces, with a plugins.allow list and an older heirloom entry.
const instExisting = `{
    "gateway": {"port": 18789, "mode": "local", "ratio": 0.50, "big": 12345678901234567890},
    "agents": {"defaults": {"workspace": "~/work?a=1&b=2", "tags": ["x", null, true]}},
    "plugins": {
        "allow": ["openai", "anthropic"],
        "entries": {
            "brave": {"enabled": false},
            "heirloom": {"enabled": false, "hooks": {"allowPromptInjection": true}, "config": {"url": "http://old:1", "token": "kept"}}
        }
    },
    "meta": {"lastTouchedVersion": "2026.9.6"}
}
`

func TestInstall_ExistingConfig(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".openclaw")
	path := filepath.Join(dir, "openclaw.json")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(instExisting), 0o640); err != nil {
		t.Fatal(err)
	}
	opts := openclaw.InstallOptions{Getenv: instEnv(map[string]string{"HOME": home}), URL: "http://127.0.0.1:9999/", Now: instFixedNow}
	res, err := openclaw.Install(opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.ConfigPath != path || res.ConfigAction != openclaw.InstallUpdated || res.PluginDir != filepath.Join(dir, "extensions", "heirloom") {
		t.Errorf("got %+v", res)
	}
	if want := path + ".bak-20261122T053000Z"; res.ConfigBackup != want {
		t.Errorf("backup %q, want %q", res.ConfigBackup, want)
	}
	if b, err := os.ReadFile(res.ConfigBackup); err != nil || string(b) != instExisting {
		t.Errorf("backup holds %q (%v), want the previous file", b, err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	config := instReadConfig(t, path)
	instCheckEntry(t, config, "http://127.0.0.1:9999")
	entry := instDig(config, "plugins", "entries", "heirloom")
	if instDig(entry, "config", "token") != "kept" || instDig(entry, "hooks", "allowPromptInjection") != true {
		t.Errorf("heirloom entry lost settings it does not own: %v", entry)
	}
	if got := instDig(config, "plugins", "allow"); !slices.Equal(instStrings(got), []string{"openai", "anthropic", "heirloom"}) {
		t.Errorf("plugins.allow = %v, want heirloom appended to the existing allowlist", got)
	}
	if instDig(config, "plugins", "entries", "brave", "enabled") != false || instDig(config, "meta", "lastTouchedVersion") != "2026.9.6" {
		t.Errorf("other settings lost: %v", config)
	}
	text := string(after)
	for _, want := range []string{`"ratio": 0.50`, `"big": 12345678901234567890`, `~/work?a=1&b=2`, "\n    \"gateway\": {", "\"tags\": [\n                \"x\",\n                null,\n                true\n            ]"} {
		if !strings.Contains(text, want) {
			t.Errorf("rewritten config lacks %q (numbers, escaping and indentation kept):\n%s", want, text)
		}
	}
	if order := instKeyOrder(t, after); !slices.Equal(order, []string{"gateway", "agents", "plugins", "meta"}) {
		t.Errorf("top-level keys %v, want their original order", order)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's own 0640", fi.Mode().Perm())
	}

	t.Run("Idempotent", func(t *testing.T) {
		var out bytes.Buffer
		opts := opts
		opts.Out = &out
		opts.Now = func() time.Time { return instFixedNow().Add(time.Hour) }
		res, err := openclaw.Install(opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.PluginAction != openclaw.InstallUnchanged || res.ConfigAction != openclaw.InstallUnchanged || res.ConfigBackup != "" || res.PluginBackup != "" {
			t.Errorf("second run: %+v, want everything unchanged", res)
		}
		if again, _ := os.ReadFile(path); !bytes.Equal(again, after) {
			t.Error("second run rewrote the config")
		}
		if backups, _ := filepath.Glob(path + ".bak-*"); len(backups) != 1 {
			t.Errorf("backups %v, want only the first run's", backups)
		}
		for _, line := range []string{"plugin already installed", "config already set"} {
			if !strings.Contains(out.String(), line) {
				t.Errorf("output lacks %q:\n%s", line, out.String())
			}
		}
	})
}

// instStrings converts a decoded JSON list of strings.
func instStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// instKeyOrder lists the top-level keys of a JSON object in file order.
func instKeyOrder(tb testing.TB, b []byte) []string {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		tb.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			tb.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			tb.Fatal(err)
		}
	}
	return keys
}

func TestInstall_Token(t *testing.T) {
	state := t.TempDir()
	env := instEnv(map[string]string{"HOME": t.TempDir(), "OPENCLAW_STATE_DIR": state})
	var out bytes.Buffer
	if _, err := openclaw.Install(openclaw.InstallOptions{Getenv: env, Token: "s3cret-token", DryRun: true, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "s3cret-token") {
		t.Errorf("dry run printed the token:\n%s", out.String())
	}
	res, err := openclaw.Install(openclaw.InstallOptions{Getenv: env, Token: "s3cret-token", URL: "https://sidecar.example:8443"})
	if err != nil {
		t.Fatal(err)
	}
	config := instReadConfig(t, res.ConfigPath)
	if instDig(config, "plugins", "entries", "heirloom", "config", "token") != "s3cret-token" {
		t.Errorf("token not written: %v", config)
	}
	instCheckEntry(t, config, "https://sidecar.example:8443")

	// A later dry run that changes only the URL prints neither the stored token nor any other
	// secret of the config (the Gateway's own token among them).
	raw, err := os.ReadFile(res.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	withGateway := strings.Replace(string(raw), "{", `{"gateway": {"auth": {"token": "gw-s3cret"}}, "models": {"providers": {"x": {"apiKey": "sk-s3cret"}}},`, 1)
	if err := os.WriteFile(res.ConfigPath, []byte(withGateway), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if _, err := openclaw.Install(openclaw.InstallOptions{Getenv: env, URL: "http://127.0.0.1:7444", DryRun: true, Out: &out}); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cret-token", "gw-s3cret", "sk-s3cret"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("dry run printed %s:\n%s", secret, out.String())
		}
	}
	if !strings.Contains(out.String(), "http://127.0.0.1:7444") {
		t.Errorf("dry run does not show the change:\n%s", out.String())
	}
}

func TestInstall_PluginUpdated(t *testing.T) {
	state := t.TempDir()
	env := instEnv(map[string]string{"HOME": t.TempDir(), "OPENCLAW_STATE_DIR": state})
	dir := filepath.Join(state, "extensions", "heirloom")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := []byte("export default { id: 'heirloom', register() {} }\n")
	if err := os.WriteFile(filepath.Join(dir, "index.js"), old, 0o644); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if _, err := openclaw.Install(openclaw.InstallOptions{Getenv: env, DryRun: true, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "index.js")); !bytes.Equal(got, old) {
		t.Error("dry run replaced the plugin")
	}

	res, err := openclaw.Install(openclaw.InstallOptions{Getenv: env, Now: instFixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.PluginAction != openclaw.InstallUpdated || res.PluginBackup != dir+".backup-20261122T053000Z" {
		t.Errorf("got %+v, want an update with a backup beside the folder", res)
	}
	// OpenClaw's discovery skips folders whose name contains ".backup-": the old copy must not
	// load as a second plugin with the same id.
	if !strings.Contains(filepath.Base(res.PluginBackup), ".backup-") {
		t.Errorf("backup name %s would be discovered as a plugin", res.PluginBackup)
	}
	if got, _ := os.ReadFile(filepath.Join(res.PluginBackup, "index.js")); !bytes.Equal(got, old) {
		t.Error("backup does not hold the replaced plugin")
	}
	instCheckPlugin(t, dir)
}

func TestInstall_DryRun(t *testing.T) {
	t.Run("Fresh", func(t *testing.T) {
		home := t.TempDir()
		var out bytes.Buffer
		res, err := openclaw.Install(openclaw.InstallOptions{Getenv: instEnv(map[string]string{"HOME": home}), DryRun: true, Out: &out})
		if err != nil {
			t.Fatal(err)
		}
		if !res.DryRun || res.PluginAction != openclaw.InstallCreated || res.ConfigAction != openclaw.InstallCreated {
			t.Errorf("got %+v", res)
		}
		if entries, _ := os.ReadDir(home); len(entries) != 0 {
			t.Errorf("dry run wrote into home: %v", entries)
		}
		path := filepath.Join(home, ".openclaw", "openclaw.json")
		for _, want := range []string{"would create plugin folder " + filepath.Join(home, ".openclaw", "extensions", "heirloom"), "--- /dev/null\n", "+++ " + path + "\n", `+      "heirloom": {`, `+          "url": "http://127.0.0.1:7433"`} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
	})
	t.Run("Existing", func(t *testing.T) {
		state := t.TempDir()
		path := filepath.Join(state, "openclaw.json")
		if err := os.WriteFile(path, []byte(instExisting), 0o600); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		res, err := openclaw.Install(openclaw.InstallOptions{Getenv: instEnv(map[string]string{"HOME": t.TempDir(), "OPENCLAW_STATE_DIR": state}), DryRun: true, Out: &out})
		if err != nil {
			t.Fatal(err)
		}
		if res.ConfigAction != openclaw.InstallUpdated || res.ConfigBackup != "" || res.PluginBackup != "" {
			t.Errorf("got %+v, want a dry-run update without backups", res)
		}
		if b, _ := os.ReadFile(path); string(b) != instExisting {
			t.Error("dry run changed the config")
		}
		if entries, _ := os.ReadDir(state); len(entries) != 1 {
			t.Errorf("dry run left files: %v", entries)
		}
		for _, want := range []string{"--- " + path + "\n", `-        "allow": ["openai", "anthropic"],`, `+            "heirloom"`} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("diff lacks %q:\n%s", want, out.String())
			}
		}
	})
}

func TestResolvePaths(t *testing.T) {
	home := t.TempDir()
	other := t.TempDir()
	mk := func(path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	legacyHome := t.TempDir()
	mk(filepath.Join(legacyHome, ".clawdbot", "clawdbot.json"))
	fallbackHome := t.TempDir()
	mk(filepath.Join(fallbackHome, ".openclaw", "openclaw.json"))
	ocHome := filepath.Join(other, "ochome")

	tests := []struct {
		name string
		env  map[string]string
		want openclaw.Paths
	}{
		{"Default", map[string]string{"HOME": home}, openclaw.Paths{
			Config: filepath.Join(home, ".openclaw", "openclaw.json"), State: filepath.Join(home, ".openclaw"), Extensions: filepath.Join(home, ".openclaw", "extensions")}},
		{"StateDir", map[string]string{"HOME": home, "OPENCLAW_STATE_DIR": filepath.Join(other, "s")}, openclaw.Paths{
			Config: filepath.Join(other, "s", "openclaw.json"), State: filepath.Join(other, "s"), Extensions: filepath.Join(other, "s", "extensions")}},
		{"StateDirTilde", map[string]string{"HOME": home, "OPENCLAW_STATE_DIR": " ~/oc-state "}, openclaw.Paths{
			Config: filepath.Join(home, "oc-state", "openclaw.json"), State: filepath.Join(home, "oc-state"), Extensions: filepath.Join(home, "oc-state", "extensions")}},
		// Only the config path: the plugin root follows the config file's dir.
		{"ConfigPath", map[string]string{"HOME": home, "OPENCLAW_CONFIG_PATH": filepath.Join(other, "cfg", "oc.json")}, openclaw.Paths{
			Config: filepath.Join(other, "cfg", "oc.json"), State: filepath.Join(home, ".openclaw"), Extensions: filepath.Join(other, "cfg", "extensions")}},
		// Both: the config path wins for the config, the state dir for the plugin root.
		{"Both", map[string]string{"HOME": home, "OPENCLAW_CONFIG_PATH": filepath.Join(other, "cfg", "oc.json"), "OPENCLAW_STATE_DIR": filepath.Join(other, "s")}, openclaw.Paths{
			Config: filepath.Join(other, "cfg", "oc.json"), State: filepath.Join(other, "s"), Extensions: filepath.Join(other, "s", "extensions")}},
		{"OpenClawHome", map[string]string{"HOME": home, "OPENCLAW_HOME": ocHome}, openclaw.Paths{
			Config: filepath.Join(ocHome, ".openclaw", "openclaw.json"), State: filepath.Join(ocHome, ".openclaw"), Extensions: filepath.Join(ocHome, ".openclaw", "extensions")}},
		{"OpenClawHomeTilde", map[string]string{"HOME": home, "OPENCLAW_HOME": "~/oc"}, openclaw.Paths{
			Config: filepath.Join(home, "oc", ".openclaw", "openclaw.json"), State: filepath.Join(home, "oc", ".openclaw"), Extensions: filepath.Join(home, "oc", ".openclaw", "extensions")}},
		// Only the legacy dir exists: state and config stay there, the plugin root does not.
		{"Legacy", map[string]string{"HOME": legacyHome}, openclaw.Paths{
			Config: filepath.Join(legacyHome, ".clawdbot", "clawdbot.json"), State: filepath.Join(legacyHome, ".clawdbot"), Extensions: filepath.Join(legacyHome, ".openclaw", "extensions")}},
		// A state dir without a config of its own: OpenClaw still reads an existing
		// ~/.openclaw/openclaw.json.
		{"StateDirFallsBackToHomeConfig", map[string]string{"HOME": fallbackHome, "OPENCLAW_STATE_DIR": filepath.Join(other, "empty")}, openclaw.Paths{
			Config: filepath.Join(fallbackHome, ".openclaw", "openclaw.json"), State: filepath.Join(other, "empty"), Extensions: filepath.Join(other, "empty", "extensions")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := openclaw.ResolvePaths(instEnv(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestInstall_HonoursEnv(t *testing.T) {
	home, other := t.TempDir(), t.TempDir()
	cfg := filepath.Join(other, "cfg", "oc.json")
	res, err := openclaw.Install(openclaw.InstallOptions{Getenv: instEnv(map[string]string{"HOME": home, "OPENCLAW_CONFIG_PATH": cfg})})
	if err != nil {
		t.Fatal(err)
	}
	if res.ConfigPath != cfg || res.PluginDir != filepath.Join(other, "cfg", "extensions", "heirloom") {
		t.Errorf("got %+v", res)
	}
	instCheckEntry(t, instReadConfig(t, cfg), openclaw.DefaultSidecarURL)
	instCheckPlugin(t, res.PluginDir)
	if _, err := os.Stat(filepath.Join(home, ".openclaw")); !os.IsNotExist(err) {
		t.Errorf("install wrote into ~/.openclaw despite OPENCLAW_CONFIG_PATH (stat: %v)", err)
	}
}

func TestInstall_SymlinkedConfig(t *testing.T) {
	state, dotfiles := t.TempDir(), t.TempDir()
	target := filepath.Join(dotfiles, "openclaw.json")
	if err := os.WriteFile(target, []byte(`{"gateway": {"mode": "local"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(state, "openclaw.json")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if _, err := openclaw.Install(openclaw.InstallOptions{Getenv: instEnv(map[string]string{"HOME": t.TempDir(), "OPENCLAW_STATE_DIR": state})}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the config symlink was replaced by a file (%v)", err)
	}
	instCheckEntry(t, instReadConfig(t, target), openclaw.DefaultSidecarURL)
}

func TestInstall_ManualConfig(t *testing.T) {
	tests := []struct {
		name     string
		config   string
		env      map[string]string
		reason   string
		commands bool
	}{
		{"JSON5", "{\n  // OpenClaw reads JSON5\n  gateway: { mode: 'local', },\n}\n", nil, "not strict JSON", true},
		{"IncludePlugins", `{"plugins": {"$include": "./plugins.json5"}}`, nil, "$include", true},
		{"IncludeRoot", `{"$include": "./base.json5", "gateway": {}}`, nil, "$include", true},
		{"NixMode", `{}`, map[string]string{"OPENCLAW_NIX_MODE": "1"}, "OPENCLAW_NIX_MODE=1", false},
		{"ReadOnly", `{}`, map[string]string{"OPENCLAW_CONFIG_READONLY": "1"}, "OPENCLAW_CONFIG_READONLY=1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			path := filepath.Join(state, "openclaw.json")
			if err := os.WriteFile(path, []byte(tt.config), 0o600); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"HOME": t.TempDir(), "OPENCLAW_STATE_DIR": state}
			for k, v := range tt.env {
				env[k] = v
			}
			res, err := openclaw.Install(openclaw.InstallOptions{Getenv: instEnv(env), URL: "http://127.0.0.1:7500", Token: "tok-value"})
			var manual *openclaw.ManualConfigError
			if !errors.As(err, &manual) {
				t.Fatalf("got %v, want a *ManualConfigError", err)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.config {
				t.Errorf("config changed to %s", b)
			}
			if backups, _ := filepath.Glob(path + ".bak-*"); len(backups) != 0 {
				t.Errorf("backups %v for an untouched config", backups)
			}
			instCheckPlugin(t, res.PluginDir) // the plugin is in place all the same
			msg := err.Error()
			if !strings.Contains(msg, tt.reason) || !strings.Contains(msg, path) {
				t.Errorf("message lacks %q or the path:\n%s", tt.reason, msg)
			}
			if strings.Contains(msg, "tok-value") {
				t.Errorf("message shows the token:\n%s", msg)
			}
			if !tt.commands {
				if len(manual.Commands) != 0 {
					t.Errorf("commands %v for a config OpenClaw will not write either", manual.Commands)
				}
				return
			}
			want := []string{
				`openclaw config set plugins.entries.heirloom '{"enabled":true,"hooks":{"allowConversationAccess":true},"config":{"url":"http://127.0.0.1:7500"}}' --strict-json --merge`,
				`openclaw config set plugins.entries.heirloom.config.token "$HEIRLOOM_TOKEN"`,
			}
			if !slices.Equal(manual.Commands, want) {
				t.Errorf("commands\n%q\nwant\n%q", manual.Commands, want)
			}
			for _, c := range want {
				if !strings.Contains(msg, c) {
					t.Errorf("message lacks %q:\n%s", c, msg)
				}
			}
		})
	}
}

func TestInstall_Refusals(t *testing.T) {
	tests := []struct {
		name   string
		config string
		url    string
		want   string
	}{
		{"Denied", `{"plugins": {"deny": ["heirloom"]}}`, "", "plugins.deny"},
		{"NotObject", `[1, 2]`, "", "not a JSON object"},
		{"PluginsNotObject", `{"plugins": true}`, "", "plugins is not an object"},
		{"EntryNotObject", `{"plugins": {"entries": {"heirloom": "on"}}}`, "", "plugins.entries.heirloom is not an object"},
		{"BadURL", `{}`, "127.0.0.1:7433", "http://"},
		{"FileURL", `{}`, "file:///tmp/x", "http://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			path := filepath.Join(state, "openclaw.json")
			if err := os.WriteFile(path, []byte(tt.config), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := openclaw.Install(openclaw.InstallOptions{Getenv: instEnv(map[string]string{"HOME": t.TempDir(), "OPENCLAW_STATE_DIR": state}), URL: tt.url})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error about %q", err, tt.want)
			}
			var manual *openclaw.ManualConfigError
			if errors.As(err, &manual) {
				t.Errorf("got a ManualConfigError; want a refusal")
			}
			if b, _ := os.ReadFile(path); string(b) != tt.config {
				t.Error("config changed")
			}
			if _, err := os.Stat(filepath.Join(state, "extensions")); !os.IsNotExist(err) {
				t.Errorf("plugin written although install refused (stat: %v)", err)
			}
		})
	}

	t.Run("SymlinkedPlugin", func(t *testing.T) {
		state, checkout := t.TempDir(), t.TempDir()
		if err := os.MkdirAll(filepath.Join(state, "extensions"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(checkout, filepath.Join(state, "extensions", "heirloom")); err != nil {
			t.Skip("no symlinks here:", err)
		}
		_, err := openclaw.Install(openclaw.InstallOptions{Getenv: instEnv(map[string]string{"HOME": t.TempDir(), "OPENCLAW_STATE_DIR": state})})
		if err == nil || !strings.Contains(err.Error(), "symlink") {
			t.Fatalf("got %v, want a refusal to write through a symlinked plugin folder", err)
		}
		if entries, _ := os.ReadDir(checkout); len(entries) != 0 {
			t.Errorf("wrote into the linked checkout: %v", entries)
		}
	})
}

func TestInstall_Notes(t *testing.T) {
	state := t.TempDir()
	config := `{"plugins": {"enabled": false, "entries": {"heirloom": {"hooks": {"allowPromptInjection": false}}}}}`
	if err := os.WriteFile(filepath.Join(state, "openclaw.json"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := openclaw.Install(openclaw.InstallOptions{Getenv: instEnv(map[string]string{"HOME": t.TempDir(), "OPENCLAW_STATE_DIR": state}), Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"plugins.enabled is false", "allowPromptInjection is false"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks a note about %q:\n%s", want, out.String())
		}
	}
	// Install enables its own entry but leaves these choices to the user.
	c := instReadConfig(t, res.ConfigPath)
	if instDig(c, "plugins", "enabled") != false || instDig(c, "plugins", "entries", "heirloom", "hooks", "allowPromptInjection") != false {
		t.Errorf("install overrode the user's choices: %v", c)
	}
}

// TestPluginFiles guards the plugin's contract with OpenClaw's loader.
func TestPluginFiles(t *testing.T) {
	files := openclaw.PluginFiles()
	var manifest struct {
		ID           string `json:"id"`
		ConfigSchema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"configSchema"`
		Activation struct {
			OnStartup bool `json:"onStartup"`
		} `json:"activation"`
	}
	if err := json.Unmarshal(files["openclaw.plugin.json"], &manifest); err != nil {
		t.Fatal(err)
	}
	if manifest.ID != openclaw.PluginID || manifest.ConfigSchema.Type != "object" || manifest.ConfigSchema.Properties["url"] == nil || manifest.ConfigSchema.Properties["token"] == nil || !manifest.Activation.OnStartup {
		t.Errorf("manifest %+v: want id heirloom, a configSchema with url and token, activation.onStartup", manifest)
	}
	var pkg struct {
		Type     string `json:"type"`
		OpenClaw struct {
			Extensions []string `json:"extensions"`
		} `json:"openclaw"`
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(files["package.json"], &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Type != "module" || !slices.Equal(pkg.OpenClaw.Extensions, []string{"./index.js"}) || len(pkg.Dependencies) != 0 {
		t.Errorf("package.json %+v: want an ES module whose one extension is ./index.js, no dependencies", pkg)
	}
	src := string(files["index.js"])
	for _, want := range []string{`"before_prompt_build"`, `"before_tool_call"`, `"subagent_spawned"`, `"before_compaction"`, `"after_compaction"`, "prependSystemContext", "/api/inject", "/api/spawn-check", "/hooks/openclaw", "harness: \"openclaw\"", "pluginConfig", "TIMEOUT_MS = 1500"} {
		if !strings.Contains(src, want) {
			t.Errorf("index.js lacks %s", want)
		}
	}
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(line, "import ") && !strings.Contains(line, `from "node:`) {
			t.Errorf("index.js imports a package (%s): it must load with nothing installed beside it", line)
		}
	}
}

// instNode returns the node binary on PATH, or skips.
func instNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH; the e2e suite runs the plugin inside OpenClaw")
	}
	return node
}

// instWritePlugin writes the embedded plugin into a new dir and returns it.
func instWritePlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range openclaw.PluginFiles() {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPluginSyntax runs the plugin through node --check.
func TestPluginSyntax(t *testing.T) {
	node := instNode(t)
	dir := instWritePlugin(t)
	if out, err := exec.Command(node, "--check", filepath.Join(dir, "index.js")).CombinedOutput(); err != nil {
		t.Fatalf("node --check index.js: %v\n%s", err, out)
	}
}

// TestInstallLoadsInOpenClaw installs into a fresh state dir and asks the real OpenClaw to load
// the plugin: HEIRLOOM_OPENCLAW_BIN names the openclaw executable, and node (≥ 24) must be on
// PATH. Without them it skips; the e2e suite runs OpenClaw live.
func TestInstallLoadsInOpenClaw(t *testing.T) {
	bin := os.Getenv("HEIRLOOM_OPENCLAW_BIN")
	if bin == "" {
		t.Skip("HEIRLOOM_OPENCLAW_BIN is not set: no real OpenClaw to load the plugin (the e2e suite covers it live)")
	}
	instNode(t)
	home, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(state, "openclaw.json"), []byte(`{"gateway": {"mode": "local"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "OPENCLAW_STATE_DIR": state}
	if _, err := openclaw.Install(openclaw.InstallOptions{Getenv: instEnv(env)}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "plugins", "inspect", openclaw.PluginID, "--runtime", "--json")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "OPENCLAW_STATE_DIR=" + state, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("openclaw plugins inspect: %v\n%s", err, stderr.String())
	}
	var got struct {
		Plugin struct {
			ID, Status, Origin, RootDir string
		} `json:"plugin"`
		TypedHooks []struct {
			Name string `json:"name"`
		} `json:"typedHooks"`
		Diagnostics []struct {
			Level, Message string
		} `json:"diagnostics"`
		Policy struct {
			AllowConversationAccess bool `json:"allowConversationAccess"`
		} `json:"policy"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("inspect output: %v\n%s", err, stdout.String())
	}
	if got.Plugin.ID != openclaw.PluginID || got.Plugin.Status != "loaded" || got.Plugin.RootDir != filepath.Join(state, "extensions", "heirloom") || !got.Policy.AllowConversationAccess {
		t.Errorf("plugin %+v, policy %+v: want heirloom loaded from the installed folder with conversation access", got.Plugin, got.Policy)
	}
	var hooks []string
	for _, h := range got.TypedHooks {
		hooks = append(hooks, h.Name)
	}
	slices.Sort(hooks)
	if want := []string{"after_compaction", "before_compaction", "before_prompt_build", "before_tool_call", "subagent_spawned"}; !slices.Equal(hooks, want) {
		t.Errorf("typed hooks %v, want %v", hooks, want)
	}
	for _, d := range got.Diagnostics {
		// The one expected warning: a plugin installed by copying has no install record, so
		// OpenClaw cannot say where it came from.
		if d.Level == "error" || strings.Contains(d.Message, "blocked") {
			t.Errorf("diagnostic %s: %s", d.Level, d.Message)
		}
	}
}
