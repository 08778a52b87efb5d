package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/heirloom-dev/heirloom/adapters"
)

// VerifiedVersions are the OpenCode versions heirloom's live tests ran (e2e/npm).
var VerifiedVersions = []string{"1.18.33"}

var _ adapters.Inspector = Installer{}

// Inspect reports OpenCode's binary, heirloom's plugin in OpenCode's global plugin dir and its
// MCP server in the global opencode.json, against the sidecar at sidecarURL.
func (Installer) Inspect(ctx context.Context, env adapters.InstallEnv, sidecarURL string) []adapters.Finding {
	out := []adapters.Finding{adapters.BinaryFinding(ctx, "opencode", VerifiedVersions)}
	dir, err := pluginDir(InstallOptions{ConfigHome: env.Getenv("XDG_CONFIG_HOME")})
	if err != nil {
		return append(out, adapters.Finding{Check: "plugin", Status: adapters.StatusFail, Detail: err.Error()})
	}
	out = append(out, pluginFinding(filepath.Join(dir, PluginFile)))
	cfg, err := mcpConfigPath(MCPOptions{ConfigHome: env.Getenv("XDG_CONFIG_HOME")})
	if err != nil {
		return append(out, adapters.Finding{Check: "mcp", Status: adapters.StatusWarn, Detail: err.Error()})
	}
	return append(out, mcpFinding(cfg, sidecarURL))
}

// pluginFinding checks heirloom's plugin file: present, and this release's.
func pluginFinding(path string) adapters.Finding {
	f := adapters.Finding{Check: "plugin"}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.Status, f.Detail, f.Fix = adapters.StatusWarn, "no plugin at "+path+": OpenCode's sub-agents inherit nothing", "heirloom install opencode"
	case err != nil:
		f.Status, f.Detail = adapters.StatusFail, err.Error()
	case !bytes.Equal(b, pluginSource):
		f.Status, f.Detail, f.Fix = adapters.StatusFail, path+" is not this release's plugin (an older heirloom's, or edited)", "heirloom install opencode, then restart OpenCode"
	default:
		f.Status, f.Detail = adapters.StatusOK, "this release's plugin at "+path
	}
	return f
}

// mcpFinding checks heirloom's MCP entry (mcp.heirloom.url) in the config at path.
func mcpFinding(path, sidecarURL string) adapters.Finding {
	b, err := os.ReadFile(path)
	var cfg struct {
		Entries map[string]struct {
			URL string `json:"url"`
		} `json:"mcp"`
	}
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	entry, ok := cfg.Entries[MCPServerName]
	return adapters.MCPFinding(path, entry.URL, ok, err, sidecarURL, "heirloom install opencode")
}
