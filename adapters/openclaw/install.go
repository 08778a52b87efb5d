package openclaw

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/atomicfile"
	"github.com/heirloom-dev/heirloom/adapters/internal/jsonconfig"
	"github.com/heirloom-dev/heirloom/adapters/internal/textdiff"
)

// PluginID is the id of heirloom's OpenClaw plugin: its manifest id, its folder under
// OpenClaw's extensions dir and its key under plugins.entries in openclaw.json.
const PluginID = "heirloom"

// DefaultSidecarURL is the sidecar URL the plugin is configured with when InstallOptions.URL is empty.
const DefaultSidecarURL = adapters.DefaultSidecarURL

// pluginFileNames are the files of the plugin folder, as embedded and as installed.
var pluginFileNames = []string{"openclaw.plugin.json", "package.json", "index.js"}

//go:embed plugin/openclaw.plugin.json plugin/package.json plugin/index.js
var pluginFS embed.FS

// PluginFiles returns the files Install writes into the plugin folder, by name: a copy of
// plugin/ as embedded in the binary.
func PluginFiles() map[string][]byte {
	files := make(map[string][]byte, len(pluginFileNames))
	for _, name := range pluginFileNames {
		b, err := pluginFS.ReadFile("plugin/" + name)
		if err != nil {
			panic("openclaw: embedded plugin file missing: " + name) // a build defect, not input
		}
		files[name] = b
	}
	return files
}

// InstallOptions says how Install finds OpenClaw and what it configures.
type InstallOptions struct {
	// URL is the sidecar URL the plugin calls (plugins.entries.heirloom.config.url): an
	// absolute http or https URL. "" means DefaultSidecarURL.
	URL string
	// Token, when set, is written as plugins.entries.heirloom.config.token (heirloom's
	// HEIRLOOM_TOKEN). "" leaves a token already configured there as it is.
	Token string
	// Getenv reads the environment OpenClaw's paths come from (OPENCLAW_CONFIG_PATH,
	// OPENCLAW_STATE_DIR, OPENCLAW_HOME, HOME, USERPROFILE, OPENCLAW_NIX_MODE,
	// OPENCLAW_CONFIG_READONLY); nil means os.Getenv.
	Getenv func(string) string
	// DryRun reports on Out what would change, the config change as a unified diff, and
	// writes nothing.
	DryRun bool
	// Out receives one line per action taken (or, with DryRun, that would be); nil discards it.
	Out io.Writer
	// Now stamps backup names; nil means time.Now.
	Now func() time.Time
}

// InstallAction is what Install did (or, with DryRun, would do) to a file or folder.
type InstallAction string

// The actions of InstallResult.
const (
	InstallCreated   InstallAction = "created"   // it did not exist; it was written
	InstallUpdated   InstallAction = "updated"   // it differed; it was backed up, then replaced
	InstallUnchanged InstallAction = "unchanged" // it already held this; nothing was written
)

// InstallResult says what Install did.
type InstallResult struct {
	// PluginDir is the plugin folder: <extensions dir>/heirloom (see Paths).
	PluginDir    string
	PluginAction InstallAction
	// PluginBackup is where the replaced folder was moved (PluginDir + ".backup-" + a UTC
	// timestamp: a name OpenClaw's discovery skips); "" unless PluginAction is
	// InstallUpdated and DryRun is false.
	PluginBackup string
	// ConfigPath is OpenClaw's active config file (see Paths).
	ConfigPath   string
	ConfigAction InstallAction // "" when the config was not changed because of an error
	// ConfigBackup is the copy of the previous config (ConfigPath + ".bak-" + a UTC
	// timestamp); "" unless ConfigAction is InstallUpdated and DryRun is false.
	ConfigBackup string
	DryRun       bool
}

// ManualConfigError is returned by Install when it will not edit OpenClaw's config file itself:
// the file is JSON5 (which strict JSON cannot round-trip without losing comments), routes the
// plugins section through $include, or is managed externally. The plugin folder is in place
// (unless DryRun); the config change is left to OpenClaw's own commands.
type ManualConfigError struct {
	Path     string   // the config file
	Reason   string   // why Install left it alone
	Commands []string // shell commands that make the same change through OpenClaw's CLI
	Snippet  string   // the plugins.entries.heirloom object to merge by hand, as JSON
}

