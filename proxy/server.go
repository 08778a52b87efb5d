// Package proxy is heirloom's HTTP transport: the hook and plugin endpoints harnesses call, the
// API, health probes and metrics, and forwarding to an upstream hook target. It decides nothing
// itself: every request is carried to an *engine.Engine and its answer carried back.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
)

// Defaults of a Server, set by NewServer.
const (
	DefaultAddr         = adapters.DefaultSidecarAddr
	DefaultMaxBodyBytes = 8 << 20
	DefaultHookTimeout  = time.Second
)

// Server serves the hook endpoints, the API and the probes. Set its fields, then Open it.
// It follows New → Open → Close.
type Server struct {
	// Addr is the address to listen on, host:port. Port 0 picks a free port (see URL).
	Addr string
	// Logger receives request and error logs.
	Logger hclog.Logger
	// Engine makes every decision. Required; the caller opens and closes it.
	Engine *engine.Engine
	// Harnesses gives the routes: POST /hooks/{name} for every harness with Hooks or a Plugin.
	// Nil serves none.
	Harnesses *adapters.Registry
	// Token, when non-empty, must be presented as a bearer token on every request but the probes.
	Token string
	// MaxBodyBytes caps a request body; larger bodies get 413.
	MaxBodyBytes int64
	// HookTimeout bounds the work done for one hook call; past it the hook gets the empty reply
	// and the work finishes in the background.
	HookTimeout time.Duration
	// Upstreams are existing http hook targets, by harness name, every POST /hooks/{name} is
	// forwarded to (proxy mode, see Upstream). Nil means none.
	Upstreams map[string]*Upstream
	// Streams are the clients following streaming harnesses; their counters are served at
	// GET /metrics. Nil means none.
	Streams []NamedStream
	// Feed tunes the live event feed, GET /api/events; the zero value takes the defaults.
	Feed FeedOptions
	// Version is the version the MCP server reports; "" reports "dev".
	Version string
	// Registry receives the server's metrics and is served at GET /metrics. Nil means a registry
	// of the server's own, made by Open.
	Registry *prometheus.Registry

	metrics   *metrics
	upstreams map[string]*upstream // Upstreams, opened
	feeds     feedConns            // the live feed's connections, which http.Server does not track
	ln        net.Listener
	http      *http.Server
	once      sync.Once

	deprecatedOnce sync.Once // the one warning about GET /api/inject
}

// NewServer returns a Server with defaults set; the caller sets Engine and Harnesses.
func NewServer() *Server {
	return &Server{
		Addr:         DefaultAddr,
		Logger:       hclog.NewNullLogger(),
		MaxBodyBytes: DefaultMaxBodyBytes,
		HookTimeout:  DefaultHookTimeout,
	}
}

// Open validates the server's fields, listens synchronously (so "address in use" fails here) and
// then serves in the background.
func (s *Server) Open() error {
	switch {
	case s.Engine == nil:
		return errors.New("proxy: engine required")
	case s.Logger == nil:
		return errors.New("proxy: logger required (start from NewServer)")
	case s.MaxBodyBytes <= 0:
		return fmt.Errorf("proxy: max body bytes %d: want > 0", s.MaxBodyBytes)
	case s.HookTimeout <= 0:
		return fmt.Errorf("proxy: hook timeout %v: want > 0", s.HookTimeout)
	}
	if s.Registry == nil {
		s.Registry = prometheus.NewRegistry()
	}
	m, err := newMetrics(s.Registry, s.Streams, s.Engine)
	if err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	s.metrics = m
	s.upstreams = map[string]*upstream{}
	for name, u := range s.Upstreams {
		if u == nil {
			continue
		}
		if reg, ok := s.Harnesses.Get(name); !ok || reg.Hooks == nil {
			return fmt.Errorf("upstream for %q: no such hook harness", name)
		}
		up, err := openUpstream(*u, s.Logger)
		if err != nil {
			return fmt.Errorf("%s %w", name, err)
		}
		if up == nil {
			continue
		}
		for _, o := range outcomes { // every series shows from the start, at 0
			s.metrics.upstream.WithLabelValues(name, o)
		}
		s.upstreams[name] = up
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.Addr, err)
	}
	s.ln = ln
	s.feeds.open()
	s.http = &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          s.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Logger.Error("serve stopped", "error", err)
		}
	}()
	return nil
}

// URL returns the base URL the server listens on, e.g. "http://127.0.0.1:7433". Empty before Open.
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// Close closes the live feed's connections (each told why), stops accepting connections and
// lets in-flight requests finish until ctx expires. The engine's background work is the
// engine's to wait for (engine.Close). It is safe to call twice and without Open.
func (s *Server) Close(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		if s.http == nil {
			return
		}
		err = s.feeds.close(ctx)
		if herr := s.http.Shutdown(ctx); herr != nil {
			err = errors.Join(err, fmt.Errorf("shut down http: %w", herr), s.http.Close())
		}
		for _, up := range s.upstreams {
			up.close()
		}
	})
	return err
}

// store is where the read API reads from: the engine's.
func (s *Server) store() *kv.Store { return s.Engine.Store }

// scope is the configured memory scope.
func (s *Server) scope() string { return s.Engine.Scope }

// handler builds the routes, wrapped in the request log and the caller checks.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", s.handleHealthz)
	mux.HandleFunc("/readyz", s.handleReadyz)
	mux.HandleFunc("/hooks/{harness}", s.hookRoute)
	s.routeAPI(mux)
	s.routeUI(mux)
	// /mcp: the MCP tools, answering through the routes above, in process.
	mux.Handle("/mcp", s.mcpHandler(mux))
	mux.Handle("GET /metrics", s.handleMetrics())
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		s.allow(w, r, http.MethodGet, http.MethodHead)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, Errorf(ECodeNotFound, "no route "+r.URL.Path))
	})
	return s.logRequests(s.checkCaller(mux))
}

// hookRoute serves POST /hooks/{harness} with the harness's hook or plugin endpoint.
func (s *Server) hookRoute(w http.ResponseWriter, r *http.Request) {
	reg, ok := s.Harnesses.Get(r.PathValue("harness"))
	switch {
	case ok && reg.Hooks != nil:
		s.serveHook(w, r, reg.Name, reg.Hooks, s.upstreams[reg.Name])
	case ok && reg.Plugin != nil:
		s.servePluginHook(w, r, reg.Name, reg.Plugin)
	default:
		s.writeError(w, r, Errorf(ECodeNotFound, "no adapter for "+r.URL.Path))
	}
}

// allow rejects a request whose method is not one of methods, with 405 and an Allow header.
func (s *Server) allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	allowed := methods[0]
	for _, m := range methods[1:] {
		allowed += ", " + m
	}
	w.Header().Set("Allow", allowed)
	s.writeError(w, r, Errorf(ECodeMethodNotAllowed, r.Method+" not allowed; use "+allowed))
	return false
}
