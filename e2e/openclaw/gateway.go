package openclaw

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/internal/proc"
)

// Gateway is one OpenClaw Gateway with its private state. New prepares it
// (directories and config), Start runs `openclaw gateway run`; it is killed
// when the test ends, or earlier by Close or Kill.
type Gateway struct {
	// Home is the private HOME; StateDir ($HOME/.openclaw) is
	// OPENCLAW_STATE_DIR and ConfigPath (StateDir/openclaw.json)
	// OPENCLAW_CONFIG_PATH; Workspace is the agent workspace.
	Home, StateDir, ConfigPath, Workspace string
	// Token is the shared Gateway token (gateway.auth.token).
	Token string
	// Started is how long the last start took, from exec to /readyz
	// answering 200.
	Started time.Duration

	bin      Binary
	env      map[string]string
	identity *Identity
	opts     Options

	srv proc.Server
}

// New prepares a Gateway without starting it: it finds the binaries (Bin:
// skipping tb when they are absent), makes the private directories, and
// writes the config (see Config; unless opts.Home already holds one). Run an
// installer against its state now (with Environ), then Start it.
func New(tb testing.TB, opts Options) *Gateway {
	tb.Helper()
	bin := Bin(tb)
	proxy, err := proc.ProxyFor(opts.ProviderURL)
	if err != nil {
		tb.Fatalf("openclaw.New: %v", err)
	}
	g := &Gateway{Home: opts.Home, Token: opts.Token, bin: bin, opts: opts}
	if g.Home == "" {
		g.Home = tb.TempDir()
	}
	if g.Token == "" {
		g.Token = randomHex(16)
	}
	g.StateDir = filepath.Join(g.Home, ".openclaw")
	g.ConfigPath = filepath.Join(g.StateDir, "openclaw.json")
	g.Workspace = filepath.Join(g.StateDir, "workspace") // OpenClaw's default place
	tmp := filepath.Join(g.Home, "tmp")
	for _, dir := range []string{g.StateDir, g.Workspace, tmp, filepath.Dir(g.LogFile())} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			tb.Fatalf("openclaw.New: %v", err)
		}
	}
	g.env = Env(g.Home, tmp, g.StateDir, g.ConfigPath, proxy, bin.Node)
	proc.Override(g.env, opts.Env)
	if g.identity, err = NewIdentity(); err != nil {
		tb.Fatal(err)
	}
	switch old, err := os.ReadFile(g.ConfigPath); {
	case errors.Is(err, os.ErrNotExist):
		// Private: the config holds the Gateway token.
		if err := proc.WriteJSON(g.ConfigPath, g.config(), 0o600); err != nil {
			tb.Fatal(err)
		}
	case err != nil:
		tb.Fatalf("openclaw.New: %v", err)
	case opts.Token == "":
		// A restart on the same state: keep the token the config holds.
		var cfg struct {
			Gateway struct {
				Auth struct {
					Token string `json:"token"`
				} `json:"auth"`
			} `json:"gateway"`
		}
		if err := json.Unmarshal(old, &cfg); err != nil || cfg.Gateway.Auth.Token == "" {
			tb.Fatalf("openclaw.New: no gateway.auth.token in %s (%v)", g.ConfigPath, err)
		}
		g.Token = cfg.Gateway.Auth.Token
	}
	return g
}

// config returns the config New writes.
func (g *Gateway) config() map[string]any {
	cfg := Config(g.opts.ProviderURL, g.Token, g.Workspace, nil)
	// OpenClaw logs to /tmp/openclaw/openclaw-DATE.log, shared by every
	// Gateway on the machine, unless told otherwise.
	cfg = merge(cfg, map[string]any{"logging": map[string]any{"file": g.LogFile()}})
	cfg = merge(cfg, g.opts.Config)
	if len(g.opts.PluginPaths) > 0 || len(g.opts.Plugins) > 0 {
		plugins := map[string]any{}
		if len(g.opts.PluginPaths) > 0 {
			plugins["load"] = map[string]any{"paths": g.opts.PluginPaths}
		}
		if len(g.opts.Plugins) > 0 {
			plugins["entries"] = g.opts.Plugins
		}
		cfg = merge(cfg, map[string]any{"plugins": plugins})
	}
	return cfg
}

// Run is New and Start.
func Run(tb testing.TB, ctx context.Context, opts Options) *Gateway {
	tb.Helper()
	g := New(tb, opts)
	g.Start(tb, ctx)
	return g
}

