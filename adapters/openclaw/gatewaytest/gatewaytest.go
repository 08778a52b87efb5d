// Package gatewaytest runs a stand-in for the OpenClaw Gateway on loopback, for tests of
// Gateway clients, in the spirit of net/http/httptest: the real handshake
// (connect.challenge → connect → hello-ok, with the token and protocol checks OpenClaw 2026.9
// makes and the close codes it sends), sessions.subscribe, sessions.list, sessions.describe and
// chat.history answered from state the test sets, tick keepalives, and knobs for the failures a
// client must survive: dropped connections, a restart on the same port, silence, a hung server.
//
// It speaks the wire format on its own, without the client's decoder, so that a test of the
// client cannot pass only because both sides share a mistake. Params of the methods it serves
// are checked as closed objects, as OpenClaw checks them: a property OpenClaw does not know is
// refused with INVALID_REQUEST.
//
// Recorded Gateway conversations (testdata/live/*.all-frames.json) replay through Replay.
package gatewaytest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Protocol facts of OpenClaw 2026.9.6 the stand-in reproduces.
const (
	// Protocol is the protocol version the stand-in speaks unless Options.Protocol says; a
	// connect whose [minProtocol, maxProtocol] does not include it is refused with
	// PROTOCOL_MISMATCH and close code 1002.
	Protocol = 4
	// DefaultTickInterval is how often tick events go out unless Options.TickInterval says.
	DefaultTickInterval = 30 * time.Second
	// DefaultMaxPayload is the advertised policy.maxPayload: 25 MiB.
	DefaultMaxPayload = 25 << 20
	// PreauthMaxPayload bounds the frames a client may send before hello-ok, as OpenClaw's
	// MAX_PREAUTH_PAYLOAD_BYTES does (64 KiB); a larger one is closed with 1009.
	PreauthMaxPayload = 64 << 10
)

// WebSocket close codes OpenClaw 2026.9.6 sends. The stand-in sends the first four itself; all
// are there for DropConnections and for tests to compare with.
const (
	CloseProtocolMismatch = websocket.CloseProtocolError   // 1002 "protocol mismatch"
	ClosePolicy           = websocket.ClosePolicyViolation // 1008: auth failure, bad handshake
	CloseTooBig           = websocket.CloseMessageTooBig   // 1009: a frame over the read limit
	CloseServiceRestart   = websocket.CloseServiceRestart  // 1012 "service restart": Stop, Restart
	CloseTryAgainLater    = websocket.CloseTryAgainLater   // 1013 "gateway starting"
	CloseAuthChanged      = 4001                           // "gateway auth changed", "client invalidated"

	closeWait     = 500 * time.Millisecond // for the peer's close reply
	writeWait     = 5 * time.Second        // per frame written
	handshakeWait = 10 * time.Second       // for the connect request
)

// Options configure a Server. The zero value is a Gateway without auth that ticks every 30 s.
type Options struct {
	// Token is the shared gateway token connect must carry in params.auth.token. Empty: any
	// token, or none, is accepted (auth mode "none").
	Token string
	// TickInterval is advertised as policy.tickIntervalMs and is how often tick events go out.
	// Zero: DefaultTickInterval.
	TickInterval time.Duration
	// MaxPayload is advertised as policy.maxPayload and bounds the frames the server reads after
	// hello-ok. Zero: DefaultMaxPayload.
	MaxPayload int64
	// Version is hello-ok's server.version. Empty: "gatewaytest".
	Version string
	// Protocol is the protocol version the server speaks, e.g. a future one. Zero: Protocol.
	Protocol int
}

// Handler answers one request of a method the test installed with Handle: the result becomes
// the res payload; an error becomes ok:false, with its fields when it is an *Error and as
// code UNAVAILABLE otherwise.
type Handler func(params json.RawMessage) (result any, err error)

