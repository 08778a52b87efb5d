package opencode

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
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

// Server is a running `opencode serve`. Serve starts it; it is killed when
// the test ends, or earlier by Close or Kill.
type Server struct {
	// Dir and Home are the project directory and HOME it runs with.
	Dir, Home string
	// Started is how long the start took, from exec to the first answer
	// of the project instance (GET /session).
	Started time.Duration

	url    string
	client *http.Client
	proc   *proc.Process // the last start's
	once   sync.Once
}

// listening matches the line opencode serve prints once it listens.
var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

// Serve starts `opencode serve --hostname 127.0.0.1 --port P --print-logs`
// in opts.Dir with the environment of Env, after writing opencode.json (see
// Config), copying opts.Plugins and seeding the config dirs. It returns once
// the project instance answers: a fresh server bootstraps the instance on
// its first request, and offline that request can hang, so Serve polls with
// a per-request timeout until opts.StartTimeout. It skips tb when the binary
// is absent (Bin) and fails tb when the server does not come up; the
// server's output is logged when tb has failed by the time it ends.
//
// The port is a free one picked just before the start: `--port 0` does not
// pick one (OpenCode 1.18 then listens on its default, 4096). A start that
// loses the port to another process is retried on a new one, unless
// opts.Port fixed it.
func Serve(tb testing.TB, ctx context.Context, opts Options) *Server {
	tb.Helper()
	bin := Bin(tb)
	proxy, err := proc.ProxyFor(opts.ProviderURL)
	if err != nil {
		tb.Fatalf("opencode.Serve: %v", err)
	}
	s := &Server{Dir: opts.Dir, Home: opts.Home}
	if s.Dir == "" {
		s.Dir = NewProject(tb)
	}
	if s.Home == "" {
		s.Home = tb.TempDir()
	}
	env := Env(s.Home, tb.TempDir(), proxy)
	proc.Override(env, opts.Env)
	if err := prepare(s.Dir, globalConfigDir(env), opts); err != nil {
		tb.Fatal(err)
	}
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = DefaultStartTimeout
	}
	s.client = &http.Client{Transport: &http.Transport{Proxy: nil}}

	start := time.Now()
	deadline := start.Add(timeout)
	err = proc.StartOnPort(tb, ctx, "opencode serve", opts.Port, deadline, func(port int) error {
		return s.start(ctx, bin, env, port, deadline)
	})
	if err != nil {
		s.proc.Kill()
		tb.Fatalf("opencode serve in %s: %v\noutput:\n%s", s.Dir, err, s.proc.Logs())
	}
	tb.Cleanup(func() {
		s.Close()
		if tb.Failed() {
			tb.Logf("opencode serve output (%s):\n%s", s.url, s.proc.Logs())
		}
	})
	// GET /session makes the server bootstrap the project instance.
	ready := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, min(20*time.Second, time.Until(deadline)))
		defer cancel()
		return s.Do(ctx, http.MethodGet, "/session", nil, nil)
	}
	if err := s.proc.WaitReady(ctx, deadline, ready); err != nil {
		tb.Fatalf("opencode serve at %s: %v", s.url, err)
	}
	s.Started = time.Since(start)
	tb.Logf("opencode serve at %s ready in %v", s.url, s.Started.Round(time.Millisecond))
	return s
}

// prepare writes opencode.json, copies the plugins and seeds the config
// dirs that OpenCode would otherwise npm install into.
func prepare(dir, globalConfig string, opts Options) error {
	if err := proc.WriteJSON(filepath.Join(dir, "opencode.json"), Config(opts.ProviderURL, opts.Config), 0o644); err != nil {
		return err
	}
	if err := copyPlugins(dir, opts.Plugins); err != nil {
		return err
	}
	if err := seedConfigDir(globalConfig); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, ".opencode")); err == nil {
		return seedConfigDir(filepath.Join(dir, ".opencode"))
	}
	return nil
}

// globalConfigDir returns OpenCode's global config dir for env:
// $XDG_CONFIG_HOME/opencode, or $HOME/.config/opencode.
func globalConfigDir(env map[string]string) string {
	if x := env["XDG_CONFIG_HOME"]; x != "" {
		return filepath.Join(x, "opencode")
	}
	return filepath.Join(env["HOME"], ".config", "opencode")
}

// start runs the process on port and waits for its "listening" line. On
// failure the process has exited or been killed.
func (s *Server) start(ctx context.Context, bin string, env map[string]string, port int, deadline time.Time) error {
	cmd := exec.CommandContext(ctx, bin, "serve", "--hostname", "127.0.0.1", "--port", strconv.Itoa(port), "--print-logs")
	cmd.Dir = s.Dir
	cmd.Env = proc.Environ(env)
	found := make(chan string, 1)
	p, err := proc.Start(cmd, func(line string) {
		if m := listening.FindStringSubmatch(line); m != nil {
			select {
			case found <- m[1]:
			default:
			}
		}
	})
	if err != nil {
		return err
	}
	s.proc = p

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case u := <-found:
		s.url = u
		return nil
	case <-p.Exited():
		// A taken port makes 1.18.33 exit 1 printing only "ServeError".
		if text := p.Logs(); strings.Contains(text, "ServeError") || strings.Contains(text, "EADDRINUSE") {
			return &proc.PortTakenError{Port: port}
		}
		return fmt.Errorf("exited before listening (%v)", p.State())
	case <-timer.C:
		p.Kill()
		return errors.New("no \"listening on\" line before the start timeout")
	case <-ctx.Done():
		p.Kill()
		return context.Cause(ctx)
	}
}

// URL returns the server's base URL, "http://127.0.0.1:PORT".
func (s *Server) URL() string { return s.url }

// Port returns the port the server listens on, for Options.Port of a
// restart that must keep the URL; 0 when the URL names none.
func (s *Server) Port() int {
	i := strings.LastIndexByte(s.url, ':')
	if i < 0 {
		return 0
	}
	port, err := strconv.Atoi(s.url[i+1:])
	if err != nil {
		return 0
	}
	return port
}

// Logs returns the last MiB of the server's output (--print-logs: its log
// lines go to stderr).
func (s *Server) Logs() string { return s.proc.Logs() }

// Close stops the server: SIGTERM to its process group, then SIGKILL if it
// has not exited within five seconds. Safe to call twice.
func (s *Server) Close() {
	s.once.Do(func() { s.proc.Stop(5 * time.Second) })
}

// Kill kills the server's process group at once, as a crash would, and
// waits for it to exit. Close after Kill does nothing.
func (s *Server) Kill() {
	s.once.Do(s.proc.Kill)
}
