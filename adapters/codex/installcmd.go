package codex

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/textdiff"
)

var _ adapters.Installer = Installer{}

// Usage is the synopsis of `heirloom install codex`.
func (Installer) Usage() string {
	return "codex [--codex-home DIR] [--url URL] [--command CMD] [--mcp=false] [--dry-run]"
}

// Install parses args and installs heirloom into Codex's config.toml (see the package function
// Install), saying what it did and what to do next on env.Stdout.
func (Installer) Install(_ context.Context, args []string, env adapters.InstallEnv) error {
	var home, url, command *string
	var mcp *bool
	dryRun, err := env.ParseFlags("install codex", args, "print the change as a diff; change nothing", func(fs *flag.FlagSet) {
		home = fs.String("codex-home", "", "Codex's home directory, holding config.toml (default: $CODEX_HOME, else ~/.codex)")
		url = fs.String("url", "", "the sidecar's URL, for the MCP server (default: $HEIRLOOM_URL, else "+adapters.DefaultSidecarURL+")")
		command = fs.String("command", "", "hook command (default: heirloom-hook beside this binary, else this binary + \" hook\"; then \" codex\")")
		mcp = fs.Bool("mcp", true, "also register heirloom's MCP server (the sidecar's /mcp: session_search and the other tools) in config.toml")
	})
	if err != nil {
		return err
	}
	dir, err := codexHome(*home, env.Getenv)
	if err != nil {
		return fmt.Errorf("install codex: %w", err)
	}
	cmd := *command
	if cmd == "" {
		cmd = env.HookCommand + " " + Harness
	}
	opts := InstallOptions{CodexHome: dir, Command: cmd, DryRun: dryRun}
	base := firstSet(*url, env.Getenv("HEIRLOOM_URL"), adapters.DefaultSidecarURL)
	if *mcp {
		opts.MCPURL = base
		opts.Token = env.Getenv(tokenEnv) != ""
	}
	res, err := Install(opts)
	if err != nil {
		return err
	}
	switch {
	case !res.Changed:
		fmt.Fprintf(env.Stdout, "heirloom's hooks are already installed and trusted in %s\n", res.Path)
		if *mcp {
			fmt.Fprintf(env.Stdout, "heirloom's MCP server is already registered there (%s/mcp)\n", strings.TrimRight(base, "/"))
		}
		return nil
	case dryRun:
		fmt.Fprintf(env.Stdout, "Would write %s:\n", res.Path)
		textdiff.Unified(env.Stdout, res.Path, res.Before, res.After)
		return nil
	case res.Backup != "":
		fmt.Fprintf(env.Stdout, "Installed heirloom's hooks for %d events in %s, each trusted for Codex (previous file kept as %s)\n", len(hookEvents), res.Path, res.Backup)
	default:
		fmt.Fprintf(env.Stdout, "Installed heirloom's hooks for %d events in %s, each trusted for Codex\n", len(hookEvents), res.Path)
	}
	if *mcp {
		fmt.Fprintf(env.Stdout, "Registered heirloom's MCP server (%s/mcp) there: agents can call session_search, session_transcript, session_lineage, session_digest and subagent_runs\n", strings.TrimRight(base, "/"))
		if opts.Token {
			fmt.Fprintf(env.Stdout, "Codex sends $%s to it as a bearer token: set %s where Codex starts, too.\n", tokenEnv, tokenEnv)
		}
	}
	fmt.Fprintln(env.Stdout, "Start the sidecar with `heirloom serve`, then start Codex: it reads config.toml when it starts. The hooks reply {} and never block Codex while the sidecar is down.")
	return nil
}

// codexHome is the directory holding Codex's config.toml: flag when set, else $CODEX_HOME,
// else ~/.codex.
func codexHome(flag string, getenv func(string) string) (string, error) {
	if dir := firstSet(flag, getenv("CODEX_HOME")); dir != "" {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("no home directory, and CODEX_HOME is not set: give --codex-home")
	}
	return filepath.Join(home, ".codex"), nil
}

func firstSet(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
