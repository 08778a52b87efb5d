package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

// InstallCommand is `heirloom install <harness>`: it writes the harness configuration that
// points the harness at heirloom, idempotently, keeping the user's other settings and a backup.
type InstallCommand struct {
	Stdout io.Writer
	Stderr io.Writer
}

// installUsage lists what `install` can set up.
const installUsage = `usage: heirloom install claude-code [--project DIR] [--settings FILE] [--command CMD] [--dry-run]
       heirloom install opencode [--project DIR] [--dry-run]
       heirloom install openclaw [--url URL] [--dry-run]`

// Run installs for the harness named by args[0].
func (c *InstallCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(c.Stderr, installUsage)
		return errUsage
	}
	switch args[0] {
	case "claude-code":
		return c.claudeCode(args[1:])
	case "opencode":
		return c.openCode(args[1:])
	case "openclaw":
		return c.openClaw(args[1:])
	default:
		fmt.Fprintf(c.Stderr, "heirloom install: unknown harness %q\n%s\n", args[0], installUsage)
		return errUsage
	}
}

// claudeCode adds heirloom's command hooks to a Claude Code settings file.
func (c *InstallCommand) claudeCode(args []string) error {
	fs := flag.NewFlagSet("install claude-code", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	project := fs.String("project", "", "install into DIR/.claude/settings.json (default: the user's ~/.claude/settings.json)")
	settings := fs.String("settings", "", "install into this settings file")
	command := fs.String("command", "", "hook command (default: this binary's path + \" hook claude-code\")")
	dryRun := fs.Bool("dry-run", false, "print the settings file that would be written; change nothing")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return errUsage
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
		cmd = selfCommand() + " hook claude-code"
	}
	res, err := claudecode.Install(claudecode.InstallOptions{SettingsPath: path, Command: cmd, DryRun: *dryRun})
	if err != nil {
		return err
	}
	switch {
	case *dryRun && res.Changed:
		fmt.Fprintf(c.Stdout, "Would write %s:\n%s", path, res.After)
	case !res.Changed:
		fmt.Fprintf(c.Stdout, "heirloom's hooks are already installed in %s\n", path)
	case res.Backup != "":
		fmt.Fprintf(c.Stdout, "Installed heirloom's hooks in %s (previous file kept as %s)\n", path, res.Backup)
	default:
		fmt.Fprintf(c.Stdout, "Installed heirloom's hooks in %s\n", path)
	}
	if !*dryRun {
		fmt.Fprintln(c.Stdout, "Start the sidecar with `heirloom serve`; the hooks reply {} and never block Claude Code while it is down.")
	}
	return nil
}

// openCode writes heirloom's plugin where OpenCode loads it.
func (c *InstallCommand) openCode(args []string) error {
	fs := flag.NewFlagSet("install opencode", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	project := fs.String("project", "", "install into DIR/.opencode/plugin/ (default: OpenCode's global plugin dir, ~/.config/opencode/plugin/)")
	dryRun := fs.Bool("dry-run", false, "print the change as a diff; change nothing")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return errUsage
	}
	// Install says what it did (or would do) on Out.
	res, err := opencode.Install(opencode.InstallOptions{Project: *project, DryRun: *dryRun, Out: c.Stdout})
	if err != nil {
		return err
	}
	if !res.DryRun && res.Action != opencode.InstallUnchanged {
		fmt.Fprintln(c.Stdout, "Restart OpenCode to load it, and point heirloom at the server: adapters.opencode.servers in config.yaml, or HEIRLOOM_ADAPTERS__OPENCODE__SERVERS=http://127.0.0.1:4096.")
	}
	return nil
}

// openClaw writes heirloom's plugin where OpenClaw discovers it and enables it in OpenClaw's
// config, found as OpenClaw finds it (OPENCLAW_CONFIG_PATH, OPENCLAW_STATE_DIR, ~/.openclaw).
func (c *InstallCommand) openClaw(args []string) error {
	fs := flag.NewFlagSet("install openclaw", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	url := fs.String("url", "", "the sidecar URL the plugin calls (default: $HEIRLOOM_URL, else "+openclaw.DefaultSidecarURL+")")
	dryRun := fs.Bool("dry-run", false, "print the change (the config as a diff); change nothing")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return errUsage
	}
	sidecar := *url
	if sidecar == "" {
		sidecar = os.Getenv("HEIRLOOM_URL")
	}
	// Install says what it did (or would do) on Out.
	res, err := openclaw.Install(openclaw.InstallOptions{URL: sidecar, Token: os.Getenv("HEIRLOOM_TOKEN"), DryRun: *dryRun, Out: c.Stdout})
	if err != nil {
		return fmt.Errorf("install openclaw: %w", err)
	}
	if !res.DryRun && (res.PluginAction != openclaw.InstallUnchanged || res.ConfigAction != openclaw.InstallUnchanged) {
		fmt.Fprintln(c.Stdout, "Restart the OpenClaw Gateway to load it (openclaw gateway restart), and start the sidecar with `heirloom serve`; the plugin fails open while the sidecar is down.")
	}
	if !res.DryRun {
		fmt.Fprint(c.Stdout, openClawFollowHint)
	}
	return nil
}

// selfCommand is how a hook should run this binary: its absolute path, unless it is a temporary
// build (go run), in which case the plain name from PATH.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil || strings.Contains(exe, "go-build") || strings.ContainsAny(exe, " \t\"'") {
		return "heirloom"
	}
	return exe
}

// openClawFollowHint is the step install cannot take for the user: heirloom's own config.
const openClawFollowHint = `So heirloom also follows the Gateway (sessions, parents, transcripts, runs), give it the
Gateway's address and token, in ~/.config/heirloom/config.yaml:
  adapters:
    openclaw:
      url: ws://127.0.0.1:18789
or in heirloom serve's environment: HEIRLOOM_ADAPTERS__OPENCLAW__URL=ws://127.0.0.1:18789, with
OPENCLAW_GATEWAY_TOKEN set to the Gateway's token (gateway.auth.token in openclaw.json).
`
