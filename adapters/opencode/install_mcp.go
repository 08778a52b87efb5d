package opencode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/internal/jsonconfig"
)

// MCPServerName is the name heirloom's MCP server is registered under in opencode.json; OpenCode
// names its tools heirloom_session_search and so on.
const MCPServerName = "heirloom"

// configSchema is the $schema a new opencode.json starts with.
const configSchema = "https://opencode.ai/config.json"

// MCPOptions says where and how to register heirloom's MCP server with OpenCode.
type MCPOptions struct {
	// Project, when set, registers it in the project's opencode.json (or opencode.jsonc when
	// only that exists); else in the global config (ConfigHome/opencode/opencode.json).
	Project string
	// Home and ConfigHome find the global config as InstallOptions does.
	Home, ConfigHome string
	// URL is the sidecar's base URL, e.g. "http://127.0.0.1:7433". Required.
	URL string
	// Token, when set, makes OpenCode send "Authorization: Bearer {env:HEIRLOOM_TOKEN}", read
	// from its own environment (the token itself is not written).
	Token bool
	// DryRun computes the change without writing anything.
	DryRun bool
	// Now stamps the backup's name. Nil means time.Now.
	Now func() time.Time
}

// MCPResult says what InstallMCP did (or, with DryRun, would do).
type MCPResult struct {
	Path    string // the config file
	Changed bool   // false: heirloom's entry was already there exactly so
	Backup  string // the copy of the previous file; "" when none was made
	Entry   string // the mcp entry written, as indented JSON
}

// mcpEntry is heirloom's entry under "mcp": the sidecar's /mcp as a remote server.
func mcpEntry(url string, token bool) *jsonconfig.Object {
	e := jsonconfig.NewObject()
	e.Set("type", "remote")
	e.Set("url", strings.TrimRight(url, "/")+"/mcp")
	e.Set("enabled", true)
	if token {
		e.Set("headers", jsonconfig.Object1("Authorization", "Bearer {env:HEIRLOOM_TOKEN}"))
	}
	return e
}

// InstallMCP registers heirloom's MCP server in an OpenCode config ("mcp": {"heirloom": {"type":
// "remote", …}}), keeping every other setting in its order. It is idempotent; a changed file is
// backed up first and replaced atomically. A file with comments (JSONC) is left alone, with an
// error wrapping jsonconfig's ErrNotStrictJSON. OpenCode reads its config at start: a running
// OpenCode needs a restart.
func InstallMCP(opts MCPOptions) (MCPResult, error) {
	entry := mcpEntry(opts.URL, opts.Token)
	res := MCPResult{Entry: string(jsonconfig.Encode(entry, "  "))}
	if !strings.HasPrefix(opts.URL, "http://") && !strings.HasPrefix(opts.URL, "https://") {
		return res, fmt.Errorf("install opencode mcp: the sidecar's http(s) URL is required, got %q", opts.URL)
	}
	path, err := mcpConfigPath(opts)
	if err != nil {
		return res, err
	}
	res.Path = path
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	r, err := jsonconfig.Edit(path, opts.DryRun, 0o644, now(), func(root *jsonconfig.Object) error {
		if root.Len() == 0 {
			root.Set("$schema", configSchema)
		}
		servers, err := jsonconfig.Child(root, "mcp", "mcp")
		if err != nil {
			return err
		}
		servers.Set(MCPServerName, entry)
		return nil
	})
	res.Path, res.Changed, res.Backup = r.Path, r.Changed, r.Backup
	return res, err
}

// mcpConfigPath is the config file InstallMCP edits: opencode.json in the project or the global
// config dir, or opencode.jsonc there when only that exists.
func mcpConfigPath(opts MCPOptions) (string, error) {
	dir := opts.Project
	if dir == "" {
		global, err := pluginDir(InstallOptions{Home: opts.Home, ConfigHome: opts.ConfigHome})
		if err != nil {
			return "", err
		}
		dir = filepath.Dir(global) // …/opencode/plugin → …/opencode
	} else if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	jsonPath := filepath.Join(dir, "opencode.json")
	if jsonc := filepath.Join(dir, "opencode.jsonc"); !isFile(jsonPath) && isFile(jsonc) {
		return jsonc, nil
	}
	if _, err := os.Stat(dir); opts.Project != "" && err != nil {
		return "", fmt.Errorf("project dir: %w", err)
	}
	return jsonPath, nil
}
