package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
	"github.com/heirloom-dev/heirloom/condense"
	"github.com/heirloom-dev/heirloom/config"
)

// TestServe_PassiveMode: inherit.enabled false is passive mode for every block, not only the
// inherited one: the engine is told to add no reinforcement or recovered block either.
func TestServe_PassiveMode(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		cfg := config.Default(t.TempDir(), "")
		cfg.DataDir, cfg.Listen, cfg.Inherit.Enabled = filepath.Join(t.TempDir(), "data"), "127.0.0.1:0", enabled
		m := NewMain(cfg, io.Discard)
		if err := m.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := m.Engine.Config.Passive; got != !enabled {
			t.Errorf("inherit.enabled %v: got engine Passive %v", enabled, got)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := m.Close(ctx); err != nil {
			t.Error(err)
		}
		cancel()
	}
}

// TestServe_Streams: every endpoint the config names for a streaming harness gets the client
// its registration builds, in the registry's order, with the config's secret or else the one
// in heirloom's environment; the Gateway's client answers the engine's questions.
func TestServe_Streams(t *testing.T) {
	cfg := config.Default(t.TempDir(), "")
	cfg.DataDir, cfg.Listen = filepath.Join(t.TempDir(), "data"), "127.0.0.1:0"
	cfg.Adapters.OpenClaw.URL = "ws://127.0.0.1:1"
	cfg.Adapters.OpenCode.Servers = []config.OpenCodeServer{
		{URL: "http://127.0.0.1:1", Password: "configured", Directory: "/work/app"},
		{URL: "http://127.0.0.1:2"},
	}
	env := map[string]string{opencode.PasswordEnv: "from-env", openclaw.TokenEnv: "gw-from-env"}
	m := NewMain(cfg, io.Discard)
	m.Getenv = func(key string) string { return env[key] }
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	var got []string
	for _, s := range m.Streams {
		switch c := s.Stream.(type) {
		case *opencode.Client:
			got = append(got, fmt.Sprintf("%s %s %s %s %s", s.Harness, s.Target, c.URL, c.Password, c.Directory))
		case *openclaw.Client:
			got = append(got, fmt.Sprintf("%s %s %s %s %s", s.Harness, s.Target, c.URL, c.Token, c.Version))
		default:
			t.Errorf("%s: a stream of type %T", s.Harness, s.Stream)
		}
	}
	want := []string{
		"opencode http://127.0.0.1:1 http://127.0.0.1:1 configured /work/app",
		"opencode http://127.0.0.1:2 http://127.0.0.1:2 from-env ",
		"openclaw ws://127.0.0.1:1 ws://127.0.0.1:1 gw-from-env " + version(),
	}
	if !slices.Equal(got, want) {
		t.Errorf("streams:\ngot  %q\nwant %q", got, want)
	}
	if gw, _ := m.Streams[len(m.Streams)-1].Stream.(adapters.Describer); m.Engine.Describers[openclaw.Harness] != gw || gw == nil {
		t.Errorf("engine describers: got %v, want the Gateway's client", m.Engine.Describers)
	}
	if oc, _ := m.Streams[0].Stream.(adapters.Describer); m.Engine.Describers[opencode.Harness] == nil || m.Engine.Describers[opencode.Harness] != oc {
		t.Errorf("engine describers: got %v for OpenCode, want its first client", m.Engine.Describers[opencode.Harness])
	}
}

// TestServe_Runs: the runs.* and condense.* keys reach the engine, and a condenser is built only
// when condense.url is set.
func TestServe_Runs(t *testing.T) {
	cfg := config.Default(t.TempDir(), "")
	cfg.Runs = config.Runs{WatchdogTimeout: time.Hour, GhostGrace: time.Minute, ResultRetention: 2 * time.Hour, MaxResultTokens: 100}
	cfg.Condense.Timeout = 3 * time.Second
	c := engineConfig(cfg)
	if r := c.Runs; r.WatchdogTimeout != time.Hour || r.GhostGrace != time.Minute || r.ResultRetention != 2*time.Hour || r.MaxResultTokens != 100 || r.CondenseTimeout != 3*time.Second {
		t.Errorf("engine runs config: %+v", r)
	}
	if got := condenser(cfg.Condense); got != nil {
		t.Errorf("no condense.url: got condenser %#v, want none", got)
	}
	cfg.Condense.URL, cfg.Condense.Model = "http://127.0.0.1:11434/v1", "m"
	if got, ok := condenser(cfg.Condense).(*condense.Client); !ok || got.URL != cfg.Condense.URL || got.Model != "m" || got.Timeout != 3*time.Second {
		t.Errorf("condenser: got %#v", got)
	}
}

// TestKnownHarnesses: every harness serve registers is one the API's harness filter takes.
func TestKnownHarnesses(t *testing.T) {
	for _, h := range harnesses().All() {
		if !slices.Contains(adapters.KnownHarnesses, h.Name) {
			t.Errorf("harness %q is registered but not in adapters.KnownHarnesses: a filter on it would be refused", h.Name)
		}
	}
}

// TestListenURL: a client reaches a wildcard listen address on loopback.
func TestListenURL(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:7433": "http://127.0.0.1:7433", "0.0.0.0:9000": "http://127.0.0.1:9000", ":8000": "http://127.0.0.1:8000",
		"[::]:7433": "http://[::1]:7433", "[::1]:7433": "http://[::1]:7433", "not an address": adapters.DefaultSidecarURL,
	} {
		if got := listenURL(addr); got != want {
			t.Errorf("listenURL(%q) = %q, want %q", addr, got, want)
		}
	}
}

// TestVerifiedVersions: the versions doctor calls verified are the ones the live tests pin.
func TestVerifiedVersions(t *testing.T) {
	pins := map[string]string{}
	for _, f := range []string{"e2e/npm/package.json", "e2e/npm/openclaw/package.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var p struct{ Dependencies map[string]string }
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		maps.Copy(pins, p.Dependencies)
	}
	for pkg, verified := range map[string][]string{
		"@anthropic-ai/claude-code": claudecode.VerifiedVersions, "opencode-ai": opencode.VerifiedVersions, "openclaw": openclaw.VerifiedVersions,
	} {
		if !slices.Contains(verified, pins[pkg]) {
			t.Errorf("%s is pinned at %q for the live tests, but doctor calls %v verified", pkg, pins[pkg], verified)
		}
	}
}