func (e *ManualConfigError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "openclaw config %s left unchanged: %s.\n", e.Path, e.Reason)
	if len(e.Commands) > 0 {
		b.WriteString("Make the change with OpenClaw's own CLI instead (with the same OPENCLAW_* environment):\n")
		for _, c := range e.Commands {
			b.WriteString("  " + c + "\n")
		}
		b.WriteString(`If plugins.allow is set in that file, also add "` + PluginID + `" to it (openclaw config get plugins.allow; openclaw config set plugins.allow '[…, "` + PluginID + `"]' --strict-json).` + "\n")
	}
	b.WriteString("The entry to merge under plugins.entries." + PluginID + ":\n" + e.Snippet)
	return strings.TrimRight(b.String(), "\n")
}

// Install writes heirloom's plugin where OpenClaw discovers it, <extensions dir>/heirloom (see
// Paths), and merges into OpenClaw's config file:
//
//	plugins.entries.heirloom.enabled                       true
//	plugins.entries.heirloom.hooks.allowConversationAccess true (its typed hooks need it)
//	plugins.entries.heirloom.config.url                    opts.URL
//	plugins.entries.heirloom.config.token                  opts.Token, when set
//	plugins.allow                                          + "heirloom", only when that
//	                                                       allowlist exists and is non-empty
//
// keeping every other setting and the order of keys. It never creates plugins.allow: OpenClaw
// treats any allowlist as exclusive, and one naming only heirloom would disable every bundled
// plugin. A plugin listed in plugins.deny is an error: that choice is the user's to undo.
//
// It is idempotent: a folder or config that already holds this leaves the file alone. A folder
// that differs is moved aside to a backup OpenClaw does not load, a config that changes is
// copied to a backup first, and both are written through temp files and renames, so OpenClaw
// never sees half of either. With DryRun nothing is written and Out gets the change.
//
// A config that is JSON5 rather than strict JSON, that reaches plugins through $include, or that
// OpenClaw treats as read-only (OPENCLAW_NIX_MODE=1, OPENCLAW_CONFIG_READONLY=1) is left as it
// is: Install still writes the plugin folder, then returns a *ManualConfigError naming the
// `openclaw config set` commands that make the change. A running Gateway loads a new plugin
// folder when it restarts.
func Install(opts InstallOptions) (InstallResult, error) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	sidecar, err := sidecarURL(opts.URL)
	if err != nil {
		return InstallResult{}, err
	}
	paths, err := ResolvePaths(opts.Getenv)
	if err != nil {
		return InstallResult{}, err
	}
	res := InstallResult{PluginDir: filepath.Join(paths.Extensions, PluginID), ConfigPath: paths.Config, DryRun: opts.DryRun}

	// Plan the config change first: a config Install must refuse leaves nothing written.
	plan, cfgErr := planConfig(paths.Config, sidecar, opts.Token, opts.Getenv)
	var manual *ManualConfigError
	if cfgErr != nil && !errors.As(cfgErr, &manual) {
		return res, cfgErr
	}

	if err := installPlugin(&res, opts.DryRun, now, out); err != nil {
		return res, err
	}
	if manual != nil {
		return res, manual
	}
	for _, note := range plan.notes {
		fmt.Fprintf(out, "openclaw: note: %s\n", note)
	}
	if err := applyConfig(&res, plan, opts.DryRun, now, out); err != nil {
		return res, err
	}
	return res, nil
}

