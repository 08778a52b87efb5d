package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mattn/go-isatty"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
	"github.com/heirloom-dev/heirloom/config"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
	"github.com/heirloom-dev/heirloom/search"
)

// errUsage reports a command-line mistake whose message the flag package already printed;
// errHelp, that -h printed the help asked for.
var (
	errUsage = errors.New("usage")
	errHelp  = errors.New("help")
)

// ServeCommand is `heirloom serve`.
type ServeCommand struct {
	Env    []string
	Stderr io.Writer
}

// Run loads the config, starts the sidecar and serves until ctx ends.
func (c *ServeCommand) Run(ctx context.Context, args []string) error {
	loaded, err := loadConfig("serve", args, c.Env, c.Stderr)
	if err != nil {
		return err
	}
	m := NewMain(loaded.Config, c.Stderr)
	m.OpenCodePassword = lookup(c.Env, "OPENCODE_SERVER_PASSWORD", "")
	m.OpenClawToken = lookup(c.Env, "OPENCLAW_GATEWAY_TOKEN", "")
	if err := m.Run(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	m.Logger.Info("shutting down")
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loaded.Config.Server.ShutdownTimeout)
	defer cancel()
	return m.Close(closeCtx)
}

// The stream clients log through main's hclog logger, which adapters never import.
var _ adapters.Logger = hclog.Logger(nil)

// Main holds the running sidecar: config, logger, metrics registry, store, engine and server,
// opened in that order and closed in reverse.
type Main struct {
	Config config.Config
	Logger hclog.Logger
	// Registry holds every metric, served at GET /metrics: the server's, Go's runtime and the
	// process's.
	Registry *prometheus.Registry
	// Harnesses are the harnesses heirloom knows; the routes and the engine follow from them.
	Harnesses *adapters.Registry
	Store     *kv.Store
	Engine    *engine.Engine
	Server    *proxy.Server
	// OpenCode follows each configured OpenCode server's event stream into Engine.
	OpenCode []*opencode.Client
	// OpenCodePassword is used for OpenCode servers configured without a password
	// (OPENCODE_SERVER_PASSWORD).
	OpenCodePassword string
	// OpenClaw follows the configured OpenClaw Gateway into Engine; nil when none is configured.
	OpenClaw *openclaw.Client
	// OpenClawToken is used when the Gateway is configured without a token
	// (OPENCLAW_GATEWAY_TOKEN).
	OpenClawToken string
}

// harnesses is every harness heirloom knows: one line each.
func harnesses() *adapters.Registry {
	reg, err := adapters.NewRegistry(
		claudecode.Registration(),
		opencode.Registration(),
		openclaw.Registration(),
	)
	if err != nil {
		panic(err) // the list above is fixed: a mistake in it fails every test
	}
	return reg
}

// NewMain builds the sidecar from cfg, logging to logOut.
func NewMain(cfg config.Config, logOut io.Writer) *Main {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Main{Config: cfg, Logger: newLogger(cfg.Log, logOut), Registry: reg, Harnesses: harnesses()}
}

// engineConfig copies the engine's settings out of cfg.
func engineConfig(cfg config.Config) engine.Config {
	c := engine.DefaultConfig()
	c.TranscriptRoots = cfg.Adapters.ClaudeCode.TranscriptRoots
	c.HookReadBytes = cfg.Adapters.ClaudeCode.HookReadBytes
	c.MaxReadBytes = cfg.Adapters.ClaudeCode.MaxReadBytes
	c.MaxContextChars = cfg.Adapters.ClaudeCode.MaxContextChars
	// inherit.enabled false is passive mode: heirloom records but adds no block at all.
	c.Passive = !cfg.Inherit.Enabled
	c.TailChars = cfg.Inherit.TailChars
	c.MaxSpawnDepth = cfg.Spawn.MaxDepth
	c.DescribeWait = cfg.Adapters.OpenClaw.DescribeWait
	c.Checkpoints.EveryPrompts = cfg.Checkpoints.EveryPrompts
	c.Checkpoints.Every = cfg.Checkpoints.Every
	c.Checkpoints.Retention = cfg.Checkpoints.Retention
	c.Checkpoints.Keep = cfg.Checkpoints.Keep
	c.Checkpoints.RecoveryWindow = cfg.Recovery.Window
	return c
}

