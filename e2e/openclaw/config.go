package openclaw

import (
	"time"

	"github.com/heirloom-dev/heirloom/e2e/internal/proc"
)

// DefaultStartTimeout bounds Start's wait for a ready Gateway when
// Options.StartTimeout is zero. A first start loads about 600 MB of
// JavaScript and its bundled plugins: 8–15 s on a loaded two-core machine.
const DefaultStartTimeout = 2 * time.Minute

// Options configures one Gateway.
type Options struct {
	// ProviderURL is the chat-completions stand-in's base URL,
	// "http://127.0.0.1:PORT/v1" (chatapi.Server.BaseURL). Required. Its
	// root is also set as the HTTP(S) proxy for every non-loopback host, so
	// any stray outbound request reaches the stand-in as a CONNECT (see
	// chatapi.Server.Calls) instead of the network.
	ProviderURL string
	// Token is the shared Gateway token; "" makes a random one.
	Token string
	// Home is the private HOME, holding the state directory (.openclaw) and
	// the agent workspace; "" makes a new temp dir. Reuse a Gateway's Home to
	// restart it on the same sessions: an existing config file is kept as it
	// is (with what an installer added to it), not rewritten, and its token
	// is used unless Token is set.
	Home string
	// Config holds extra config keys, merged into Config at every depth.
	Config map[string]any
	// PluginPaths are plugin directories or files the Gateway loads
	// (plugins.load.paths), in addition to what is installed in the state
	// directory's extensions/.
	PluginPaths []string
	// Plugins is plugins.entries: per-plugin settings by plugin id, such as
	// {"heirloom": {"enabled": true, "config": {...}}}.
	Plugins map[string]any
	// Env adds to or overrides the environment built by Env; a key mapped to
	// "" is removed.
	Env map[string]string
	// StartTimeout bounds the wait until the Gateway is ready; zero means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// Port, when not zero, is the loopback port to listen on instead of a
	// free one picked at the start. A port that is taken is tried again for
	// a few seconds (a killed Gateway's may take a moment to free), never
	// swapped for another.
	Port int
}

// The provider and model every Gateway is configured with.
const (
	// ProviderID is the custom provider's id in the config.
	ProviderID = "fake"
	// ModelID is its only model; the configured model is "fake/fake", as in
	// the recordings of ../shared/fixtures/openclaw/live.
	ModelID = "fake"
	// AgentID is the id of the default agent; session keys are
	// "agent:main:<rest>".
	AgentID = "main"
)

// Config returns the Gateway config (openclaw.json) for a Gateway whose only
// model is the chat-completions stand-in at providerURL
// ("http://127.0.0.1:PORT/v1"), with token auth on loopback and the agent
// workspace at workspace. extra is merged on top, key by key at every depth (a
// value that is not an object replaces the one at its path).
//
//	gateway.mode local, bind loopback, auth {mode token, token}
//	models.mode replace: the custom provider "fake" (api openai-completions,
//	  which POSTs streamed requests to {baseUrl}/chat/completions) is the only
//	  provider; models.catalogRefresh.enabled false: no fetch of
//	  https://catalog.openclaw.ai at start and every few hours
//	update.checkOnStart false: no update checks, update notices or statistics
//	agents.defaults.model.primary fake/fake; heartbeat.every 0m: no recurring
//	  heartbeat turn (the default is every 30 minutes)
//
// Sub-agents may spawn their own (agents.defaults.subagents.maxSpawnDepth is
// 5 by default).
func Config(providerURL, token, workspace string, extra map[string]any) map[string]any {
	cfg := map[string]any{
		"gateway": map[string]any{
			"mode": "local",
			"bind": "loopback",
			"auth": map[string]any{"mode": "token", "token": token},
		},
		"update": map[string]any{"checkOnStart": false},
		"models": map[string]any{
			"mode":           "replace",
			"catalogRefresh": map[string]any{"enabled": false},
			"providers": map[string]any{
				ProviderID: map[string]any{
					"baseUrl": providerURL,
					"apiKey":  "x",
					"api":     "openai-completions",
					"models": []any{map[string]any{
						"id":            ModelID,
						"name":          ModelID,
						"reasoning":     false,
						"input":         []string{"text"},
						"cost":          map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
						"contextWindow": 128000,
						"maxTokens":     8192,
					}},
				},
			},
		},
		"agents": map[string]any{
			"defaults": map[string]any{
				"model":     map[string]any{"primary": ProviderID + "/" + ModelID},
				"workspace": workspace,
				"heartbeat": map[string]any{"every": "0m"},
			},
		},
	}
	return merge(cfg, extra)
}

// merge merges src into dst, recursing into objects, and returns dst.
func merge(dst, src map[string]any) map[string]any {
	for k, v := range src {
		sm, ok1 := v.(map[string]any)
		dm, ok2 := dst[k].(map[string]any)
		if ok1 && ok2 {
			dst[k] = merge(dm, sm)
			continue
		}
		dst[k] = v
	}
	return dst
}

// Env returns the environment a Gateway (or any openclaw command against its
// state) starts from: nothing is inherited from the test process except PATH,
// with node's directory put first, so a developer's own config, keys or
// proxy never leak in. It keeps OpenClaw offline:
//
//	HOME, TMPDIR                    private
//	OPENCLAW_STATE_DIR              the state directory (sessions, devices,
//	OPENCLAW_CONFIG_PATH            plugins) and the config file in it
//	OPENCLAW_NO_AUTO_UPDATE=1       no update requests (with update.checkOnStart)
//	OPENCLAW_DISABLE_BONJOUR=1      no LAN multicast advertising
//	OPENCLAW_SKIP_CHANNELS=1        no channel transports
//	OPENCLAW_NO_RESPAWN=1           the process stays the one the test started
//	OPENCLAW_EXEC_SHELL_SNAPSHOT=0  no login-shell snapshot
//	OPENCLAW_OFFLINE=1              no downloads of helper binaries
//	OPENCLAW_PROXY_URL=proxyURL     OpenClaw's managed proxy routing (its
//	                                Proxyline covers fetch, undici, node:http
//	                                and WebSockets; loopback stays direct):
//	                                anything else lands in the stand-in's log
//	HTTPS_PROXY, HTTP_PROXY (and lower case)=proxyURL, NO_PROXY=loopback
//	                                for child processes
func Env(home, tmp, stateDir, configPath, proxyURL, node string) map[string]string {
	env := map[string]string{
		"HOME":                         home,
		"TMPDIR":                       tmp,
		"PATH":                         nodePath(node),
		"LANG":                         "C.UTF-8",
		"TERM":                         "dumb",
		"OPENCLAW_STATE_DIR":           stateDir,
		"OPENCLAW_CONFIG_PATH":         configPath,
		"OPENCLAW_NO_AUTO_UPDATE":      "1",
		"OPENCLAW_DISABLE_BONJOUR":     "1",
		"OPENCLAW_SKIP_CHANNELS":       "1",
		"OPENCLAW_NO_RESPAWN":          "1",
		"OPENCLAW_EXEC_SHELL_SNAPSHOT": "0",
		"OPENCLAW_OFFLINE":             "1",
		"OPENCLAW_PROXY_URL":           proxyURL,
	}
	proc.SetProxy(env, proxyURL)
	return env
}