// sidecarURL validates the URL the plugin is configured with.
func sidecarURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return DefaultSidecarURL, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("sidecar url %q: want an absolute http:// or https:// URL", raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

// installPlugin writes the plugin folder (or, with dryRun, reports what it would do).
func installPlugin(res *InstallResult, dryRun bool, now func() time.Time, out io.Writer) error {
	dir := res.PluginDir
	files := PluginFiles()
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.PluginAction = InstallCreated
	case err != nil:
		return fmt.Errorf("read installed plugin: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("plugin folder %s is a symlink (a linked checkout?): heirloom will not write through it; remove the link to install a copy, or update the checkout yourself", dir)
	case !fi.IsDir():
		return fmt.Errorf("plugin folder %s exists and is not a directory; move it away first", dir)
	default:
		res.PluginAction = InstallUnchanged
		for _, name := range pluginFileNames {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(b, files[name]) {
				res.PluginAction = InstallUpdated
				break
			}
		}
	}
	switch {
	case res.PluginAction == InstallUnchanged:
		fmt.Fprintf(out, "openclaw: plugin already installed at %s\n", dir)
		return nil
	case dryRun && res.PluginAction == InstallCreated:
		fmt.Fprintf(out, "openclaw: would create plugin folder %s (%s)\n", dir, strings.Join(pluginFileNames, ", "))
		return nil
	case dryRun:
		fmt.Fprintf(out, "openclaw: would move %s aside to %s.backup-<time> and write the new plugin (%s)\n", dir, dir, strings.Join(pluginFileNames, ", "))
		return nil
	}

	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("create extensions dir: %w", err)
	}
	// The temp folder's name contains ".disabled", which OpenClaw's discovery skips: a Gateway
	// scanning meanwhile never sees a second, half-written heirloom.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+PluginID+"-*.disabled")
	if err != nil {
		return fmt.Errorf("write plugin: %w", err)
	}
	defer os.RemoveAll(tmp) // gone after the rename; cleans up after a failure
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("write plugin: %w", err)
	}
	for _, name := range pluginFileNames {
		if err := atomicfile.Write(filepath.Join(tmp, name), files[name], 0o644); err != nil {
			return fmt.Errorf("write plugin: %w", err)
		}
	}
	if res.PluginAction == InstallUpdated {
		backup, err := freeName(dir + ".backup-" + now().UTC().Format(atomicfile.BackupStamp))
		if err != nil {
			return err
		}
		if err := os.Rename(dir, backup); err != nil {
			return fmt.Errorf("back up plugin folder: %w", err)
		}
		res.PluginBackup = backup
		fmt.Fprintf(out, "openclaw: moved the previous plugin folder %s to %s\n", dir, backup)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("write plugin %s: %w", dir, err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("write plugin %s: %w", dir, err)
	}
	fmt.Fprintf(out, "openclaw: %s plugin at %s\n", map[InstallAction]string{InstallCreated: "installed", InstallUpdated: "updated"}[res.PluginAction], dir)
	return nil
}

// configPlan is a config change worked out but not yet written.
type configPlan struct {
	path       string // the file to write: the config path with symlinks resolved
	before     []byte // its content; nil when it does not exist
	after      []byte // the content to write
	shown      []byte // after with the token masked, for a dry run's diff
	url        string // the sidecar URL configured
	changed    bool
	notes      []string // things the user should know (settings Install does not override)
	mode       fs.FileMode
	fileExists bool
}

