package claudecode

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/internal/jsonconfig"
)

// MCPServerName is the name heirloom's MCP server is registered under; an agent sees its tools
// as mcp__heirloom__session_search and so on.
const MCPServerName = "heirloom"

// MCPConfigPath is where Claude Code keeps user-scope MCP servers: .claude.json in
// $CLAUDE_CONFIG_DIR when that is set, else in the home directory (what `claude mcp add -s
// user` writes, checked against Claude Code 2.1.197).
func MCPConfigPath(home string, getenv func(string) string) string {
	if dir := getenv("CLAUDE_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, ".claude.json")
	}
	return filepath.Join(home, ".claude.json")
}

// MCPOptions says where and how to register heirloom's MCP server with Claude Code.
type MCPOptions struct {
	// ConfigPath is Claude Code's user config (see MCPConfigPath). Required; a missing file is
	// created.
	ConfigPath string
	// URL is the sidecar's base URL, e.g. "http://127.0.0.1:7433". Required.
	URL string
	// Token, when set, makes Claude Code send "Authorization: Bearer ${HEIRLOOM_TOKEN}", read
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
	Entry   string // the mcpServers entry written, as indented JSON
}

// mcpEntry is heirloom's entry under mcpServers: the sidecar's /mcp over streamable HTTP.
func mcpEntry(url string, token bool) *jsonconfig.Object {
	e := jsonconfig.NewObject()
	e.Set("type", "http")
	e.Set("url", strings.TrimRight(url, "/")+"/mcp")
	if token {
		e.Set("headers", jsonconfig.Object1("Authorization", "Bearer ${HEIRLOOM_TOKEN}"))
	}
	return e
}

// InstallMCP registers heirloom's MCP server in Claude Code's user config (mcpServers.heirloom),
// keeping everything else in that file (Claude Code keeps much of its state there) in its order.
// It is idempotent; a changed file is backed up first and replaced atomically. A file that is
// not strict JSON is left alone, with an error wrapping jsonconfig's ErrNotStrictJSON.
func InstallMCP(opts MCPOptions) (MCPResult, error) {
	entry := mcpEntry(opts.URL, opts.Token)
	res := MCPResult{Path: opts.ConfigPath, Entry: string(jsonconfig.Encode(entry, "  "))}
	if opts.ConfigPath == "" || !strings.HasPrefix(opts.URL, "http://") && !strings.HasPrefix(opts.URL, "https://") {
		return res, fmt.Errorf("install claude-code mcp: config path and the sidecar's http(s) URL are required, got %q", opts.URL)
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	r, err := jsonconfig.Edit(opts.ConfigPath, opts.DryRun, 0o600, now(), func(root *jsonconfig.Object) error {
		servers, err := jsonconfig.Child(root, "mcpServers", "mcpServers")
		if err != nil {
			return err
		}
		servers.Set(MCPServerName, entry)
		return nil
	})
	res.Path, res.Changed, res.Backup = r.Path, r.Changed, r.Backup
	return res, err
}
