package opencode

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/internal/atomicfile"
	"github.com/heirloom-dev/heirloom/adapters/internal/textdiff"
)

// PluginFile is the file name of heirloom's OpenCode plugin.
const PluginFile = "heirloom.ts"

//go:embed plugin/heirloom.ts
var pluginSource []byte

// PluginSource returns the plugin that Install writes: a copy of
// plugin/heirloom.ts as embedded in the binary.
func PluginSource() []byte { return bytes.Clone(pluginSource) }

// InstallOptions says where Install writes the plugin.
type InstallOptions struct {
	// Project, when set, installs for one project: the plugin goes to
	// Project/.opencode/plugin/heirloom.ts. The directory must exist.
	Project string
	// Global is the global plugin dir used when Project is empty; "" means
	// OpenCode's: ConfigHome/opencode/plugin.
	Global string
	// Home is the user's home directory; "" means os.UserHomeDir.
	Home string
	// ConfigHome is the XDG config home ($XDG_CONFIG_HOME); "" means
	// Home/.config, as OpenCode has it.
	ConfigHome string
	// DryRun reports what would change on Out and writes nothing.
	DryRun bool
	// Out receives one line per action taken, and with DryRun the change
	// as a unified diff; nil discards it.
	Out io.Writer
}

// InstallAction is what Install did (or, with DryRun, would do).
type InstallAction string

// The actions of InstallResult.Action.
const (
	// InstallCreated: there was no plugin file; it was written.
	InstallCreated InstallAction = "created"
	// InstallUpdated: a different file was there; it was backed up, then
	// replaced.
	InstallUpdated InstallAction = "updated"
	// InstallUnchanged: the file already holds this plugin; nothing was
	// written.
	InstallUnchanged InstallAction = "unchanged"
)

// InstallResult says what Install did.
type InstallResult struct {
	// Path is the plugin file.
	Path   string
	Action InstallAction
	// Backup is where the replaced file was copied (Path + ".bak-" + a UTC
	// timestamp: a name OpenCode does not load as a plugin); "" unless
	// Action is InstallUpdated and DryRun is false.
	Backup string
	DryRun bool
}

// Install writes heirloom's plugin where OpenCode loads it: a project's
// .opencode/plugin/ or the global plugin dir (see InstallOptions).
// OpenCode loads plugins when its server starts, so a running server needs
// a restart to pick it up.
//
// It is idempotent: a file that already holds the plugin is left alone. A
// different file is copied to a backup first and then replaced; the new
// file is written to a temp file and renamed into place, so OpenCode never
// sees half a plugin. With DryRun nothing is written and Out gets the diff.
// Errors name the path involved.
func Install(opts InstallOptions) (InstallResult, error) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	dir, err := pluginDir(opts)
	if err != nil {
		return InstallResult{}, err
	}
	res := InstallResult{Path: filepath.Join(dir, PluginFile), DryRun: opts.DryRun}

	old, err := os.ReadFile(res.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.Action = InstallCreated
	case err != nil:
		return res, fmt.Errorf("read installed plugin: %w", err)
	case bytes.Equal(old, pluginSource):
		res.Action = InstallUnchanged
		fmt.Fprintf(out, "opencode: plugin already installed at %s\n", res.Path)
		return res, nil
	default:
		res.Action = InstallUpdated
	}
	if other := filepath.Join(filepath.Dir(dir), "plugins", PluginFile); isFile(other) {
		fmt.Fprintf(out, "opencode: note: %s also exists; OpenCode loads both (the plugin pushes each text once)\n", other)
	}

	if opts.DryRun {
		fmt.Fprintf(out, "opencode: would %s %s\n", map[InstallAction]string{InstallCreated: "create", InstallUpdated: "back up and replace"}[res.Action], res.Path)
		textdiff.Unified(out, res.Path, old, pluginSource)
		return res, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, fmt.Errorf("create plugin dir: %w", err)
	}
	if res.Action == InstallUpdated {
		// The suffix keeps OpenCode from loading the backup: only *.ts and *.js files in a
		// plugin dir load.
		if res.Backup, err = atomicfile.Backup(res.Path, old, 0o644, time.Now()); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "opencode: backed up %s to %s\n", res.Path, res.Backup)
	}
	if err := atomicfile.Write(res.Path, pluginSource, 0o644); err != nil {
		return res, fmt.Errorf("install plugin: %w", err)
	}
	fmt.Fprintf(out, "opencode: %s plugin at %s\n", map[InstallAction]string{InstallCreated: "installed", InstallUpdated: "updated"}[res.Action], res.Path)
	return res, nil
}

// pluginDir returns the directory Install writes to.
func pluginDir(opts InstallOptions) (string, error) {
	if opts.Project != "" {
		fi, err := os.Stat(opts.Project)
		if err != nil {
			return "", fmt.Errorf("project dir: %w", err)
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("project dir %s: not a directory", opts.Project)
		}
		abs, err := filepath.Abs(opts.Project)
		if err != nil {
			return "", fmt.Errorf("project dir %s: %w", opts.Project, err)
		}
		return filepath.Join(abs, ".opencode", "plugin"), nil
	}
	if opts.Global != "" {
		return opts.Global, nil
	}
	config := opts.ConfigHome
	if config == "" {
		home := opts.Home
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("find the global opencode plugin dir: %w", err)
			}
			home = h
		}
		config = filepath.Join(home, ".config")
	}
	return filepath.Join(config, "opencode", "plugin"), nil
}

// isFile reports whether path names an existing regular file.
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
