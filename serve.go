package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mattn/go-isatty"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/adapters/codex"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
	"github.com/heirloom-dev/heirloom/condense"
	"github.com/heirloom-dev/heirloom/config"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/inject"
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
	Stdout io.Writer // -h's usage; nil: Stderr
	Stderr io.Writer
}

// Run loads the config, starts the sidecar and serves until ctx ends.
func (c *ServeCommand) Run(ctx context.Context, args []string) error {
	loaded, err := loadConfig("serve", args, c.Env, cmp.Or[io.Writer](c.Stdout, c.Stderr), c.Stderr)
	if err != nil {
		return err
	}
	m := NewMain(loaded.Config, c.Stderr)
	m.Getenv = func(key string) string { return lookup(c.Env, key, "") }
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

// Main holds the running sidecar: config, logger, metrics registry, store, engine, server and
// the stream clients, opened in that order and closed in reverse.
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
	// Streams follow the endpoints the config names for the streaming harnesses (each OpenCode
	// server, the OpenClaw Gateway) into Engine, each client built by its harness's
	// Registration.Stream.
	Streams []proxy.NamedStream
	// Getenv reads the environment the stream clients take a secret from when the config gives
	// none (OPENCODE_SERVER_PASSWORD, OPENCLAW_GATEWAY_TOKEN). Nil reads nothing.
	Getenv func(key string) string
}

