package claudecode

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
)

// Installer is `heirloom install claude-code`: heirloom's hooks in a Claude Code settings file.
type Installer struct{}

var _ adapters.Installer = Installer{}

// Usage is the synopsis of `heirloom install claude-code`.
func (Installer) Usage() string {
	return "claude-code [--project DIR | --settings FILE] [--hooks command|http] [--url URL] [--command CMD] [--dry-run]"
}

// Install parses args and installs the hooks (see Install); it says what it did on env.Stdout.
func (Installer) Install(_ context.Context, args []string, env adapters.InstallEnv) error {
	var project, settings, kind, url, command *string
	dryRun, err := env.ParseFlags("install claude-code", args, "print the settings file that would be written; change nothing", func(fs *flag.FlagSet) {
		project = fs.String("project", "", "install into DIR/.claude/settings.json (default: the user's ~/.claude/settings.json)")
		settings = fs.String("settings", "", "install into this settings file")
		kind = fs.String("hooks", "command", "command: every event runs heirloom's hook process (the default: it fails open silently);\nhttp: Claude Code posts every event but SessionStart and SessionEnd to the sidecar itself, with no\nprocess start, but shows a hook error on every prompt while the sidecar is down")
		url = fs.String("url", "", "with --hooks http: the sidecar's URL (default: $HEIRLOOM_URL, else "+adapters.DefaultSidecarURL+")")
		command = fs.String("command", "", "hook command (default: heirloom-hook beside this binary, else this binary + \" hook\"; then \" claude-code\")")
	})
	if err != nil {
		return err
	}
	if *kind != "command" && *kind != "http" {
		fmt.Fprintf(env.Stderr, "install claude-code: --hooks %q: want command or http\n", *kind)
		return adapters.ErrUsage
	}
	path := *settings
	switch {
	case path != "" && *project != "":
		return errors.New("install claude-code: give --project or --settings, not both")
	case *project != "":
		path = filepath.Join(*project, ".claude", "settings.json")
	case path == "":
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("install claude-code: no home directory: %w", err)
		}
		path = filepath.Join(home, ".claude", "settings.json")
	}
	cmd := *command
	if cmd == "" {
		cmd = env.HookCommand + " " + Harness
	}
	opts := InstallOptions{SettingsPath: path, Command: cmd, DryRun: dryRun}
	if *kind == "http" {
		base := firstNonEmpty(*url, env.Getenv("HEIRLOOM_URL"), adapters.DefaultSidecarURL)
		opts.HTTP = &HTTPHooks{URL: base, Token: env.Getenv("HEIRLOOM_TOKEN") != ""}
		if p := proxyBypassed(env.Getenv); p != "" {
			fmt.Fprintf(env.Stderr, "warning: %s is set and NO_PROXY does not name 127.0.0.1: Claude Code sends http hooks through that proxy, which cannot reach a loopback sidecar. Add 127.0.0.1,localhost to NO_PROXY, or use --hooks command.\n", p)
		}
	}
	res, err := Install(opts)
	if err != nil {
		return err
	}
	switch {
	case dryRun && res.Changed:
		fmt.Fprintf(env.Stdout, "Would write %s:\n%s", path, res.After)
	case !res.Changed:
		fmt.Fprintf(env.Stdout, "heirloom's hooks are already installed in %s\n", path)
	case res.Backup != "":
		fmt.Fprintf(env.Stdout, "Installed heirloom's hooks in %s (previous file kept as %s)\n", path, res.Backup)
	default:
		fmt.Fprintf(env.Stdout, "Installed heirloom's hooks in %s\n", path)
	}
	if dryRun {
		return nil
	}
	if opts.HTTP != nil {
		fmt.Fprintf(env.Stdout, "Claude Code posts its hooks to %s%s (SessionStart and SessionEnd run %q). Start the sidecar with `heirloom serve`: while it is down, Claude Code shows a hook error on each event but carries on.\n", strings.TrimRight(opts.HTTP.URL, "/"), hookPath, cmd)
		return nil
	}
	fmt.Fprintln(env.Stdout, "Start the sidecar with `heirloom serve`; the hooks reply {} and never block Claude Code while it is down.")
	return nil
}

// proxyBypassed names the proxy variable set in the environment when NO_PROXY does not cover
// the loopback address; "" when none is set or loopback is excluded.
func proxyBypassed(getenv func(string) string) string {
	noProxy := strings.ToLower(getenv("NO_PROXY") + "," + getenv("no_proxy"))
	for _, host := range []string{"127.0.0.1", "localhost", "*"} {
		if strings.Contains(noProxy, host) {
			return ""
		}
	}
	for _, v := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"} {
		if getenv(v) != "" {
			return v
		}
	}
	return ""
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
