// Package proxy is heirloom's HTTP side: the hook endpoints harnesses call, the read API, health
// probes, and the decisions made between an adapter's normalised event and the store.
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
	"github.com/heirloom-dev/heirloom/kv"
)

// Server serves the hook endpoints, the API and the probes. Set its fields, then Open it.
// It follows New → Open → Close.
type Server struct {
	// Addr is the address to listen on, host:port. Port 0 picks a free port (see URL).
	Addr string
	// Logger receives request and error logs. Nil means no logging.
	Logger hclog.Logger
	// Store is where everything heirloom learns is kept. Required.
	Store *kv.Store
	// Scope is the memory scope for harnesses whose events name none. Required.
	Scope string
	// Token, when non-empty, must be presented as a bearer token on every request but the probes.
	Token string
	// MaxBodyBytes caps a request body; larger bodies get 413. Zero means 8 MiB.
	MaxBodyBytes int64
	// HookTimeout bounds the work done for one hook call; past it the hook gets the empty reply
	// and the work finishes in the background. Zero means 1s.
	HookTimeout time.Duration
	// ClaudeCode decodes Claude Code hook calls. Nil disables POST /hooks/claude-code (404). If it
	// also implements adapters.Transcripts and adapters.SubagentMetas, transcripts and sub-agent
	// metadata are read too.
	ClaudeCode adapters.Hooks
	// ClaudeCodeUpstream, when its URL is set, is an existing http hook target every POST
	// /hooks/claude-code is forwarded to (proxy mode, see Upstream). Its zero value is none.
	ClaudeCodeUpstream Upstream
	// TranscriptRoots are the directories transcripts may be read from, after resolving symlinks.
	// Nil means none: no transcript is read.
	TranscriptRoots []string
	// MaxReadBytes caps the transcript bytes read for one hook call. Zero means 4 MiB.
	MaxReadBytes int64
	// Inherit configures the inherited block handed to a starting sub-agent.
	Inherit Inherit
	// SpawnRecordWait bounds how long a SubagentStart waits for the spawning turn to reach the
	// parent's transcript (Claude Code writes it asynchronously). Zero means 400ms; negative,
	// no wait.
	SpawnRecordWait time.Duration
	// MaxSpawnDepth, when positive, is how deep sub-agents may nest: a spawn check for a session
	// at that depth is refused. Zero means no limit.
	MaxSpawnDepth int
	// MaxContextChars caps the context of one reply, in the harness's characters (UTF-16 code
	// units). Zero means 9500, under Claude Code's 10,000.
	MaxContextChars int
	// OpenClaw knows OpenClaw's session keys and decodes what heirloom's OpenClaw plugin posts
	// to /hooks/openclaw. Nil disables that endpoint (404), and /api/inject?harness=openclaw
	// then looks sessions up in Scope.
	OpenClaw PluginHarness
	// OpenClawGateway, when set, is asked about a sub-agent whose parent is not known yet when
	// its plugin asks /api/inject, within DescribeWait.
	OpenClawGateway SessionDescriber
	// DescribeWait bounds that question. Zero means DefaultDescribeWait; negative, never ask.
	DescribeWait time.Duration
	// Checkpoints configures when session checkpoints are taken, how long they are kept and
	// how far back a starting session recovers another's. Zero fields take their defaults.
	Checkpoints Checkpoints
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Registry receives the server's metrics and is served at GET /metrics. Nil means a registry
	// of the server's own, made by Open.
	Registry *prometheus.Registry

	metrics    *metrics
	ccUpstream *upstream // ClaudeCodeUpstream, opened; nil for none
	locks      keyLocks  // per top-level session
	ln         net.Listener
	http       *http.Server
	ctx        context.Context // owned by the server; cancelled by Close
	cancel     context.CancelFunc
	wg         sync.WaitGroup // background work started by handlers
	inflight   sync.Map       // scope NUL session → struct{}: a periodic checkpoint being written
	openedAt   time.Time      // when Open ran, by Now
	once       sync.Once
}

// Inherit configures the inherited block.
type Inherit struct {
	Enabled   bool // false: sub-agents get no inherited block (heirloom still records)
	TailChars int  // budget of the parent's transcript tail in the block; zero: no tail
}

// NewServer returns a Server with defaults set; the caller fills in Store and Scope.
func NewServer() *Server {
	return &Server{
		Addr:            "127.0.0.1:7433",
		Logger:          hclog.NewNullLogger(),
		MaxBodyBytes:    8 << 20,
		HookTimeout:     time.Second,
		MaxReadBytes:    4 << 20,
		Inherit:         Inherit{Enabled: true, TailChars: 3000},
		MaxContextChars: 9500,
		Checkpoints:     Checkpoints{Keep: 3}.withDefaults(),
		Now:             time.Now,
	}
}

// Open validates the server's fields, listens synchronously (so "address in use" fails here) and
// then serves in the background.
func (s *Server) Open() error {
	if s.Store == nil {
		return errors.New("proxy: store required")
	}
	if s.Scope == "" {
		return errors.New("proxy: scope required")
	}
	if s.Logger == nil {
		s.Logger = hclog.NewNullLogger()
	}
	if s.MaxBodyBytes <= 0 {
		s.MaxBodyBytes = 8 << 20
	}
	if s.HookTimeout <= 0 {
		s.HookTimeout = time.Second
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.MaxReadBytes <= 0 {
		s.MaxReadBytes = 4 << 20
	}
	if s.SpawnRecordWait == 0 {
		s.SpawnRecordWait = 400 * time.Millisecond
	}
	if s.Inherit.TailChars < 0 {
		s.Inherit.TailChars = 3000
	}
	if s.MaxContextChars <= 0 {
		s.MaxContextChars = 9500
	}
	if s.Registry == nil {
		s.Registry = prometheus.NewRegistry()
	}
	m, err := newMetrics(s.Registry)
	if err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	s.metrics = m
	up, err := openUpstream(s.ClaudeCodeUpstream, s.Logger)
	if err != nil {
		return fmt.Errorf("claude code %w", err)
	}
	if up != nil && s.ClaudeCode != nil {
		for _, o := range outcomes { // every series shows from the start, at 0
			s.metrics.upstream.WithLabelValues(s.ClaudeCode.Harness(), o)
		}
	}
	s.ccUpstream = up
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.Addr, err)
	}
	s.ln = ln
	s.openedAt = s.Now()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.http = &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          s.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	s.wg.Add(1)
	go s.prune()
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

// Close stops accepting connections, lets in-flight requests finish until ctx expires, then waits
// for background work. It is safe to call twice and without Open.
func (s *Server) Close(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		if s.http == nil {
			return
		}
		if err = s.http.Shutdown(ctx); err != nil {
			err = errors.Join(fmt.Errorf("shut down http: %w", err), s.http.Close())
		}
		s.cancel()
		s.wg.Wait()
		s.ccUpstream.close()
	})
	return err
}

// handler builds the routes, wrapped in the request log and the caller checks.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", s.handleHealthz)
	mux.HandleFunc("/readyz", s.handleReadyz)
	mux.HandleFunc("/hooks/claude-code", s.hookHandler(func() adapters.Hooks { return s.ClaudeCode }, s.ccUpstream))
	mux.HandleFunc("/hooks/{harness}", s.pluginHookHandler)
	s.routeAPI(mux)
	mux.Handle("GET /metrics", s.handleMetrics())
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		s.allow(w, r, http.MethodGet, http.MethodHead)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, Errorf(ECodeNotFound, "no route "+r.URL.Path))
	})
	return s.logRequests(s.checkCaller(mux))
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
