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
	"github.com/heirloom-dev/heirloom/adapters/internal/jsonconfig"
)

// Installer is `heirloom install claude-code`: heirloom's hooks in a Claude Code settings file.
type Installer struct{}

var _ adapters.Installer = Installer{}

// Usage is the synopsis of `heirloom install claude-code`.
func (Installer) Usage() string {
	return "claude-code [--project DIR | --settings FILE] [--hooks command|http] [--url URL] [--command CMD] [--mcp=false] [--mcp-config FILE] [--dry-run]"
}

// Install parses args and installs the hooks (see Install); it says what it did on env.Stdout.
func (Installer) Install(_ context.Context, args []string, env adapters.InstallEnv) error {
	var project, settings, kind, url, command, mcpConfig *string
	var mcp *bool
	dryRun, err := env.ParseFlags("install claude-code", args, "print the settings file that would be written; change nothing", func(fs *flag.FlagSet) {
		project = fs.String("project", "", "install into DIR/.claude/settings.json (default: the user's ~/.claude/settings.json)")
		settings = fs.String("settings", "", "install into this settings file")
		kind = fs.String("hooks", "command", "command: every event runs heirloom's hook process (the default: it fails open silently);\nhttp: Claude Code posts every event but SessionStart and SessionEnd to the sidecar itself, with no\nprocess start, but shows a hook error on every prompt while the sidecar is down")
		url = fs.String("url", "", "with --hooks http: the sidecar's URL (default: $HEIRLOOM_URL, else "+adapters.DefaultSidecarURL+")")
		command = fs.String("command", "", "hook command (default: heirloom-hook beside this binary, else this binary + \" hook\"; then \" claude-code\")")
		mcp = fs.Bool("mcp", true, "also register heirloom's MCP server (the sidecar's /mcp: session_search and the other tools) in Claude Code's user config")
		mcpConfig = fs.String("mcp-config", "", "the Claude Code user config to register the MCP server in (default: $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json)")
	})
	if err != nil {
		return err
	}
	if *kind != "command" && *kind != "http" {
		fmt.Fprintf(env.Stderr, "install claude-code: --hooks %q: want command or http\n", *kind)
		return adapters.ErrUsage
	}
	home, homeErr := os.UserHomeDir()
	path := *settings
	switch {
	case path != "" && *project != "":
		return errors.New("install claude-code: give --project or --settings, not both")
	case *project != "":
		path = filepath.Join(*project, ".claude", "settings.json")
	case path == "":
		if homeErr != nil {
			return fmt.Errorf("install claude-code: no home directory: %w", homeErr)
		}
		path = filepath.Join(home, ".claude", "settings.json")
	}
	base := firstNonEmpty(*url, env.Getenv("HEIRLOOM_URL"), adapters.DefaultSidecarURL)
	token := env.Getenv("HEIRLOOM_TOKEN") != ""
	cmd := *command
	if cmd == "" {
		cmd = env.HookCommand + " " + Harness
	}
	opts := InstallOptions{SettingsPath: path, Command: cmd, DryRun: dryRun}
	if *kind == "http" {
		opts.HTTP = &HTTPHooks{URL: base, Token: token}
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
	if *mcp {
		cfg := *mcpConfig
		if cfg == "" {
			if homeErr != nil {
				return fmt.Errorf("install claude-code: no home directory for the MCP config: %w", homeErr)
			}
			cfg = MCPConfigPath(home, env.Getenv)
		}
		if err := installMCP(env, MCPOptions{ConfigPath: cfg, URL: base, Token: token, DryRun: dryRun}); err != nil {
			return err
		}
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

// installMCP registers the MCP server and says so; a config it must not rewrite gets the
// command that does it instead.
func installMCP(env adapters.InstallEnv, opts MCPOptions) error {
	res, err := InstallMCP(opts)
	switch {
	case errors.Is(err, jsonconfig.ErrNotStrictJSON), errors.Is(err, jsonconfig.ErrEmptyFile), errors.Is(err, jsonconfig.ErrChanged):
		// Claude Code rewrites this file as it runs: rather than risk its state, say how to do it.
		fmt.Fprintf(env.Stderr, "warning: %v; heirloom leaves it alone. Run `heirloom install claude-code` again, or register the MCP server with:\n  claude mcp add -s user --transport http %s %s\n", err, MCPServerName, strings.TrimRight(opts.URL, "/")+"/mcp")
		return nil
	case err != nil:
		return err
	case opts.DryRun && res.Changed:
		fmt.Fprintf(env.Stdout, "Would set mcpServers.%s in %s to:\n%s\n", MCPServerName, res.Path, res.Entry)
	case opts.DryRun:
	case !res.Changed:
		fmt.Fprintf(env.Stdout, "heirloom's MCP server is already registered in %s\n", res.Path)
	default:
		fmt.Fprintf(env.Stdout, "Registered heirloom's MCP server (%s) in %s: agents can call session_search, session_transcript, session_lineage, session_digest and subagent_runs\n", strings.TrimRight(opts.URL, "/")+"/mcp", res.Path)
	}
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