// planConfig works out the new config. It returns a *ManualConfigError when the file must be
// left to OpenClaw's own commands.
func planConfig(path, sidecar, token string, getenv func(string) string) (configPlan, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	plan := configPlan{path: path, mode: 0o600, url: sidecar}
	entry := jsonconfig.NewObject()
	entry.Set("enabled", true)
	hooks := jsonconfig.NewObject()
	hooks.Set("allowConversationAccess", true)
	entry.Set("hooks", hooks)
	config := jsonconfig.NewObject()
	config.Set("url", sidecar)
	if token != "" {
		config.Set("token", "<your HEIRLOOM_TOKEN>") // the snippet never shows the secret
	}
	entry.Set("config", config)
	manual := func(reason string, commands bool) *ManualConfigError {
		e := &ManualConfigError{Path: path, Reason: reason, Snippet: string(jsonconfig.Encode(entry, "  ")) + "\n"}
		if commands {
			body := jsonconfig.NewObject()
			body.Set("enabled", true)
			body.Set("hooks", hooks)
			body.Set("config", jsonconfig.Object1("url", sidecar))
			e.Commands = append(e.Commands, "openclaw config set plugins.entries."+PluginID+" "+shellQuote(string(jsonconfig.Encode(body, "")))+" --strict-json --merge")
			if token != "" {
				e.Commands = append(e.Commands, "openclaw config set plugins.entries."+PluginID+`.config.token "$HEIRLOOM_TOKEN"`)
			}
		}
		return e
	}
	for _, k := range []string{"OPENCLAW_NIX_MODE", "OPENCLAW_CONFIG_READONLY"} {
		if strings.TrimSpace(getenv(k)) == "1" {
			return plan, manual("OpenClaw treats it as read-only ("+k+"=1); add the entry below in the source that manages it", false)
		}
	}

	if target, err := filepath.EvalSymlinks(path); err == nil {
		plan.path = target // edit a symlinked config (a dotfiles repo) in place
	}
	before, err := os.ReadFile(plan.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		before = nil
	case err != nil:
		return plan, fmt.Errorf("read openclaw config: %w", err)
	default:
		plan.fileExists = true
		if fi, err := os.Stat(plan.path); err == nil {
			plan.mode = fi.Mode().Perm()
		}
	}
	plan.before = before

	text := bytes.TrimPrefix(before, []byte("\xef\xbb\xbf"))
	root := jsonconfig.NewObject()
	if len(bytes.TrimSpace(text)) > 0 {
		if !json.Valid(text) {
			return plan, manual("it is not strict JSON (JSON5: comments, unquoted keys, trailing commas?), and rewriting it here would drop its comments", true)
		}
		v, err := jsonconfig.Parse(text)
		if err != nil {
			return plan, fmt.Errorf("read openclaw config %s: %w", path, err)
		}
		obj, ok := v.(*jsonconfig.Object)
		if !ok {
			return plan, fmt.Errorf("openclaw config %s is not a JSON object; fix or move it first", path)
		}
		root = obj
	}
	original := jsonconfig.Encode(root, "")

	// Walk plugins → entries → heirloom → hooks/config, refusing anything routed through
	// $include (OpenClaw writes through includes itself) or of the wrong type.
	const include = "$include"
	if root.Has(include) {
		return plan, manual("it is split with a root $include, which OpenClaw writes through itself", true)
	}
	plugins, err := jsonconfig.Child(root, "plugins", "plugins")
	if err != nil {
		return plan, fmt.Errorf("openclaw config %s: %w", path, err)
	}
	entries, err := jsonconfig.Child(plugins, "entries", "plugins.entries")
	if err != nil {
		return plan, fmt.Errorf("openclaw config %s: %w", path, err)
	}
	ours, err := jsonconfig.Child(entries, PluginID, "plugins.entries."+PluginID)
	if err != nil {
		return plan, fmt.Errorf("openclaw config %s: %w", path, err)
	}
	ours.Set("enabled", true) // first, so a new entry reads enabled, hooks, config
	ourHooks, err := jsonconfig.Child(ours, "hooks", "plugins.entries."+PluginID+".hooks")
	if err != nil {
		return plan, fmt.Errorf("openclaw config %s: %w", path, err)
	}
	ourConfig, err := jsonconfig.Child(ours, "config", "plugins.entries."+PluginID+".config")
	if err != nil {
		return plan, fmt.Errorf("openclaw config %s: %w", path, err)
	}
	for name, o := range map[string]*jsonconfig.Object{"plugins": plugins, "plugins.entries": entries, "plugins.entries." + PluginID: ours, "plugins.entries." + PluginID + ".hooks": ourHooks, "plugins.entries." + PluginID + ".config": ourConfig} {
		if o.Has(include) {
			return plan, manual(name+" is read through $include, which OpenClaw writes through itself", true)
		}
	}
	if deny, ok := plugins.Get("deny"); ok {
		if list, ok := deny.([]any); ok && slices.Contains(list, any(PluginID)) {
			return plan, fmt.Errorf("openclaw config %s: plugins.deny lists %q; remove it from plugins.deny first if you want heirloom", path, PluginID)
		}
	}
	if v, ok := plugins.Get("enabled"); ok && v == false {
		plan.notes = append(plan.notes, "plugins.enabled is false in "+path+": OpenClaw loads no plugin, heirloom's included, until it is true")
	}
	if v, ok := ourHooks.Get("allowPromptInjection"); ok && v == false {
		plan.notes = append(plan.notes, "plugins.entries."+PluginID+".hooks.allowPromptInjection is false: heirloom cannot add context to prompts until it is removed")
	}

	ourHooks.Set("allowConversationAccess", true)
	ourConfig.Set("url", sidecar)
	if token != "" {
		ourConfig.Set("token", token)
	}
	if allow, ok := plugins.Get("allow"); ok {
		if list, ok := allow.([]any); ok && len(list) > 0 && !slices.Contains(list, any(PluginID)) {
			plugins.Set("allow", append(list, PluginID))
		}
	}

	indent := jsonconfig.DetectIndent(text)
	plan.after = append(jsonconfig.Encode(root, indent), '\n')
	plan.shown = plan.after
	if token != "" {
		ourConfig.Set("token", "<HEIRLOOM_TOKEN>")
		plan.shown = append(jsonconfig.Encode(root, indent), '\n')
		ourConfig.Set("token", token)
	}
	plan.changed = !plan.fileExists || !bytes.Equal(original, jsonconfig.Encode(root, ""))
	return plan, nil
}

