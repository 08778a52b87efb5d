package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
)

// VerifiedVersions are the Claude Code versions heirloom's live tests ran (e2e/npm).
var VerifiedVersions = []string{"2.1.197"}

var _ adapters.Inspector = Installer{}

// Inspect reports Claude Code's binary, heirloom's hooks in ~/.claude/settings.json and its MCP
// server in Claude Code's user config, against the sidecar at sidecarURL.
func (Installer) Inspect(ctx context.Context, env adapters.InstallEnv, sidecarURL string) []adapters.Finding {
	out := []adapters.Finding{adapters.BinaryFinding(ctx, "claude", VerifiedVersions)}
	home, err := os.UserHomeDir()
	if err != nil {
		return append(out, adapters.Finding{Check: "hooks", Status: adapters.StatusFail, Detail: "no home directory: " + err.Error()})
	}
	out = append(out, HooksFinding(filepath.Join(home, ".claude", "settings.json"), sidecarURL))
	return append(out, mcpFinding(MCPConfigPath(home, env.Getenv), sidecarURL))
}

// HooksFinding checks heirloom's hooks in a settings file: one group per event install writes,
// command hooks whose program exists, or http hooks posting to the sidecar at sidecarURL.
func HooksFinding(path, sidecarURL string) adapters.Finding {
	f := adapters.Finding{Check: "hooks"}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		f.Status, f.Detail, f.Fix = adapters.StatusWarn, "no "+path+": heirloom's hooks are not installed", "heirloom install claude-code"
		return f
	}
	var settings struct {
		Hooks map[string][]any `json:"hooks"`
	}
	if err == nil {
		err = json.Unmarshal(b, &settings)
	}
	if err != nil {
		f.Status, f.Detail = adapters.StatusFail, path+": "+err.Error()
		return f
	}
	var missing, stale []string
	commands := map[string]bool{}
	kinds := map[string]bool{}
	for _, he := range hookEvents {
		var ours map[string]any
		for _, g := range settings.Hooks[he.event] {
			if isOurs(g) {
				ours, _ = g.(map[string]any)
				break
			}
		}
		if ours == nil {
			missing = append(missing, he.event)
			continue
		}
		hs, _ := ours["hooks"].([]any)
		for _, h := range hs {
			m, _ := h.(map[string]any)
			if u, _ := m["url"].(string); u != "" {
				kinds["http"] = true
				if want := strings.TrimRight(sidecarURL, "/") + hookPath; sidecarURL != "" && !adapters.SameURL(u, want) {
					stale = append(stale, he.event+" posts to "+u)
				}
			}
			if c, _ := m["command"].(string); c != "" {
				kinds["command"] = true
				commands[c] = true
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
		f.Status, f.Detail, f.Fix = adapters.StatusWarn, "heirloom's hooks are not in "+path, "heirloom install claude-code"
	case len(stale) > 0:
		f.Status, f.Detail, f.Fix = adapters.StatusFail, path+": "+strings.Join(stale, "; "), "heirloom install claude-code (it replaces heirloom's hooks in place)"
	case len(missing) > 0:
		f.Status, f.Detail, f.Fix = adapters.StatusFail, path+": no heirloom hook for "+strings.Join(missing, ", "), "heirloom install claude-code"
	default:
		f.Status, f.Detail = adapters.StatusOK, "heirloom's hooks for every event it uses in "+path
		if kinds["command"] && sidecarURL != "" && !adapters.SameURL(sidecarURL, adapters.DefaultSidecarURL) {
			f.Status = adapters.StatusWarn
			f.Detail += "; its command hooks reach " + adapters.DefaultSidecarURL + " unless Claude Code's environment sets HEIRLOOM_URL, and the sidecar is at " + sidecarURL
			f.Fix = "export HEIRLOOM_URL=" + sidecarURL + " where Claude Code starts, or heirloom install claude-code --hooks http --url " + sidecarURL
		}
	}
	return f
}

// mcpFinding checks heirloom's MCP entry (mcpServers.heirloom.url) in the config at path.
func mcpFinding(path, sidecarURL string) adapters.Finding {
	b, err := os.ReadFile(path)
	var cfg struct {
		Entries map[string]struct {
			URL string `json:"url"`
		} `json:"mcpServers"`
	}
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	entry, ok := cfg.Entries[MCPServerName]
	return adapters.MCPFinding(path, entry.URL, ok, err, sidecarURL, "heirloom install claude-code")
}
