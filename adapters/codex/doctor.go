package codex

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
)

// VerifiedVersions are the Codex CLI versions heirloom's live tests ran (e2e/npm).
var VerifiedVersions = []string{"0.169.0"}

var _ adapters.Inspector = Installer{}

// Inspect reports Codex's binary, and heirloom's hooks, their trust entries and its MCP server
// in $CODEX_HOME/config.toml (else ~/.codex/config.toml), against the sidecar at sidecarURL.
func (Installer) Inspect(ctx context.Context, env adapters.InstallEnv, sidecarURL string) []adapters.Finding {
	out := []adapters.Finding{adapters.BinaryFinding(ctx, "codex", VerifiedVersions)}
	dir, err := codexHome("", env.Getenv)
	if err != nil {
		return append(out, adapters.Finding{Check: "hooks", Status: adapters.StatusFail, Detail: err.Error()})
	}
	out = append(out, HooksFinding(dir))
	return append(out, MCPFinding(dir, sidecarURL))
}

// HooksFinding checks heirloom's hooks in the config.toml in codexHome: a group running the
// shim for each event install writes, whose program exists, each trusted (its [hooks.state]
// entry records the hash of the hook as it is now; Codex silently skips any other).
func HooksFinding(codexHome string) adapters.Finding {
	f := adapters.Finding{Check: "hooks"}
	path := filepath.Join(codexHome, configFile)
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		f.Status, f.Detail, f.Fix = adapters.StatusWarn, "no "+path+": heirloom's hooks are not installed", "heirloom install codex"
		return f
	}
	var d *doc
	if err == nil {
		d, err = parseDoc(src)
	}
	if err != nil {
		f.Status, f.Detail = adapters.StatusFail, path+": "+err.Error()
		return f
	}
	keyFile, err := keyPath(codexHome)
	if err != nil {
		f.Status, f.Detail = adapters.StatusFail, err.Error()
		return f
	}
	var missing, untrusted, stale []string
	commands := map[string]bool{}
	for _, he := range hookEvents {
		groups := d.groups(he.name)
		ours := oursIn(groups)
		if len(ours) == 0 {
			missing = append(missing, he.name)
			continue
		}
		for _, i := range ours {
			hs, _ := groups[i]["hooks"].([]any)
			matcher, _ := groups[i]["matcher"].(string)
			for j, h := range hs {
				m, _ := h.(map[string]any)
				cmd, _ := m["command"].(string)
				commands[cmd] = true
				timeout := defaultTimeout(he.name)
				if t, ok := m["timeout"].(int64); ok {
					timeout = int(t)
				}
				key := TrustKey(keyFile, he.snake, i, j)
				if d.trustedHash(key) != TrustHash(he.snake, matcher, cmd, timeout) {
					untrusted = append(untrusted, he.name)
				}
			}
		}
	}
	for c := range commands {
		prog := adapters.CommandProgram(c)
		if filepath.IsAbs(prog) {
			if _, err := os.Stat(prog); err != nil {
				stale = append(stale, "the hook command "+prog+" does not exist")
			}
		}
	}
	switch {
	case len(missing) == len(hookEvents):
		f.Status, f.Detail, f.Fix = adapters.StatusWarn, "heirloom's hooks are not in "+path, "heirloom install codex"
	case len(missing) > 0 || len(untrusted) > 0 || len(stale) > 0:
		var why []string
		if len(missing) > 0 {
			why = append(why, "no heirloom hook for "+strings.Join(missing, ", "))
		}
		if len(untrusted) > 0 {
			why = append(why, "heirloom's hook is not trusted (Codex skips it without a word) for "+strings.Join(untrusted, ", "))
		}
		why = append(why, stale...)
		f.Status, f.Detail, f.Fix = adapters.StatusFail, path+": "+strings.Join(why, "; "), "heirloom install codex (it rewrites heirloom's hooks and their trust entries in place)"
	default:
		f.Status, f.Detail = adapters.StatusOK, "heirloom's hooks for every event it uses in "+path+", each trusted"
	}
	return f
}

// MCPFinding checks heirloom's MCP server ([mcp_servers.heirloom] url) in the config.toml in
// codexHome against the sidecar at sidecarURL.
func MCPFinding(codexHome, sidecarURL string) adapters.Finding {
	path := filepath.Join(codexHome, configFile)
	src, err := os.ReadFile(path)
	var d *doc
	if err == nil {
		d, err = parseDoc(src)
	}
	var url string
	found := false
	if err == nil {
		servers, _ := d.value["mcp_servers"].(map[string]any)
		var entry map[string]any
		entry, found = servers[MCPServerName].(map[string]any)
		url, _ = entry["url"].(string)
	}
	return adapters.MCPFinding(path, url, found, err, sidecarURL, "heirloom install codex")
}
