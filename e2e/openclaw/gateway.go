package openclaw

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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
	// free one picked at the start.
	Port int
}

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

	mu     sync.Mutex
	port   int
	cmd    *exec.Cmd
	out    *tail
	exited chan struct{} // closed once the process has been waited for and its output read
	stopMu sync.Mutex
}

// New prepares a Gateway without starting it: it finds the binaries (Bin:
// skipping tb when they are absent), makes the private directories, and
// writes the config (see Config; unless opts.Home already holds one). Run an
// installer against its state now (with Environ), then Start it.
func New(tb testing.TB, opts Options) *Gateway {
	tb.Helper()
	bin := Bin(tb)
	proxy, err := proxyFor(opts.ProviderURL)
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
	for k, v := range opts.Env {
		if v == "" {
			delete(g.env, k)
		} else {
			g.env[k] = v
		}
	}
	if g.identity, err = NewIdentity(); err != nil {
		tb.Fatal(err)
	}
	switch old, err := os.ReadFile(g.ConfigPath); {
	case errors.Is(err, os.ErrNotExist):
		if err := writeJSON(g.ConfigPath, g.config()); err != nil {
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
func (g *Gateway) Environ() []string { return environ(g.env) }

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
	timeout := g.opts.StartTimeout
	if timeout == 0 {
		timeout = DefaultStartTimeout
	}
	start := time.Now()
	deadline := start.Add(timeout)
	for attempt := 1; ; attempt++ {
		err := g.start(ctx, deadline)
		if err == nil {
			break
		}
		var lost *portLostError
		if errors.As(err, &lost) && g.opts.Port == 0 && attempt < 3 {
			tb.Logf("openclaw gateway: %v; retrying on another port", err)
			continue
		}
		tb.Fatalf("openclaw gateway run in %s: %v\noutput:\n%s", g.Home, err, g.Logs())
	}
	tb.Cleanup(func() {
		g.Close()
		if tb.Failed() {
			tb.Logf("openclaw gateway output (port %d):\n%s", g.Port(), g.Logs())
		}
	})
	g.Started = time.Since(start)
	tb.Logf("openclaw gateway on %s ready in %v", g.URL(), g.Started.Round(time.Millisecond))
}

// portLostError reports a start that failed because the port was taken.
type portLostError struct{ port int }

func (e *portLostError) Error() string { return fmt.Sprintf("port %d already in use", e.port) }

// start runs the process on a port and waits for readiness. On failure the
// process has exited or been killed.
func (g *Gateway) start(ctx context.Context, deadline time.Time) error {
	port := g.opts.Port
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return err
		}
	}
	out, exited := newTail(1<<20), make(chan struct{})
	cmd := g.bin.Command(ctx, "gateway", "run", "--port", strconv.Itoa(port))
	cmd.Dir = g.Workspace
	cmd.Env = g.Environ()
	startGroup(cmd)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	g.mu.Lock()
	g.port, g.cmd, g.out, g.exited = port, cmd, out, exited
	g.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", g.bin.OpenClaw, err)
	}
	go func() {
		_ = cmd.Wait()
		pw.Close() // ends the reader below, which then closes exited
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			out.WriteLine(sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr) // an over-long line: keep draining
		close(exited)
	}()
	if err := g.waitReady(ctx, deadline); err != nil {
		g.stop()
		if text := out.String(); strings.Contains(text, "EADDRINUSE") || strings.Contains(text, "already in use") {
			return &portLostError{port: port}
		}
		return err
	}
	return nil
}

// waitReady polls GET /readyz until it answers 200 or deadline passes.
func (g *Gateway) waitReady(ctx context.Context, deadline time.Time) error {
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	g.mu.Lock()
	exited, cmd := g.exited, g.cmd
	g.mu.Unlock()
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL()+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /readyz: %s: %s", resp.Status, strings.TrimSpace(string(body)))
		}
		last = err
		select {
		case <-exited:
			return fmt.Errorf("exited while starting (%v); last: %v", cmd.ProcessState, last)
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready before the start timeout: %v", last)
		}
	}
}

// Port returns the port the Gateway listens on (or last listened on).
func (g *Gateway) Port() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.port
}

// URL returns the Gateway's HTTP root, "http://127.0.0.1:PORT".
func (g *Gateway) URL() string { return "http://127.0.0.1:" + strconv.Itoa(g.Port()) }

// WSURL returns the Gateway's WebSocket URL, "ws://127.0.0.1:PORT".
func (g *Gateway) WSURL() string { return "ws://127.0.0.1:" + strconv.Itoa(g.Port()) }

// Logs returns the last MiB of the Gateway's output (stdout and stderr; its
// structured log is LogFile).
func (g *Gateway) Logs() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.out.String()
}

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
func (g *Gateway) Close() {
	g.stopMu.Lock()
	defer g.stopMu.Unlock()
	g.mu.Lock()
	cmd, exited := g.cmd, g.exited
	g.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	select {
	case <-exited:
		return
	default:
	}
	terminateGroup(cmd)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
	}
	killGroup(cmd)
	<-exited
}

// Kill kills the Gateway's process group at once, as a crash would, and
// waits for it to exit.
func (g *Gateway) Kill() {
	g.stopMu.Lock()
	defer g.stopMu.Unlock()
	g.stop()
}

// stop kills the process group and waits for the process.
func (g *Gateway) stop() {
	g.mu.Lock()
	cmd, exited := g.cmd, g.exited
	g.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	killGroup(cmd)
	<-exited
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tail keeps the last max bytes of the lines written to it. Safe for
// concurrent use.
type tail struct {
	mu    sync.Mutex
	lines []string
	size  int
	max   int
}

func newTail(max int) *tail { return &tail{max: max} }

// WriteLine appends one line, dropping the oldest past the limit.
func (t *tail) WriteLine(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > t.max && len(t.lines) > 1 {
		t.size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
	}
}

// String returns the kept lines, newline-terminated.
func (t *tail) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	return strings.Join(t.lines, "\n") + "\n"
}
