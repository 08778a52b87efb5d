package openclaw

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

// VerifiedVersions are the OpenClaw versions heirloom's live tests ran (e2e/npm/openclaw).
var VerifiedVersions = []string{"2026.9.6"}

var _ adapters.Inspector = Installer{}

// Inspect reports OpenClaw's binary, heirloom's plugin folder and its entry in OpenClaw's
// config, against the sidecar at sidecarURL.
func (Installer) Inspect(ctx context.Context, env adapters.InstallEnv, sidecarURL string) []adapters.Finding {
	out := []adapters.Finding{adapters.BinaryFinding(ctx, "openclaw", VerifiedVersions)}
	paths, err := ResolvePaths(env.Getenv)
	if err != nil {
		return append(out, adapters.Finding{Check: "plugin", Status: adapters.StatusFail, Detail: err.Error()})
	}
	out = append(out, pluginFolderFinding(filepath.Join(paths.Extensions, PluginID)))
	return append(out, configFinding(paths.Config, sidecarURL))
}

// pluginFolderFinding checks heirloom's plugin folder: present, and this release's files.
func pluginFolderFinding(dir string) adapters.Finding {
	f := adapters.Finding{Check: "plugin"}
	if _, err := os.Stat(filepath.Join(dir, "openclaw.plugin.json")); errors.Is(err, fs.ErrNotExist) {
		f.Status, f.Detail, f.Fix = adapters.StatusWarn, "no plugin folder at "+dir+": OpenClaw's sub-agents inherit nothing", "heirloom install openclaw"
		return f
	}
	for name, want := range PluginFiles() {
		got, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case err != nil:
			f.Status, f.Detail, f.Fix = adapters.StatusFail, dir+": "+err.Error(), "heirloom install openclaw"
			return f
		case !bytes.Equal(got, want):
			f.Status, f.Detail, f.Fix = adapters.StatusFail, dir+"/"+name+" is not this release's (an older heirloom's, or edited)", "heirloom install openclaw, then openclaw gateway restart"
			return f
		}
	}
	f.Status, f.Detail = adapters.StatusOK, "this release's plugin in "+dir
	return f
}

// configFinding checks plugins.entries.heirloom in OpenClaw's config: enabled, and its url the
// sidecar's.
func configFinding(path, sidecarURL string) adapters.Finding {
	f := adapters.Finding{Check: "config"}
	b, err := os.ReadFile(path)
	var cfg struct {
		Plugins struct {
			Entries map[string]struct {
				Enabled *bool `json:"enabled"`
				Config  struct {
					URL string `json:"url"`
				} `json:"config"`
			} `json:"entries"`
		} `json:"plugins"`
	}
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	entry, ok := cfg.Plugins.Entries[PluginID]
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.Status, f.Detail, f.Fix = adapters.StatusWarn, "no "+path, "heirloom install openclaw"
	case err != nil:
		f.Status, f.Detail = adapters.StatusWarn, path+" is not strict JSON (JSON5?), not checked here: "+err.Error()
	case !ok:
		f.Status, f.Detail, f.Fix = adapters.StatusWarn, "no plugins.entries."+PluginID+" in "+path, "heirloom install openclaw"
	case entry.Enabled != nil && !*entry.Enabled:
		f.Status, f.Detail, f.Fix = adapters.StatusFail, path+": plugins.entries."+PluginID+".enabled is false", "openclaw config set plugins.entries."+PluginID+".enabled true"
	case sidecarURL != "" && !adapters.SameURL(entry.Config.URL, sidecarURL):
		f.Status, f.Detail, f.Fix = adapters.StatusFail, path+": heirloom's plugin calls "+entry.Config.URL+", the sidecar is at "+sidecarURL, "heirloom install openclaw --url "+sidecarURL+", then openclaw gateway restart"
	default:
		f.Status, f.Detail = adapters.StatusOK, "heirloom's plugin enabled in "+path+", calling "+entry.Config.URL
	}
	return f
}