// applyConfig writes the planned config (or, with dryRun, prints it as a diff).
func applyConfig(res *InstallResult, plan configPlan, dryRun bool, now func() time.Time, out io.Writer) error {
	switch {
	case !plan.changed:
		res.ConfigAction = InstallUnchanged
		fmt.Fprintf(out, "openclaw: config already set in %s\n", res.ConfigPath)
		return nil
	case plan.fileExists:
		res.ConfigAction = InstallUpdated
	default:
		res.ConfigAction = InstallCreated
	}
	if dryRun {
		verb := map[InstallAction]string{InstallCreated: "create", InstallUpdated: "back up and change"}[res.ConfigAction]
		fmt.Fprintf(out, "openclaw: would %s %s:\n", verb, res.ConfigPath)
		textdiff.Unified(out, plan.path, redactSecrets(plan.before), redactSecrets(plan.shown))
		return nil
	}
	if plan.fileExists {
		backup, err := atomicfile.Backup(plan.path, plan.before, plan.mode, now())
		if err != nil {
			return fmt.Errorf("back up openclaw config: %w", err)
		}
		res.ConfigBackup = backup
		fmt.Fprintf(out, "openclaw: backed up %s to %s\n", res.ConfigPath, backup)
	}
	if err := os.MkdirAll(filepath.Dir(plan.path), 0o700); err != nil {
		return fmt.Errorf("create openclaw config dir: %w", err)
	}
	if err := atomicfile.Write(plan.path, plan.after, plan.mode); err != nil {
		return fmt.Errorf("write openclaw config: %w", err)
	}
	fmt.Fprintf(out, "openclaw: %s %s: plugins.entries.%s enabled, with conversation access, url %s\n",
		map[InstallAction]string{InstallCreated: "created", InstallUpdated: "updated"}[res.ConfigAction], res.ConfigPath, PluginID, plan.url)
	return nil
}

// freeName returns base, or base.N for the first N that does not exist yet: a name to move a
// folder aside to.
func freeName(base string) (string, error) {
	for i := 0; i < 100; i++ {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s.%d", base, i)
		}
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name, nil
		}
	}
	return "", fmt.Errorf("back up %s: too many backups this second", base)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// secretValue matches a JSON member whose name says it holds a secret, with a string value.
var secretValue = regexp.MustCompile(`("(?i:[a-z_]*(?:token|password|secret|apikey|api_key))"\s*:\s*)"(?:[^"\\]|\\.)*"`)

// redactSecrets replaces the string values of secret-named members (the Gateway's token, the
// sidecar's token, provider keys) with "<redacted>", so a dry run never prints one.
func redactSecrets(b []byte) []byte {
	return secretValue.ReplaceAll(b, []byte(`$1"<redacted>"`))
}
