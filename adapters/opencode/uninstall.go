package opencode

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/atomicfile"
	"github.com/heirloom-dev/heirloom/adapters/internal/jsonconfig"
)

var _ adapters.Uninstaller = Installer{}

// UninstallUsage is the synopsis of `heirloom uninstall opencode`.
func (Installer) UninstallUsage() string {
	return "opencode [--project DIR] [--dry-run]"
}

// Uninstall takes heirloom's plugin out of OpenCode's plugin dir (kept as a backup OpenCode does
// not load) and its MCP server out of opencode.json, saying what it did on env.Stdout.
func (Installer) Uninstall(_ context.Context, args []string, env adapters.InstallEnv) error {
	var project string
	dryRun, err := env.ParseFlags("uninstall opencode", args, "print the change; change nothing", func(fs *flag.FlagSet) {
		fs.StringVar(&project, "project", "", "uninstall from DIR/.opencode/plugin/ and DIR/opencode.json (default: OpenCode's global config dir, ~/.config/opencode/)")
	})
	if err != nil {
		return err
	}
	dir, err := pluginDir(InstallOptions{Project: project, ConfigHome: env.Getenv("XDG_CONFIG_HOME")})
	if err != nil {
		return err
	}
	if err := removePlugin(env, filepath.Join(dir, PluginFile), dryRun, time.Now()); err != nil {
		return err
	}
	cfg, err := mcpConfigPath(MCPOptions{Project: project, ConfigHome: env.Getenv("XDG_CONFIG_HOME")})
	if err != nil {
		return err
	}
	res, err := jsonconfig.Unedit(cfg, dryRun, time.Now(), func(root *jsonconfig.Object) error {
		jsonconfig.RemovePath(root, "mcp", MCPServerName)
		return nil
	}, "$schema") // install gives a config it creates a $schema

	switch {
	case errors.Is(err, jsonconfig.ErrNotStrictJSON):
		fmt.Fprintf(env.Stderr, "warning: %s has comments, so heirloom leaves it alone; delete \"%s\" under \"mcp\" yourself\n", cfg, MCPServerName)
		return nil
	case err != nil:
		return err
	}
	jsonconfig.Report(env.Stdout, "opencode", "heirloom's MCP server", res, dryRun)
	if !dryRun {
		fmt.Fprintln(env.Stdout, "Restart OpenCode to unload the plugin.")
	}
	return nil
}

// removePlugin moves heirloom's plugin file aside, to a backup name OpenCode does not load (only
// *.ts and *.js files in a plugin dir load). A file of that name that is not heirloom's plugin
// (no mark of it) is left where it is.
func removePlugin(env adapters.InstallEnv, path string, dryRun bool, now time.Time) error {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(env.Stdout, "opencode: no plugin at %s\n", path)
		return nil
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	case !bytes.Contains(b, []byte(pluginMark)):
		fmt.Fprintf(env.Stderr, "warning: %s is not heirloom's plugin; heirloom leaves it alone\n", path)
		return nil
	case dryRun:
		fmt.Fprintf(env.Stdout, "opencode: would remove the plugin %s (keeping a copy)\n", path)
		return nil
	}
	backup, err := atomicfile.Backup(path, b, 0o644, now)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	fmt.Fprintf(env.Stdout, "opencode: removed the plugin %s (a copy OpenCode does not load: %s)\n", path, backup)
	return atomicfile.SyncDir(filepath.Dir(path))
}

// pluginMark is in every version of heirloom's plugin: it tells it from another file of the
// same name.
const pluginMark = "heirloom"
