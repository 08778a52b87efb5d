package openclaw

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/atomicfile"
	"github.com/heirloom-dev/heirloom/adapters/internal/jsonconfig"
)

var _ adapters.Uninstaller = Installer{}

// UninstallUsage is the synopsis of `heirloom uninstall openclaw`.
func (Installer) UninstallUsage() string { return "openclaw [--dry-run]" }

// Uninstall moves heirloom's plugin folder aside (to a name OpenClaw does not load) and takes
// its entry out of OpenClaw's config: plugins.entries.heirloom and "heirloom" in plugins.allow,
// keeping every other setting (see jsonconfig.Unedit). A config Install would not edit
// (JSON5, $include, read-only) is left alone with the command that does it.
func (Installer) Uninstall(_ context.Context, args []string, env adapters.InstallEnv) error {
	dryRun, err := env.ParseFlags("uninstall openclaw", args, "print the change; change nothing", func(*flag.FlagSet) {})
	if err != nil {
		return err
	}
	paths, err := ResolvePaths(env.Getenv)
	if err != nil {
		return err
	}
	for _, k := range []string{"OPENCLAW_NIX_MODE", "OPENCLAW_CONFIG_READONLY"} {
		if env.Getenv(k) == "1" {
			fmt.Fprintf(env.Stderr, "warning: OpenClaw treats %s as read-only (%s=1); remove plugins.entries.%s in the source that manages it\n", paths.Config, k, PluginID)
			return nil
		}
	}
	remove := func(root *jsonconfig.Object) error {
		if root.Has("$include") {
			return errManualConfig
		}
		jsonconfig.RemovePath(root, "plugins", "entries", PluginID)
		if v, ok := root.Get("plugins"); ok {
			if plugins, ok := v.(*jsonconfig.Object); ok {
				if list, ok := plugins.Get("allow"); ok {
					if l, ok := list.([]any); ok && slices.Contains(l, any(PluginID)) {
						plugins.Set("allow", slices.DeleteFunc(slices.Clone(l), func(x any) bool { return x == PluginID }))
					}
				}
			}
		}
		return nil
	}
	// The config first, as a plan: one heirloom will not rewrite leaves the plugin where it is.
	if _, err := jsonconfig.Unedit(paths.Config, true, time.Now(), remove); errors.Is(err, jsonconfig.ErrNotStrictJSON) || errors.Is(err, errManualConfig) {
		fmt.Fprintf(env.Stderr, "warning: heirloom does not rewrite %s (JSON5 or $include); remove heirloom with:\n  openclaw config unset plugins.entries.%s\nthen run heirloom uninstall openclaw again\n", paths.Config, PluginID)
		return nil
	} else if err != nil {
		return err
	}
	dir := filepath.Join(paths.Extensions, PluginID)
	switch _, err := os.Stat(filepath.Join(dir, "openclaw.plugin.json")); {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(env.Stdout, "openclaw: no plugin folder at %s\n", dir)
	case err != nil:
		return err
	case dryRun:
		fmt.Fprintf(env.Stdout, "openclaw: would move %s aside to %s.backup-<time>\n", dir, dir)
	default:
		backup, err := freeName(dir + ".backup-" + time.Now().UTC().Format(atomicfile.BackupStamp))
		if err != nil {
			return err
		}
		if err := os.Rename(dir, backup); err != nil {
			return fmt.Errorf("move %s aside: %w", dir, err)
		}
		fmt.Fprintf(env.Stdout, "openclaw: moved the plugin folder %s to %s, which OpenClaw does not load\n", dir, backup)
	}
	res, err := jsonconfig.Unedit(paths.Config, dryRun, time.Now(), remove)
	if err != nil {
		return err
	}
	jsonconfig.Report(env.Stdout, "openclaw", "heirloom's plugin entry", res, dryRun)
	if !dryRun {
		fmt.Fprintln(env.Stdout, "Restart the OpenClaw Gateway to unload it (openclaw gateway restart).")
	}
	return nil
}

// errManualConfig stops an uninstall from rewriting a config split with $include.
var errManualConfig = errors.New("the config reaches plugins through $include")
