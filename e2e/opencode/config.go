package opencode

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/internal/proc"
)

// DefaultStartTimeout bounds Serve's wait for a ready server when
// Options.StartTimeout is zero. A first start reads a 185 MB binary and
// builds its database; on a loaded machine that takes several seconds.
const DefaultStartTimeout = 2 * time.Minute

// Options configures one `opencode serve`.
type Options struct {
	// ProviderURL is the chat-completions stand-in's base URL,
	// "http://127.0.0.1:PORT/v1" (chatapi.Server.BaseURL). Required. Its
	// root is also set as the HTTP(S) proxy for every non-loopback host, so
	// any stray outbound request reaches the stand-in as a CONNECT (see
	// chatapi.Server.Calls) instead of the network.
	ProviderURL string
	// Dir is the project directory the server runs in, a git repository;
	// "" makes one with NewProject. opencode.json there is overwritten.
	Dir string
	// Home is the private HOME; "" makes a new temp dir. Reuse a Server's
	// Home and Dir to restart it on the same sessions.
	Home string
	// Plugins are files copied into Dir/.opencode/plugin/ before the start
	// (OpenCode loads plugins only when it starts).
	Plugins []string
	// Config holds extra top-level opencode.json keys (see Config).
	Config map[string]any
	// Env adds to or overrides the environment built by Env; a key mapped to
	// "" is removed.
	Env map[string]string
	// StartTimeout bounds the wait until the server answers; zero means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// Port, when not zero, is the loopback port to listen on instead of a
	// free one picked at the start. With a Server's Port, Dir and Home a
	// restarted server keeps its URL and its sessions, so a client that
	// was following it can reconnect. A port that is taken is tried again
	// for a few seconds (a killed server's may take a moment to free),
	// never swapped for another.
	Port int
}

// The provider and model every served project is configured with.
const (
	// ProviderID is the custom provider's id in opencode.json.
	ProviderID = "fake"
	// ModelID is its only model; the configured model is "fake/m".
	ModelID = "m"
)

// Config returns the opencode.json for a project whose only model is the
// chat-completions stand-in at providerURL ("http://127.0.0.1:PORT/v1"):
// a custom provider "fake" built on @ai-sdk/openai-compatible (OpenCode
// 1.18.33 bundles that package, so nothing is fetched for it), model and
// small_model fake/m, no autoupdate, no sharing. extra is merged on top
// (a key in extra replaces the same top-level key).
func Config(providerURL string, extra map[string]any) map[string]any {
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{
			ProviderID: map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "Stand-in",
				"options": map[string]any{"baseURL": providerURL, "apiKey": "x"},
				"models": map[string]any{
					ModelID: map[string]any{"name": ModelID, "tool_call": true},
				},
			},
		},
		"model":       ProviderID + "/" + ModelID,
		"small_model": ProviderID + "/" + ModelID,
		"autoupdate":  false,
		"share":       "disabled",
	}
	maps.Copy(cfg, extra)
	return cfg
}

// Env returns the environment a server starts from: nothing is inherited
// from the test process except PATH (OpenCode runs git, and a shell for
// its bash tool), so a developer's own config dir, keys or proxy never leak
// in. It keeps OpenCode offline:
//
//	HOME, TMPDIR                       private (config, data, cache, its tmp dir)
//	OPENCODE_DISABLE_AUTOUPDATE=1      no update check
//	OPENCODE_DISABLE_MODELS_FETCH=1    no models.dev catalogue fetch (the
//	                                   binary carries a snapshot)
//	OPENCODE_DISABLE_LSP_DOWNLOAD=1    no language-server downloads
//	OPENCODE_DISABLE_SHARE=1           no session sharing
//	HTTPS_PROXY, HTTP_PROXY (and lower case)=proxyURL, NO_PROXY=loopback
//	                                   anything else lands in the stand-in's log
//
// Serve also seeds each config dir so that OpenCode does not try to npm
// install @opencode-ai/plugin there (see seedConfigDir).
func Env(home, tmp, proxyURL string) map[string]string {
	env := map[string]string{
		"HOME":                          home,
		"TMPDIR":                        tmp,
		"PATH":                          os.Getenv("PATH"),
		"LANG":                          "C.UTF-8",
		"TERM":                          "dumb",
		"OPENCODE_DISABLE_AUTOUPDATE":   "1",
		"OPENCODE_DISABLE_MODELS_FETCH": "1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
		"OPENCODE_DISABLE_SHARE":        "1",
	}
	proc.SetProxy(env, proxyURL)
	return env
}

// NewProject returns a new temp dir of tb holding a git repository with
// one empty commit. OpenCode names a project after its repository's root
// commit; a directory without one becomes the shared "global" project.
func NewProject(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	git := func(args ...string) {
		tb.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=heirloom-e2e", "-c", "user.email=e2e@heirloom.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
		}
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "init")
	return dir
}

// seedConfigDir makes OpenCode treat dir (a config directory: the global
// $HOME/.config/opencode, or a project's .opencode) as already holding its
// plugin SDK. On startup OpenCode 1.18 npm-installs @opencode-ai/plugin
// into every config dir in the background, and loading plugins waits for
// that install: offline it fails after a timeout (or, through the proxy,
// at once) and slows the first request. It skips the install when dir has
// a node_modules directory and a package-lock.json whose root package
// depends on every package it would add. Plugins that import nothing, like
// heirloom's, need nothing more.
func seedConfigDir(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		return fmt.Errorf("seed config dir: %w", err)
	}
	lock := map[string]any{
		"name":            "opencode-config",
		"lockfileVersion": 3,
		"requires":        true,
		"packages": map[string]any{
			"": map[string]any{"dependencies": map[string]string{"@opencode-ai/plugin": "*"}},
		},
	}
	return proc.WriteJSON(filepath.Join(dir, "package-lock.json"), lock, 0o644)
}

// copyPlugins copies each file of plugins into dir/.opencode/plugin/,
// keeping its base name.
func copyPlugins(dir string, plugins []string) error {
	if len(plugins) == 0 {
		return nil
	}
	dst := filepath.Join(dir, ".opencode", "plugin")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("create plugin dir: %w", err)
	}
	for _, p := range plugins {
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("read plugin: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(p)), b, 0o644); err != nil {
			return fmt.Errorf("copy plugin %s: %w", filepath.Base(p), err)
		}
	}
	return nil
}
