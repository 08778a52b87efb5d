package opencode

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/jsonconfig"
)

// installMCP registers the MCP server and says so; it reports whether the file changed. A
// config with comments gets the entry to add by hand instead.
func installMCP(env adapters.InstallEnv, opts MCPOptions) (bool, error) {
	res, err := InstallMCP(opts)
	switch {
	case errors.Is(err, jsonconfig.ErrNotStrictJSON):
		fmt.Fprintf(env.Stderr, "warning: %s has comments, so heirloom leaves it alone; add this under \"mcp\" yourself:\n\"%s\": %s\n", res.Path, MCPServerName, res.Entry)
		return false, nil
	case errors.Is(err, jsonconfig.ErrEmptyFile), errors.Is(err, jsonconfig.ErrChanged):
		fmt.Fprintf(env.Stderr, "warning: %v; heirloom leaves it alone. Run `heirloom install opencode` again, or add this under \"mcp\" yourself:\n\"%s\": %s\n", err, MCPServerName, res.Entry)
		return false, nil
	case err != nil:
		return false, err
	case opts.DryRun && res.Changed:
		fmt.Fprintf(env.Stdout, "opencode: would set mcp.%s in %s to:\n%s\n", MCPServerName, res.Path, res.Entry)
	case opts.DryRun:
	case !res.Changed:
		fmt.Fprintf(env.Stdout, "opencode: MCP server already registered in %s\n", res.Path)
	default:
		fmt.Fprintf(env.Stdout, "opencode: registered heirloom's MCP server in %s: agents can call heirloom_session_search and the other tools\n", res.Path)
	}
	return res.Changed, nil
}

// Installer is `heirloom install opencode`: heirloom's plugin where OpenCode loads it.
type Installer struct{}

var _ adapters.Installer = Installer{}

// Usage is the synopsis of `heirloom install opencode`.
func (Installer) Usage() string {
	return "opencode [--project DIR] [--url URL] [--mcp=false] [--dry-run]"
}

// Install parses args and writes the plugin (see Install); it says what it did on env.Stdout.
func (Installer) Install(_ context.Context, args []string, env adapters.InstallEnv) error {
	var project, url string
	var mcp bool
	dryRun, err := env.ParseFlags("install opencode", args, "print the change as a diff; change nothing", func(fs *flag.FlagSet) {
		fs.StringVar(&project, "project", "", "install into DIR/.opencode/plugin/ and DIR/opencode.json (default: OpenCode's global config dir, ~/.config/opencode/)")
		fs.StringVar(&url, "url", "", "the sidecar's URL for the MCP server (default: $HEIRLOOM_URL, else "+adapters.DefaultSidecarURL+")")
		fs.BoolVar(&mcp, "mcp", true, "also register heirloom's MCP server (the sidecar's /mcp: session_search and the other tools) in opencode.json")
	})
	if err != nil {
		return err
	}
	// Install says what it did (or would do) on Out.
	res, err := Install(InstallOptions{Project: project, ConfigHome: env.Getenv("XDG_CONFIG_HOME"), DryRun: dryRun, Out: env.Stdout})
	if err != nil {
		return err
	}
	mcpChanged := false
	if mcp {
		base := url
		for _, v := range []string{env.Getenv("HEIRLOOM_URL"), adapters.DefaultSidecarURL} {
			if base == "" {
				base = v
			}
		}
		if mcpChanged, err = installMCP(env, MCPOptions{Project: project, ConfigHome: env.Getenv("XDG_CONFIG_HOME"), URL: base, Token: env.Getenv("HEIRLOOM_TOKEN") != "", DryRun: dryRun}); err != nil {
			return err
		}
	}
	if !res.DryRun && (res.Action != InstallUnchanged || mcpChanged) {
		fmt.Fprintln(env.Stdout, "Restart OpenCode to load it, and point heirloom at the server: adapters.opencode.servers in config.yaml, or HEIRLOOM_ADAPTERS__OPENCODE__SERVERS=http://127.0.0.1:4096.")
	}
	return nil
}
