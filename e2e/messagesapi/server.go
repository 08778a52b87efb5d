// Package messagesapi is a loopback stand-in for the Anthropic Messages API,
// for live tests of harness binaries (Claude Code) that must never reach a
// real model.
//
// A Server answers POST /v1/messages, streamed (server-sent events, as the
// real API: message_start, ping, content_block_start/delta/stop,
// message_delta, message_stop) or not, with the Reply that a test's script
// function returns, and keeps a log of every request. It also answers
// POST /v1/messages/count_tokens, and answers 404 to anything else; both
// land in the Calls log so a test can see what else the harness asked for.
//
// The script sees every model request Claude Code sends, and tells them
// apart with Request methods: side calls such as title generation offer no
// tools (IsSideRequest; none arrive in -p mode with non-essential traffic
// disabled), a sub-agent's turns carry a marker in the system prompt
// (IsSubagent), and a compaction asks for a summary (IsCompaction).
package messagesapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server is the stand-in. Build it with New, then Start; Close stops it.
// The zero value is not usable.
type Server struct {
	script func(Request) Reply

	mu       sync.Mutex
	requests []Request
	calls    []Call

	ln     net.Listener
	srv    *http.Server
	url    string
	ctx    context.Context // cancelled by Close: ends streams in flight
	cancel context.CancelFunc
	done   chan struct{} // closed when Serve has returned
	closed bool
}

// Call is a request the stand-in got outside POST /v1/messages:
// count_tokens (Status 200), or anything else (Status 404) — an unknown
// path, a HEAD / connection check, or a proxy CONNECT to another host.
type Call struct {
	Method string
	// Host is the request's Host: the target host:port of a proxy CONNECT.
	Host string
	// Path is the URL path, RawQuery its query string.
	Path     string
	RawQuery string
	Status   int
	Body     []byte
}

// New returns an unstarted Server whose model answers each POST /v1/messages
// with script(request). script is called from the request's goroutine, once
// per request, side requests included; it must be safe for concurrent use
// (Claude Code runs parallel sub-agents and side calls at once). A nil script
// answers Text("ok") to everything.
func New(script func(Request) Reply) *Server {
	if script == nil {
		script = func(Request) Reply { return Text("ok") }
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{script: script, ctx: ctx, cancel: cancel}
}

// Start listens on a free loopback port and serves in the background. The
// listen error, if any, is returned. Start on a started or closed Server is
// an error.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("start messages stand-in: server closed")
	}
	if s.ln != nil {
		return errors.New("start messages stand-in: already started")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen on loopback: %w", err)
	}
	s.ln = ln
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
	}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return nil
}

// URL returns the base URL, "http://127.0.0.1:PORT", to put in
// ANTHROPIC_BASE_URL; "" before Start.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Close ends streams in flight, closes the listener and every connection,
// and waits for the serving goroutine; it does not wait for a script call
// still running, whose reply is then dropped. It is safe to call twice and
// without Start. The logs stay readable after Close.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	srv, done := s.srv, s.done
	s.mu.Unlock()

	s.cancel()
	if srv == nil {
		return
	}
	_ = srv.Close() // only reports the listener's close error
	<-done
}

// Requests returns a copy of the log of POST /v1/messages requests, in
// arrival order. Safe for concurrent use.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Calls returns a copy of the log of every other request (count_tokens,
// unknown paths, and proxy CONNECTs when the harness uses the stand-in as
// its HTTPS proxy), in arrival order. Safe for concurrent use.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// serveHTTP routes one request.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		writeError(w, &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "read body: " + err.Error()})
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.serveMessages(w, r, body)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		s.logCall(r, http.StatusOK, body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]int{"input_tokens": estimateTokens(len(body))})
	default:
		s.logCall(r, http.StatusNotFound, body)
		writeError(w, &Error{Status: http.StatusNotFound, Type: "not_found_error", Message: "no route for " + r.Method + " " + r.URL.Path})
	}
}

// serveMessages decodes, logs and answers one model request.
func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request, body []byte) {
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		s.logCall(r, http.StatusBadRequest, body)
		writeError(w, &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "decode request: " + err.Error()})
		return
	}
	req.Header = r.Header.Clone()
	req.Raw = json.RawMessage(body)

	s.mu.Lock()
	req.Seq = len(s.requests) + 1
	s.requests = append(s.requests, req)
	id := req.Seq
	s.mu.Unlock()

	reply := s.script(req)
	if reply.Error != nil {
		writeError(w, reply.Error)
		return
	}
	msg := message{
		ID:         fmt.Sprintf("msg_standin%08d", id),
		Model:      req.Model,
		StopReason: reply.StopReason(),
		Usage:      usage{InputTokens: estimateTokens(len(body))},
	}
	content, err := reply.blocks(fmt.Sprintf("toolu_standin%08d", id))
	if err != nil {
		writeError(w, &Error{Status: http.StatusInternalServerError, Type: "api_error", Message: err.Error()})
		return
	}
	out := 0
	for _, b := range content {
		if b.Text != nil {
			out += len(*b.Text)
		}
		out += len(b.Input)
	}
	msg.Usage.OutputTokens = estimateTokens(out)

	w.Header().Set("Request-Id", fmt.Sprintf("req_standin%08d", id))
	if !req.Stream {
		msg.Content = content
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(msg.wire())
		return
	}
	stream(r.Context(), w, msg, content)
}

// logCall records a request outside POST /v1/messages.
func (s *Server) logCall(r *http.Request, status int, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: r.Method, Host: r.Host, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Status: status, Body: body})
}

// writeError writes an API error body with its status.
func writeError(w http.ResponseWriter, e *Error) {
	status := e.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	typ := e.Type
	if typ == "" {
		typ = "api_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type":  "error",
		"error": map[string]string{"type": typ, "message": e.Message},
	})
}

// estimateTokens turns a byte count into a plausible token count (about four
// bytes a token, at least one).
func estimateTokens(n int) int { return n/4 + 1 }
