// Package chatapi is a loopback stand-in for an OpenAI-compatible
// chat-completions API, for live tests of harness binaries (OpenCode, with a
// custom provider built on @ai-sdk/openai-compatible) that must never reach
// a real model.
//
// A Server answers POST /v1/chat/completions, streamed (server-sent events:
// "data: {chunk}" frames whose choices[0].delta carries content or
// tool_calls, then a finish chunk, a usage chunk when asked for, and
// "data: [DONE]") or not, with the Reply that a test's script function
// returns, and keeps a log of every request. It also answers GET /v1/models,
// and answers 404 to anything else; both land in the Calls log so a test can
// see what else the harness asked for, including proxy CONNECTs when the
// harness is told to use the stand-in as its HTTP(S) proxy.
//
// The script sees every model request, side requests (title generation,
// which offers no tools: Request.IsSideRequest) included; OpenCode names the
// session of each request in its headers (Request.SessionID,
// Request.ParentSessionID).
package chatapi

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
	// Models lists the model ids GET /v1/models reports; New sets {"m"}.
	// Change it before Start. Chat requests are answered whatever model
	// they name.
	Models []string

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

// Call is a request the stand-in got outside POST /v1/chat/completions:
// GET /v1/models (Status 200), or anything else (Status 404) — an unknown
// path, or a proxy CONNECT to another host.
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

// New returns an unstarted Server whose model answers each POST
// /v1/chat/completions with script(request). script is called from the
// request's goroutine, once per request, side requests included; it must be
// safe for concurrent use (parent and child sessions, and title generation,
// run at once). A nil script answers Text("ok") to everything.
func New(script func(Request) Reply) *Server {
	if script == nil {
		script = func(Request) Reply { return Text("ok") }
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{Models: []string{"m"}, script: script, ctx: ctx, cancel: cancel}
}

// Start listens on a free loopback port and serves in the background. The
// listen error, if any, is returned. Start on a started or closed Server is
// an error.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("start chat stand-in: server closed")
	}
	if s.ln != nil {
		return errors.New("start chat stand-in: already started")
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

// URL returns the server's root URL, "http://127.0.0.1:PORT" (the value
// for proxy variables); "" before Start.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// BaseURL returns the API base URL a provider is configured with,
// "http://127.0.0.1:PORT/v1"; "" before Start.
func (s *Server) BaseURL() string {
	if u := s.URL(); u != "" {
		return u + "/v1"
	}
	return ""
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

// Requests returns a copy of the log of POST /v1/chat/completions requests,
// in arrival order. Safe for concurrent use.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Calls returns a copy of the log of every other request, in arrival
// order. Safe for concurrent use.
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
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		s.serveChat(w, r, body)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		s.logCall(r, http.StatusOK, body)
		s.serveModels(w)
	default:
		s.logCall(r, http.StatusNotFound, body)
		writeError(w, &Error{Status: http.StatusNotFound, Type: "not_found_error", Message: "no route for " + r.Method + " " + r.URL.Path})
	}
}

// serveModels answers GET /v1/models.
func (s *Server) serveModels(w http.ResponseWriter) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range s.Models {
		list.Data = append(list.Data, model{ID: id, Object: "model", OwnedBy: "standin"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

// serveChat decodes, logs and answers one model request.
func (s *Server) serveChat(w http.ResponseWriter, r *http.Request, body []byte) {
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
	call, err := reply.wireCall(fmt.Sprintf("call_standin%08d", id))
	if err != nil {
		writeError(w, &Error{Status: http.StatusInternalServerError, Type: "server_error", Message: err.Error()})
		return
	}
	c := completion{
		ID:      fmt.Sprintf("chatcmpl-standin%08d", id),
		Created: time.Now().Unix(),
		Model:   req.Model,
		Text:    reply.Text,
		Call:    call,
		Finish:  reply.FinishReason(),
		Usage:   newUsage(len(body), len(reply.Text)),
	}
	if call != nil {
		c.Usage = newUsage(len(body), len(reply.Text)+len(call.Function.Arguments))
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(c.message())
		return
	}
	c.stream(r.Context(), w, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
}

// logCall records a request outside POST /v1/chat/completions.
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
		typ = "server_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": e.Message, "type": typ, "code": nil},
	})
}
