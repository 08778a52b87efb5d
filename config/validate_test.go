package config_test

import (
	"errors"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/config"
)

func TestConfig_Validate(t *testing.T) {
	for _, tt := range []struct {
		name   string
		modify func(c *config.Config)
		key    string // "" when the config is valid
		value  any
	}{
		{"OK", func(c *config.Config) {}, "", nil},
		{"OKPortZero", func(c *config.Config) { c.Listen = "127.0.0.1:0" }, "", nil},
		{"OKLocalhost", func(c *config.Config) { c.Listen = "localhost:7433" }, "", nil},
		{"OKLoopbackRange", func(c *config.Config) { c.Listen = "127.8.9.10:7433" }, "", nil},
		{"OKIPv6Loopback", func(c *config.Config) { c.Listen = "[::1]:7433" }, "", nil},
		{"OKNonLoopbackWithToken", func(c *config.Config) { c.Listen, c.Token = "0.0.0.0:7433", "t" }, "", nil},
		{"OKNoTail", func(c *config.Config) { c.Inherit.TailChars = 0 }, "", nil},
		{"ErrNonLoopback", func(c *config.Config) { c.Listen = "0.0.0.0:7433" }, "listen", "0.0.0.0:7433"},
		{"ErrAllInterfaces", func(c *config.Config) { c.Listen = ":7433" }, "listen", ":7433"},
		{"ErrHostName", func(c *config.Config) { c.Listen = "example.com:7433" }, "listen", "example.com:7433"},
		{"ErrNoPort", func(c *config.Config) { c.Listen = "127.0.0.1" }, "listen", "127.0.0.1"},
		{"ErrNamedPort", func(c *config.Config) { c.Listen = "127.0.0.1:http" }, "listen", "127.0.0.1:http"},
		{"ErrPortRange", func(c *config.Config) { c.Listen = "127.0.0.1:65536" }, "listen", "127.0.0.1:65536"},
		{"ErrDataDirEmpty", func(c *config.Config) { c.DataDir = "" }, "data_dir", nil},
		{"ErrScopeUpper", func(c *config.Config) { c.Scope = "Default" }, "scope", "Default"},
		{"ErrScopeLeadingDash", func(c *config.Config) { c.Scope = "-x" }, "scope", "-x"},
		{"ErrScopeTooLong", func(c *config.Config) { c.Scope = string(make([]byte, 65)) }, "scope", string(make([]byte, 65))},
		{"ErrLogLevel", func(c *config.Config) { c.Log.Level = "verbose" }, "log.level", "verbose"},
		{"ErrLogFormat", func(c *config.Config) { c.Log.Format = "xml" }, "log.format", "xml"},
		{"ErrMaxBodyBytes", func(c *config.Config) { c.Server.MaxBodyBytes = 0 }, "server.max_body_bytes", int64(0)},
		{"ErrHookTimeout", func(c *config.Config) { c.Server.HookTimeout = -time.Second }, "server.hook_timeout", -time.Second},
		{"ErrShutdownTimeout", func(c *config.Config) { c.Server.ShutdownTimeout = 0 }, "server.shutdown_timeout", time.Duration(0)},
		{"ErrTailChars", func(c *config.Config) { c.Inherit.TailChars = -1 }, "inherit.tail_chars", -1},
		{"OKCrossScopeNone", func(c *config.Config) { c.Inherit.CrossScope = nil }, "", nil},
		{"ErrCrossScope", func(c *config.Config) { c.Inherit.CrossScope = []string{"main", " "} }, "inherit.cross_scope", " "},
		{"OKSpawnNoLimits", func(c *config.Config) { c.Spawn = config.Spawn{Mode: "observe"} }, "", nil},
		{"ErrSpawnMaxDepth", func(c *config.Config) { c.Spawn.MaxDepth = -1 }, "spawn.max_depth", -1},
		{"ErrSpawnMaxChildren", func(c *config.Config) { c.Spawn.MaxChildren = -2 }, "spawn.max_children", -2},
		{"ErrSpawnMode", func(c *config.Config) { c.Spawn.Mode = "warn" }, "spawn.mode", "warn"},
		{"ErrWatchdogTimeout", func(c *config.Config) { c.Runs.WatchdogTimeout = 0 }, "runs.watchdog_timeout", time.Duration(0)},
		{"ErrGhostGrace", func(c *config.Config) { c.Runs.GhostGrace = -time.Minute }, "runs.ghost_grace", -time.Minute},
		{"ErrResultRetention", func(c *config.Config) { c.Runs.ResultRetention = 0 }, "runs.result_retention", time.Duration(0)},
		{"ErrMaxResultTokens", func(c *config.Config) { c.Runs.MaxResultTokens = 0 }, "runs.max_result_tokens", 0},
		{"OKCondense", func(c *config.Config) {
			c.Condense = config.Condense{URL: "http://127.0.0.1:11434/v1", Model: "m", Token: "t", Timeout: time.Second}
		}, "", nil},
		{"ErrCondenseURL", func(c *config.Config) { c.Condense.URL, c.Condense.Model = "127.0.0.1:11434", "m" }, "condense.url", "127.0.0.1:11434"},
		{"ErrCondenseModel", func(c *config.Config) { c.Condense.URL = "http://127.0.0.1:11434/v1" }, "condense.model", nil},
		{"ErrCondenseTimeout", func(c *config.Config) { c.Condense.Timeout = 0 }, "condense.timeout", time.Duration(0)},
		{"ErrCondenseToken", func(c *config.Config) { c.Condense.Token = "a b" }, "condense.token", nil},
		{"OKKeepNone", func(c *config.Config) { c.Checkpoints.Keep = 0 }, "", nil},
		{"ErrEveryPrompts", func(c *config.Config) { c.Checkpoints.EveryPrompts = 0 }, "checkpoints.every_prompts", 0},
		{"ErrEvery", func(c *config.Config) { c.Checkpoints.Every = 0 }, "checkpoints.every", time.Duration(0)},
		{"ErrRetention", func(c *config.Config) { c.Checkpoints.Retention = -time.Hour }, "checkpoints.retention", -time.Hour},
		{"ErrKeep", func(c *config.Config) { c.Checkpoints.Keep = -1 }, "checkpoints.keep", -1},
		{"ErrRecoveryWindow", func(c *config.Config) { c.Recovery.Window = 0 }, "recovery.window", time.Duration(0)},
		{"ErrMaxContextLow", func(c *config.Config) { c.Adapters.ClaudeCode.MaxContextChars = 499 }, "adapters.claude_code.max_context_chars", 499},
		{"ErrMaxContextHigh", func(c *config.Config) { c.Adapters.ClaudeCode.MaxContextChars = 10001 }, "adapters.claude_code.max_context_chars", 10001},
		{"ErrNoRoots", func(c *config.Config) { c.Adapters.ClaudeCode.TranscriptRoots = nil }, "adapters.claude_code.transcript_roots", nil},
		{"ErrRelativeRoot", func(c *config.Config) { c.Adapters.ClaudeCode.TranscriptRoots = []string{"/a", "b"} }, "adapters.claude_code.transcript_roots", "b"},
		{"ErrMaxReadBytes", func(c *config.Config) { c.Adapters.ClaudeCode.MaxReadBytes = -1 }, "adapters.claude_code.max_read_bytes", int64(-1)},
		{"ErrHookReadBytes", func(c *config.Config) { c.Adapters.ClaudeCode.HookReadBytes = 0 }, "adapters.claude_code.hook_read_bytes", int64(0)},
		{"ErrMaxReadBelowHookRead", func(c *config.Config) { c.Adapters.ClaudeCode.MaxReadBytes = 1 << 10 }, "adapters.claude_code.max_read_bytes", int64(1 << 10)},
		{"OKUpstream", func(c *config.Config) {
			c.Adapters.ClaudeCode.Upstream = config.Upstream{URL: "https://mem.example:8443/hook", Timeout: time.Second,
				Headers: map[string]string{"X-Api-Key": "a=b"}, Token: "t"}
		}, "", nil},
		{"ErrUpstreamURL", func(c *config.Config) { c.Adapters.ClaudeCode.Upstream.URL = "127.0.0.1:8080" }, "adapters.claude_code.upstream.url", "127.0.0.1:8080"},
		{"ErrUpstreamScheme", func(c *config.Config) { c.Adapters.ClaudeCode.Upstream.URL = "ws://x/hook" }, "adapters.claude_code.upstream.url", "ws://x/hook"},
		{"ErrUpstreamTimeout", func(c *config.Config) { c.Adapters.ClaudeCode.Upstream.Timeout = 0 }, "adapters.claude_code.upstream.timeout", time.Duration(0)},
		{"ErrUpstreamHeaderName", func(c *config.Config) {
			c.Adapters.ClaudeCode.Upstream.Headers = map[string]string{"X Bad": "v"}
		}, "adapters.claude_code.upstream.headers", "X Bad"},
		{"ErrUpstreamHeaderValue", func(c *config.Config) {
			c.Adapters.ClaudeCode.Upstream.Headers = map[string]string{"X-Ok": "a\r\nX-Injected: 1"}
		}, "adapters.claude_code.upstream.headers", "X-Ok"},
		{"ErrUpstreamToken", func(c *config.Config) { c.Adapters.ClaudeCode.Upstream.Token = "a\nb" }, "adapters.claude_code.upstream.token", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Default("/home/u", "")
			tt.modify(&c)
			err := c.Validate()
			if tt.key == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *config.Error", err)
			}
			if ce.Key != tt.key {
				t.Errorf("got key %q, want %q", ce.Key, tt.key)
			}
			if ce.Value != tt.value {
				t.Errorf("got value %#v, want %#v", ce.Value, tt.value)
			}
			if ce.Source != "" {
				t.Errorf("got source %q, want none", ce.Source)
			}
		})
	}
}

func TestConfig_Validate_All(t *testing.T) {
	var c config.Config
	if got, want := len(configErrors(c.Validate())), 23; got != want {
		t.Errorf("zero Config: got %d errors, want %d (one per field whose zero value is invalid)", got, want)
	}
}