// Environ returns the Gateway's environment as KEY=VALUE pairs: for an
// installer (heirloom install openclaw honours OPENCLAW_CONFIG_PATH and
// OPENCLAW_STATE_DIR) or any other command that must see the same state.
func (g *Gateway) Environ() []string { return proc.Environ(g.env) }

// Binary returns the OpenClaw entry point and node the Gateway runs with.
func (g *Gateway) Binary() Binary { return g.bin }

// CLI runs `openclaw args...` against the Gateway's state and environment and
// returns its combined output. Each run starts a node process: about a
// second.
func (g *Gateway) CLI(ctx context.Context, args ...string) ([]byte, error) {
	cmd := g.bin.Command(ctx, args...)
	cmd.Env = g.Environ()
	cmd.Dir = g.Workspace
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("openclaw %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// Start runs `openclaw gateway run --port P` and returns once GET /readyz
// answers 200: startup finished and the agent database admitted. It fails tb
// when the Gateway does not come up, with its output; the output is also
// logged when tb has failed by the time the test ends. A start that loses
// its port to another process is retried on a new one, unless Options.Port
// fixed it. Start on a Gateway stopped by Close or Kill restarts it on the
// same state.
func (g *Gateway) Start(tb testing.TB, ctx context.Context) {
	tb.Helper()
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	g.Started = g.srv.Start(tb, ctx, proc.Launch{
		Name:    "openclaw gateway run in " + g.Home,
		Port:    g.opts.Port,
		Timeout: cmp.Or(g.opts.StartTimeout, DefaultStartTimeout),
		Grace:   10 * time.Second,
		Command: func(port int) *exec.Cmd {
			cmd := g.bin.Command(ctx, "gateway", "run", "--port", strconv.Itoa(port))
			cmd.Dir = g.Workspace
			cmd.Env = g.Environ()
			return cmd
		},
		Ready: func(ctx context.Context) error { return g.ready(ctx, client) },
		PortTaken: func(logs string) bool {
			return strings.Contains(logs, "EADDRINUSE") || strings.Contains(logs, "already in use")
		},
	})
}

// ready asks GET /readyz, which answers 200 once startup is done and the
// agent database admitted.
func (g *Gateway) ready(ctx context.Context, client *http.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL()+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /readyz: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// Port returns the port the Gateway listens on (or last listened on).
func (g *Gateway) Port() int { return g.srv.Port() }

// URL returns the Gateway's HTTP root, "http://127.0.0.1:PORT".
func (g *Gateway) URL() string { return g.srv.URL() }

// WSURL returns the Gateway's WebSocket URL, "ws://127.0.0.1:PORT".
func (g *Gateway) WSURL() string { return "ws://127.0.0.1:" + strconv.Itoa(g.Port()) }

// Logs returns the last MiB of the Gateway's output (stdout and stderr; its
// structured log is LogFile).
func (g *Gateway) Logs() string { return g.srv.Logs() }

// LogFile returns the path of OpenClaw's own JSON-lines log
// (logging.file), $HOME/logs/openclaw.log.
func (g *Gateway) LogFile() string { return filepath.Join(g.Home, "logs", "openclaw.log") }

// Connect opens an operator Client (see Dial), retrying while the Gateway
// answers that it is still starting, for at most 30 s. Every Client of a
// Gateway uses the same device identity: it is paired on the first connect.
// The client is closed when the test ends.
func (g *Gateway) Connect(tb testing.TB, ctx context.Context) *Client {
	tb.Helper()
	c, err := g.Dial(ctx)
	if err != nil {
		tb.Fatalf("connect to the openclaw gateway: %v\noutput:\n%s", err, g.Logs())
	}
	tb.Cleanup(c.Close)
	return c
}

// Dial is Connect returning its error, for callers that close the client
// themselves.
func (g *Gateway) Dial(ctx context.Context) (*Client, error) {
	deadline := time.Now().Add(30 * time.Second)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		c, err := Dial(dctx, g.WSURL(), g.Token, g.identity)
		cancel()
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(wait):
		}
	}
}

// Close stops the Gateway: SIGTERM to its process group, then SIGKILL if it
// has not exited within ten seconds. Safe to call twice, and before Start.
func (g *Gateway) Close() { g.srv.Close() }

// Kill kills the Gateway's process group at once, as a crash would, and
// waits for it to exit.
func (g *Gateway) Kill() { g.srv.Kill() }

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