// Run opens the store, the engine and the server, then starts following the streaming
// harnesses; it returns once the server is listening.
func (m *Main) Run(ctx context.Context) (err error) {
	cfg := m.Config
	defer func() {
		if err != nil {
			closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Server.ShutdownTimeout)
			defer cancel()
			err = errors.Join(err, m.Close(closeCtx))
		}
	}()
	m.Store = kv.NewStore(cfg.DataDir)
	m.Store.Index = search.Analyzer{}
	if err := m.Store.Open(); err != nil {
		m.Store = nil
		return fmt.Errorf("open data dir %s: %w", cfg.DataDir, err)
	}
	eng := engine.New(m.Store, cfg.Scope)
	eng.Harnesses = m.Harnesses
	eng.Logger = m.Logger.Named("engine")
	eng.Config = engineConfig(cfg)
	if gw := cfg.Adapters.OpenClaw; gw.URL != "" {
		client := openclaw.NewClient(gw.URL, eng)
		client.Token, client.Version = gw.Token, version()
		if client.Token == "" {
			client.Token = m.OpenClawToken
		}
		client.Logger = m.Logger.Named("openclaw").With("gateway", gw.URL)
		m.OpenClaw = client
		eng.Describers = map[string]adapters.Describer{openclaw.Harness: client}
	}
	if err := eng.Open(ctx); err != nil {
		return err
	}
	m.Engine = eng

	srv := proxy.NewServer()
	srv.Addr = cfg.Listen
	srv.Logger = m.Logger
	srv.Engine = eng
	srv.Harnesses = m.Harnesses
	srv.Token = cfg.Token
	srv.Version = version()
	srv.MaxBodyBytes = cfg.Server.MaxBodyBytes
	srv.HookTimeout = cfg.Server.HookTimeout
	srv.Registry = m.Registry
	for _, oc := range cfg.Adapters.OpenCode.Servers {
		client := opencode.NewClient(oc.URL, eng)
		client.Password, client.Directory = oc.Password, oc.Directory
		if client.Password == "" {
			client.Password = m.OpenCodePassword
		}
		client.Logger = m.Logger.Named("opencode").With("server", oc.URL)
		m.OpenCode = append(m.OpenCode, client)
		srv.Streams = append(srv.Streams, proxy.NamedStream{Harness: opencode.Harness, Target: oc.URL, Stream: client})
	}
	if m.OpenClaw != nil {
		srv.Streams = append(srv.Streams, proxy.NamedStream{Harness: openclaw.Harness, Target: cfg.Adapters.OpenClaw.URL, Stream: m.OpenClaw})
	}
	if up := cfg.Adapters.ClaudeCode.Upstream; up.URL != "" {
		u := &proxy.Upstream{URL: up.URL, Timeout: up.Timeout, Token: up.Token, Header: http.Header{}}
		for name, value := range up.Headers {
			u.Header.Set(name, value)
		}
		srv.Upstreams = map[string]*proxy.Upstream{claudecode.Harness: u}
	}
	if err := srv.Open(); err != nil {
		return err
	}
	m.Server = srv
	for _, c := range m.OpenCode {
		if err := c.Open(ctx); err != nil {
			return fmt.Errorf("follow OpenCode server %s: %w", c.URL, err)
		}
	}
	if m.OpenClaw != nil {
		if err := m.OpenClaw.Open(ctx); err != nil {
			return fmt.Errorf("follow OpenClaw Gateway %s: %w", cfg.Adapters.OpenClaw.URL, err)
		}
	}
	m.Logger.Info("serving", "url", srv.URL(), "data_dir", cfg.DataDir, "scope", cfg.Scope, "opencode_servers", len(m.OpenCode), "openclaw_gateway", cfg.Adapters.OpenClaw.URL)
	return nil
}

// Close stops following OpenCode and OpenClaw, stops the server (in-flight requests get until
// ctx ends), waits for the engine's background work and then closes the store.
func (m *Main) Close(ctx context.Context) error {
	var errs []error
	for _, c := range m.OpenCode {
		errs = append(errs, c.Close())
	}
	m.OpenCode = nil
	if m.OpenClaw != nil {
		errs = append(errs, m.OpenClaw.Close())
		m.OpenClaw = nil
	}
	if m.Server != nil {
		errs = append(errs, m.Server.Close(ctx))
	}
	if m.Engine != nil {
		errs = append(errs, m.Engine.Close(ctx))
	}
	if m.Store != nil {
		errs = append(errs, m.Store.Close())
	}
	return errors.Join(errs...)
}

// newLogger builds the one logger: text on a terminal, JSON otherwise, unless format says.
func newLogger(cfg config.Log, out io.Writer) hclog.Logger {
	jsonFormat := cfg.Format == "json"
	if cfg.Format == "auto" {
		f, ok := out.(*os.File)
		jsonFormat = !ok || !isatty.IsTerminal(f.Fd())
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:       "heirloom",
		Level:      hclog.LevelFromString(cfg.Level),
		JSONFormat: jsonFormat,
		Output:     out,
		TimeFormat: time.RFC3339Nano,
	})
}

// loadConfig parses the flags shared by serve and config show and loads the config.
func loadConfig(name string, args, env []string, stderr io.Writer) (*config.Loaded, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "config file (default ~/.config/heirloom/config.yaml; env HEIRLOOM_CONFIG)")
	fs.String("listen", "", "address to listen on (default 127.0.0.1:7433; env HEIRLOOM_LISTEN)")
	fs.String("data-dir", "", "data directory (default $XDG_DATA_HOME/heirloom or ~/.local/share/heirloom; env HEIRLOOM_DATA_DIR)")
	fs.String("log-level", "", "trace, debug, info, warn or error (default info)")
	fs.String("log-format", "", "auto (text on a terminal, JSON otherwise), text or json (default auto)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "heirloom %s: unexpected argument %q\n", name, fs.Arg(0))
		return nil, errUsage
	}
	keys := map[string]string{}
	for _, key := range []string{"listen", "data_dir", "log.level", "log.format"} {
		keys[config.FlagName(key)] = key
	}
	flags := map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		if key, ok := keys[f.Name]; ok {
			flags[key] = f.Value.String()
		}
	})
	home, _ := os.UserHomeDir()
	in := config.Input{Home: home, Env: env, Flags: flags}
	switch {
	case *configPath != "":
		in.ConfigPath, in.ConfigRequired = *configPath, true
	case lookup(env, "HEIRLOOM_CONFIG", "") != "":
		in.ConfigPath, in.ConfigRequired = lookup(env, "HEIRLOOM_CONFIG", ""), true
	default:
		base := lookup(env, "XDG_CONFIG_HOME", filepath.Join(home, ".config"))
		in.ConfigPath = filepath.Join(base, "heirloom", "config.yaml")
	}
	return config.Load(in)
}
