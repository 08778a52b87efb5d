package opencode

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/internal/proc"
)

// Server is a running `opencode serve`. Serve starts it; it is killed when
// the test ends, or earlier by Close or Kill. Its output (--print-logs: the
// log lines go to stderr) is kept for Logs.
type Server struct {
	// Dir and Home are the project directory and HOME it runs with.
	Dir, Home string
	// Started is how long the start took, from exec to the first answer
	// of the project instance (GET /session).
	Started time.Duration

	client *http.Client
	srv    proc.Server
}

// listening matches the line opencode serve prints once it listens.
var listening = regexp.MustCompile(`listening on http://127\.0\.0\.1:\d+`)

// Serve starts `opencode serve --hostname 127.0.0.1 --port P --print-logs`
// in opts.Dir with the environment of Env, after writing opencode.json (see
// Config), copying opts.Plugins and seeding the config dirs. It returns once
// the project instance answers: a fresh server bootstraps the instance on
// its first request, and offline that request can hang, so once the server
// prints that it listens Serve polls GET /session with a per-request
// timeout until opts.StartTimeout. It skips tb when the binary is absent
// (Bin) and fails tb when the server does not come up; the server's output
// is logged when tb has failed by the time it ends.
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
	s := &Server{Dir: opts.Dir, Home: opts.Home, client: &http.Client{Transport: &http.Transport{Proxy: nil}}}
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
	var listened atomic.Bool // by the current attempt
	s.Started = s.srv.Start(tb, ctx, proc.Launch{
		Name:    "opencode serve in " + s.Dir,
		Port:    opts.Port,
		Timeout: cmp.Or(opts.StartTimeout, DefaultStartTimeout),
		Grace:   5 * time.Second,
		Command: func(port int) *exec.Cmd {
			listened.Store(false)
			cmd := exec.CommandContext(ctx, bin, "serve", "--hostname", "127.0.0.1", "--port", strconv.Itoa(port), "--print-logs")
			cmd.Dir = s.Dir
			cmd.Env = proc.Environ(env)
			return cmd
		},
		OnLine: func(line string) {
			if listening.MatchString(line) {
				listened.Store(true)
			}
		},
		Ready: func(ctx context.Context) error {
			if !listened.Load() {
				return errors.New("no \"listening on\" line yet")
			}
			// GET /session makes the server bootstrap the project instance.
			ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			return s.Do(ctx, http.MethodGet, "/session", nil, nil)
		},
		// A taken port makes 1.18.33 exit 1 printing only "ServeError".
		PortTaken: func(logs string) bool {
			return strings.Contains(logs, "ServeError") || strings.Contains(logs, "EADDRINUSE")
		},
	})
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

// URL returns the server's base URL, "http://127.0.0.1:PORT".
func (s *Server) URL() string { return s.srv.URL() }

// Port returns the port the server listens on, for Options.Port of a
// restart that must keep the URL.
func (s *Server) Port() int { return s.srv.Port() }

// Logs returns the last MiB of the server's output.
func (s *Server) Logs() string { return s.srv.Logs() }

// Close stops the server: SIGTERM to its process group, then SIGKILL if it
// has not exited within five seconds. Safe to call twice, and after Kill.
func (s *Server) Close() { s.srv.Close() }

// Kill kills the server's process group at once, as a crash would, and
// waits for it to exit.
func (s *Server) Kill() { s.srv.Kill() }