// Error is a Gateway error as a res frame carries it: {code, message, details?, retryable?,
// retryAfterMs?}.
type Error struct {
	Code         string `json:"code"`
	Message      string `json:"message"`
	Details      any    `json:"details,omitempty"`
	Retryable    bool   `json:"retryable,omitempty"`
	RetryAfterMs int64  `json:"retryAfterMs,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Close is a close frame a client sent.
type Close struct {
	Conn   int    // the connection it came on
	Code   int    // its status code; 1005 when it had none
	Reason string // its reason
}

// Request is one request a client sent, connect included, in the order the server read them.
type Request struct {
	Conn   int             // the connection it came on: 1 for the first accepted, 2, …
	ID     string          // the client's request id
	Method string          // "connect", "sessions.subscribe", …
	Params json.RawMessage // as sent; nil when absent
}

// Server is a stand-in Gateway listening on a loopback port that stays the same across
// Restart. Its methods are safe for concurrent use.
type Server struct {
	opts Options
	tb   testing.TB
	addr string // host:port, fixed at NewServer

	wg   sync.WaitGroup // connection handlers and the ticker
	stop chan struct{}  // closed by Close

	mu        sync.Mutex
	ln        net.Listener // nil while stopped
	hs        *http.Server
	conns     map[*conn]struct{}
	accepted  int // connections accepted so far
	connects  int // handshakes completed so far
	sessions  []json.RawMessage
	describe  map[string]json.RawMessage
	histories map[string][]json.RawMessage
	handlers  map[string]Handler
	requests  []Request
	closes    []Close
	noTicks   bool
	noPongs   bool
	hung      bool
	unhung    chan struct{} // closed when hung ends
	closed    bool
	startedAt time.Time
}

// NewServer starts a stand-in Gateway on 127.0.0.1 and a free port; it is closed in
// tb.Cleanup. It fails the test if it cannot listen.
func NewServer(tb testing.TB, opts Options) *Server {
	tb.Helper()
	if opts.TickInterval <= 0 {
		opts.TickInterval = DefaultTickInterval
	}
	if opts.MaxPayload <= 0 {
		opts.MaxPayload = DefaultMaxPayload
	}
	if opts.Version == "" {
		opts.Version = "gatewaytest"
	}
	if opts.Protocol <= 0 {
		opts.Protocol = Protocol
	}
	s := &Server{
		opts:      opts,
		tb:        tb,
		stop:      make(chan struct{}),
		conns:     make(map[*conn]struct{}),
		describe:  make(map[string]json.RawMessage),
		histories: make(map[string][]json.RawMessage),
		handlers:  make(map[string]Handler),
		unhung:    make(chan struct{}),
		startedAt: time.Now(),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("gatewaytest: listen: %v", err)
	}
	s.addr = ln.Addr().String()
	s.serve(ln)
	s.wg.Add(1)
	go s.tick()
	tb.Cleanup(s.Close)
	return s
}

// URL returns the Gateway's WebSocket URL, ws://127.0.0.1:PORT, the same across Restart.
func (s *Server) URL() string { return "ws://" + s.addr }

// Addr returns the host:port the Gateway listens on.
func (s *Server) Addr() string { return s.addr }

// TickInterval returns the tick interval the Gateway advertises and keeps.
func (s *Server) TickInterval() time.Duration { return s.opts.TickInterval }

func (s *Server) serve(ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.serveWS)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: handshakeWait}
	s.mu.Lock()
	s.ln, s.hs = ln, hs
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = hs.Serve(ln)
	}()
}

// Stop stops listening and closes every connection with 1012 "service restart", the way a
// Gateway that shuts down for a restart goes; connections are cut after a short wait for the
// client's close reply. New connections are refused until Start.
func (s *Server) Stop() {
	s.mu.Lock()
	hs := s.hs
	s.ln, s.hs = nil, nil
	conns := s.snapshotLocked(false)
	s.mu.Unlock()
	if hs != nil {
		_ = hs.Close() // closes the listener; hijacked WebSocket connections are ours
	}
	for _, c := range conns {
		c.closeWith(CloseServiceRestart, "service restart")
	}
	for _, c := range conns {
		<-c.done
	}
}

// Start listens again on the same address after Stop. It retries for a second while the
// port is still held, then fails.
func (s *Server) Start() error {
	s.mu.Lock()
	running, closed := s.ln != nil, s.closed
	s.mu.Unlock()
	if closed {
		return errors.New("gatewaytest: start: server closed")
	}
	if running {
		return nil
	}
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(time.Second); ; {
		if ln, err = net.Listen("tcp", s.addr); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("gatewaytest: start: listen %s: %w", s.addr, err)
	}
	s.serve(ln)
	return nil
}

// Restart is Stop then Start: every connection ends with 1012 and the Gateway comes back on
// the same port, with the same sessions and handlers.
func (s *Server) Restart() error {
	s.Stop()
	return s.Start()
}

// Close stops the server for good and waits for every goroutine it started. Safe to call
// more than once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.stop)
	if s.hung {
		s.hung = false
		close(s.unhung)
	}
	s.mu.Unlock()
	s.Stop()
	s.wg.Wait()
}

// DropConnections closes every open connection with code and reason (RFC 6455 close
// handshake: the close frame, then the TCP connection once the client replied or after a
// short wait) and returns how many it closed. The server keeps listening.
func (s *Server) DropConnections(code int, reason string) int {
	conns := s.snapshot(false)
	for _, c := range conns {
		c.closeWith(code, reason)
	}
	for _, c := range conns {
		<-c.done
	}
	return len(conns)
}

// StopTicking stops the tick events; StartTicking starts them again.
func (s *Server) StopTicking() { s.set(func() { s.noTicks = true }) }

// StartTicking undoes StopTicking.
func (s *Server) StartTicking() { s.set(func() { s.noTicks = false }) }

// StopPongs makes the server ignore WebSocket pings instead of answering them, as a wedged
// Gateway would; StartPongs undoes it.
func (s *Server) StopPongs() { s.set(func() { s.noPongs = true }) }

// StartPongs undoes StopPongs.
func (s *Server) StartPongs() { s.set(func() { s.noPongs = false }) }

// Hang makes the server stop doing anything on its connections while keeping them open: no
// ticks, no pongs, no replies, no events, not even a reply to a close frame. New connections
// are accepted and hang too. Unhang ends it; replies held back are not sent.
func (s *Server) Hang() {
	s.set(func() {
		if !s.hung {
			s.hung = true
			s.unhung = make(chan struct{})
		}
	})
}

// Unhang undoes Hang.
func (s *Server) Unhang() {
	s.set(func() {
		if s.hung {
			s.hung = false
			close(s.unhung)
		}
	})
}

func (s *Server) set(f func()) {
	s.mu.Lock()
	f()
	s.mu.Unlock()
}

// isHung returns whether the server hangs, and a channel closed when it stops hanging.
func (s *Server) isHung() (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hung, s.unhung
}

// SetSessions replaces the session rows sessions.list returns and sessions.describe looks
// keys up in. Each row is a JSON object as OpenClaw sends it, with at least "key".
func (s *Server) SetSessions(rows ...json.RawMessage) {
	s.mu.Lock()
	s.sessions = append([]json.RawMessage(nil), rows...)
	s.mu.Unlock()
}

// SetDescribe makes sessions.describe answer row for key instead of looking the key up in the
// session rows; a nil row answers {"session":null}.
func (s *Server) SetDescribe(key string, row json.RawMessage) {
	s.mu.Lock()
	s.describe[key] = row
	s.mu.Unlock()
}

// SetHistory replaces the transcript chat.history answers for key: each message a JSON object
// as a chat.history row (a transcript message with its "__openclaw" envelope), oldest first.
// Setting it sends no event: it is what a client that was away missed.
func (s *Server) SetHistory(key string, messages ...json.RawMessage) {
	s.mu.Lock()
	s.histories[key] = append([]json.RawMessage(nil), messages...)
	s.mu.Unlock()
}

// Handle installs h for method, before the built-in handlers: a test can serve more methods,
// or make sessions.list or sessions.describe fail. A nil h removes it.
func (s *Server) Handle(method string, h Handler) {
	s.mu.Lock()
	if h == nil {
		delete(s.handlers, method)
	} else {
		s.handlers[method] = h
	}
	s.mu.Unlock()
}

// Requests returns every request read so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequestsFor returns the requests of one method, in order.
func (s *Server) RequestsFor(method string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

// Closes returns the close frames clients sent, in order.
func (s *Server) Closes() []Close {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Close(nil), s.closes...)
}

// Accepted returns how many WebSocket connections the server has accepted, handshake or not.
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// Connects returns how many connections completed the handshake (hello-ok sent).
func (s *Server) Connects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connects
}

// Subscribed returns how many open connections have called sessions.subscribe.
func (s *Server) Subscribed() int { return len(s.snapshot(true)) }

// Emit sends one event frame to every subscribed connection, with that connection's next seq,
// and returns how many it reached. payload is marshaled to JSON; a json.RawMessage or []byte
// goes as it is.
func (s *Server) Emit(event string, payload any) int {
	raw, err := marshalPayload(payload)
	if err != nil {
		s.tb.Errorf("gatewaytest: emit %s: %v", event, err)
		return 0
	}
	n := 0
	for _, c := range s.snapshot(true) {
		if c.sendEvent(event, raw) == nil {
			n++
		}
	}
	return n
}

// EmitRaw sends data as one text frame, verbatim, to every subscribed connection (a malformed
// or oversized frame, a frame with a seq of the test's choosing) and returns how many it
// reached.
func (s *Server) EmitRaw(data []byte) int {
	n := 0
	for _, c := range s.snapshot(true) {
		if c.write(data) == nil {
			n++
		}
	}
	return n
}

// snapshot returns the open connections past the handshake, only the subscribed ones if asked.
func (s *Server) snapshot(subscribedOnly bool) []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked(subscribedOnly)
}

func (s *Server) snapshotLocked(subscribedOnly bool) []*conn {
	out := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		if subscribedOnly && !c.subscribed.Load() {
			continue
		}
		out = append(out, c)
	}
	return out
}

// tick sends a tick event to every connection past the handshake, every TickInterval.
func (s *Server) tick() {
	defer s.wg.Done()
	t := time.NewTicker(s.opts.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.mu.Lock()
			quiet := s.noTicks || s.hung
			conns := s.snapshotLocked(false)
			s.mu.Unlock()
			if quiet {
				continue
			}
			payload := []byte(`{"ts":` + strconv.FormatInt(now.UnixMilli(), 10) + `}`)
			for _, c := range conns {
				if c.helloed.Load() {
					_ = c.sendEvent("tick", payload)
				}
			}
		}
	}
}

func marshalPayload(payload any) (json.RawMessage, error) {
	switch p := payload.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	case []byte:
		return p, nil
	default:
		return json.Marshal(p)
	}
}
