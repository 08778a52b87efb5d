package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/jsonconfig"
)

var _ adapters.Uninstaller = Installer{}

// UninstallUsage is the synopsis of `heirloom uninstall claude-code`.
func (Installer) UninstallUsage() string {
	return "claude-code [--project DIR | --settings FILE] [--mcp-config FILE] [--dry-run]"
}

// Uninstall takes heirloom's hooks out of a Claude Code settings file and its MCP server out of
// Claude Code's user config (see RemoveHooks, RemoveMCP), saying what it did on env.Stdout.
func (Installer) Uninstall(_ context.Context, args []string, env adapters.InstallEnv) error {
	var project, settings, mcpConfig *string
	dryRun, err := env.ParseFlags("uninstall claude-code", args, "print the change as a diff; change nothing", func(fs *flag.FlagSet) {
		project = fs.String("project", "", "uninstall from DIR/.claude/settings.json (default: the user's ~/.claude/settings.json)")
		settings = fs.String("settings", "", "uninstall from this settings file")
		mcpConfig = fs.String("mcp-config", "", "the Claude Code user config to take the MCP server out of (default: $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json, except with --project or --settings, whose installs share it); \"none\" leaves it")
	})
	if err != nil {
		return err
	}
	home, homeErr := os.UserHomeDir()
	path := *settings
	switch {
	case path != "" && *project != "":
		return errors.New("uninstall claude-code: give --project or --settings, not both")
	case *project != "":
		path = filepath.Join(*project, ".claude", "settings.json")
	case path == "":
		if homeErr != nil {
			return fmt.Errorf("uninstall claude-code: no home directory: %w", homeErr)
		}
		path = filepath.Join(home, ".claude", "settings.json")
	}
	res, err := RemoveHooks(path, dryRun, time.Now())
	if err != nil {
		return err
	}
	jsonconfig.Report(env.Stdout, "claude-code", "heirloom's hooks", res, dryRun)
	cfg := *mcpConfig
	if cfg == "none" || cfg == "" && (*project != "" || *settings != "") {
		return nil // the user config's MCP entry serves the other installs too
	}
	if cfg == "" {
		if homeErr != nil {
			return fmt.Errorf("uninstall claude-code: no home directory for the MCP config: %w", homeErr)
		}
		cfg = MCPConfigPath(home, env.Getenv)
	}
	mres, err := RemoveMCP(cfg, dryRun, time.Now())
	switch {
	case errors.Is(err, jsonconfig.ErrNotStrictJSON), errors.Is(err, jsonconfig.ErrEmptyFile), errors.Is(err, jsonconfig.ErrChanged):
		fmt.Fprintf(env.Stderr, "warning: %v; heirloom leaves it alone. Run `heirloom uninstall claude-code` again, or: claude mcp remove -s user %s\n", err, MCPServerName)
		return nil
	case err != nil:
		return err
	}
	jsonconfig.Report(env.Stdout, "claude-code", "heirloom's MCP server", mres, dryRun)
	return nil
}

// RemoveHooks takes heirloom's hooks (the shim's command hooks and the http hooks to its
// endpoint, on any event) out of a Claude Code settings file, hook by hook, keeping every other
// hook and setting: a hook of the user's behind the shim ("heirloom-hook claude-code -- CMD")
// becomes CMD again; a group left with no hook goes, then an event left with no group, and a
// "hooks" object left empty (see jsonconfig.Unedit for the file itself).
func RemoveHooks(path string, dryRun bool, now time.Time) (jsonconfig.UneditResult, error) {
	return jsonconfig.Unedit(path, dryRun, now, func(root *jsonconfig.Object) error {
		v, ok := root.Get("hooks")
		hooks, isObj := v.(*jsonconfig.Object)
		if !ok || !isObj {
			return nil
		}
		var emptied []string
		for _, event := range hooks.Keys() {
			gv, _ := hooks.Get(event)
			groups, ok := gv.([]any)
			if !ok {
				continue
			}
			kept := make([]any, 0, len(groups))
			changed := false
			for _, g := range groups {
				ng, gChanged := unhook(g)
				changed = changed || gChanged
				if ng != nil {
					kept = append(kept, ng)
				}
			}
			if !changed {
				continue
			}
			if len(kept) == 0 {
				emptied = append(emptied, event)
				continue
			}
			hooks.Set(event, kept)
		}
		for _, event := range emptied {
			jsonconfig.RemovePath(root, "hooks", event)
		}
		return nil
	})
}

// RemoveMCP takes heirloom's MCP server (mcpServers.heirloom) out of Claude Code's user config.
func RemoveMCP(path string, dryRun bool, now time.Time) (jsonconfig.UneditResult, error) {
	return jsonconfig.Unedit(path, dryRun, now, func(root *jsonconfig.Object) error {
		jsonconfig.RemovePath(root, "mcpServers", MCPServerName)
		return nil
	})
}

// unhook takes heirloom out of one hook group (a jsonconfig value): its own hooks go, a wrapped
// command of the user's is unwrapped. It returns the group (nil when no hook is left) and
// whether it changed.
func unhook(group any) (any, bool) {
	g, ok := group.(*jsonconfig.Object)
	if !ok {
		return group, false
	}
	v, _ := g.Get("hooks")
	hs, ok := v.([]any)
	if !ok {
		return group, false
	}
	kept := make([]any, 0, len(hs))
	changed := false
	for _, h := range hs {
		switch role, inner := hookRole(plain(h)); role {
		case roleOurs:
			changed = true
		case roleWrapper:
			if o, ok := h.(*jsonconfig.Object); ok {
				o.Set("command", inner)
				changed = true
			}
			kept = append(kept, h)
		default:
			kept = append(kept, h)
		}
	}
	if !changed {
		return group, false
	}
	if len(kept) == 0 {
		return nil, true
	}
	g.Set("hooks", kept)
	return g, true
}

// plain is v (a jsonconfig value) as encoding/json decodes it, for hookRole.
func plain(v any) any {
	var out any
	_ = json.Unmarshal(jsonconfig.Encode(v, ""), &out)
	return out
}