// harnesses is every harness heirloom knows: one line each.
func harnesses() *adapters.Registry {
	reg, err := adapters.NewRegistry(
		claudecode.Registration(),
		opencode.Registration(),
		openclaw.Registration(),
		codex.Registration(),
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
	c.TranscriptRoots = append(slices.Clip(cfg.Adapters.ClaudeCode.TranscriptRoots), cfg.Adapters.Codex.TranscriptRoots...)
	c.HookReadBytes = cfg.Adapters.ClaudeCode.HookReadBytes
	c.MaxReadBytes = cfg.Adapters.ClaudeCode.MaxReadBytes
	c.MaxContextChars = cfg.Adapters.ClaudeCode.MaxContextChars
	// inherit.enabled false is passive mode: heirloom records but adds no block at all.
	c.Passive = !cfg.Inherit.Enabled
	c.TailChars = cfg.Inherit.TailChars
	c.RelevantPassages = cfg.Inherit.RelevantPassages
	c.CrossScope = cfg.Inherit.CrossScope
	c.Spawn = engine.SpawnLimits{MaxDepth: cfg.Spawn.MaxDepth, MaxChildren: cfg.Spawn.MaxChildren, Mode: cfg.Spawn.Mode}
	c.DescribeWait = cfg.Adapters.OpenClaw.DescribeWait
	c.Checkpoints.EveryPrompts = cfg.Checkpoints.EveryPrompts
	c.Checkpoints.Every = cfg.Checkpoints.Every
	c.Checkpoints.Retention = cfg.Checkpoints.Retention
	c.Checkpoints.Keep = cfg.Checkpoints.Keep
	c.Checkpoints.RecoveryWindow = cfg.Recovery.Window
	c.Runs = engine.Runs{
		WatchdogTimeout: cfg.Runs.WatchdogTimeout, GhostGrace: cfg.Runs.GhostGrace,
		ResultRetention: cfg.Runs.ResultRetention, MaxResultTokens: cfg.Runs.MaxResultTokens,
		CondenseTimeout: cfg.Condense.Timeout,
	}
	return c
}

// condenser builds the level-2 condenser cfg configures; nil (no level 2) when condense.url is
// empty.
func condenser(cfg config.Condense) engine.Condenser {
	if cfg.URL == "" {
		return nil
	}
	return &condense.Client{URL: cfg.URL, Model: cfg.Model, Token: cfg.Token, Timeout: cfg.Timeout}
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
	m.Store.Ledger = inject.Ledger{}
	storeLog := m.Logger.Named("store")
	m.Store.Logf = func(format string, args ...any) { storeLog.Warn(fmt.Sprintf(format, args...)) }
	if err := m.Store.Open(); err != nil {
		m.Store = nil
		return fmt.Errorf("open data dir %s: %w", cfg.DataDir, err)
	}
	eng := engine.New(m.Store, cfg.Scope)
	eng.Harnesses = m.Harnesses
	eng.Logger = m.Logger.Named("engine")
	eng.Config = engineConfig(cfg)
	eng.Condenser = condenser(cfg.Condense)
	if m.Streams, eng.Describers, err = m.buildStreams(streamTargets(cfg), eng); err != nil {
		return err
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
	srv.Streams = m.Streams
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
	for _, s := range m.Streams {
		if err := s.Stream.Open(ctx); err != nil {
			return fmt.Errorf("follow %s at %s: %w", s.Harness, s.Target, err)
		}
	}
	m.Logger.Info("serving", "url", srv.URL(), "data_dir", cfg.DataDir, "scope", cfg.Scope, "streams", len(m.Streams))
	return nil
}

// streamTargets copies the endpoints cfg names for the streaming harnesses, by harness name:
// each harness's own config section, read here as engineConfig reads the engine's.
func streamTargets(cfg config.Config) map[string][]adapters.StreamTarget {
	targets := map[string][]adapters.StreamTarget{}
	for _, oc := range cfg.Adapters.OpenCode.Servers {
		targets[opencode.Harness] = append(targets[opencode.Harness], adapters.StreamTarget{URL: oc.URL, Secret: oc.Password, Directory: oc.Directory})
	}
	if gw := cfg.Adapters.OpenClaw; gw.URL != "" {
		targets[openclaw.Harness] = []adapters.StreamTarget{{URL: gw.URL, Secret: gw.Token}}
	}
	return targets
}

// buildStreams builds a client for every target with its harness's Registration.Stream, in
// the registry's order, each logging as its harness with its target and handing its events to
// sink. The first client of a harness that is also an adapters.Describer answers the engine
// for that harness. A target of a harness that has no stream client is an error.
func (m *Main) buildStreams(targets map[string][]adapters.StreamTarget, sink adapters.Sink) ([]proxy.NamedStream, map[string]adapters.Describer, error) {
	var streams []proxy.NamedStream
	describers := map[string]adapters.Describer{}
	for _, reg := range m.Harnesses.All() {
		if reg.Stream == nil {
			continue
		}
		for _, t := range targets[reg.Name] {
			s := reg.Stream(t, adapters.StreamOptions{Sink: sink, Logger: m.Logger.Named(reg.Name).With("target", t.URL), Version: version(), Getenv: m.Getenv})
			streams = append(streams, proxy.NamedStream{Harness: reg.Name, Target: t.URL, Stream: s})
			if d, ok := s.(adapters.Describer); ok && describers[reg.Name] == nil {
				describers[reg.Name] = d
			}
		}
	}
	for name := range targets {
		if reg, ok := m.Harnesses.Get(name); !ok || reg.Stream == nil {
			return nil, nil, fmt.Errorf("harness %q: endpoints to follow, but no stream client registered", name)
		}
	}
	return streams, describers, nil
}

// Close stops following the streaming harnesses, stops the server (in-flight requests get until
// ctx ends), waits for the engine's background work and then closes the store.
func (m *Main) Close(ctx context.Context) error {
	var errs []error
	for _, s := range m.Streams {
		errs = append(errs, s.Stream.Close())
	}
	m.Streams = nil
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
func loadConfig(name string, args, env []string, stdout, stderr io.Writer) (*config.Loaded, error) {
	fs := flag.NewFlagSet("heirloom "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: heirloom %s [flags]\n\nFlags:\n", name)
		fs.PrintDefaults()
	}
	configPath := fs.String("config", "", "config file (default ~/.config/heirloom/config.yaml; env HEIRLOOM_CONFIG)")
	fs.String("listen", "", "address to listen on (default 127.0.0.1:7433; env HEIRLOOM_LISTEN)")
	fs.String("data-dir", "", "data directory (default $XDG_DATA_HOME/heirloom or ~/.local/share/heirloom; env HEIRLOOM_DATA_DIR)")
	fs.String("log-level", "", "trace, debug, info, warn or error (default info)")
	fs.String("log-format", "", "auto (text on a terminal, JSON otherwise), text or json (default auto)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return nil, err
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
