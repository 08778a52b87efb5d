// Package standin is the loopback server the model-API stand-ins (packages
// chatapi and messagesapi) share: its lifecycle, the request log the tests
// assert on, the log of every other call, routing, error replies, and the
// pieces of a reply both wire formats build from (server-sent events,
// chunked deltas, token estimates, tool input, the text of a conversation).
// What differs is given to New: the model endpoint, the other routes, and a
// Format, the wire format of requests, replies and errors.
package standin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// maxBody is the largest request body read; the rest is dropped.
const maxBody = 64 << 20

// Format is a model API's wire format, as a Server needs it: R is its
// decoded request, P the reply a test's script returns. Its methods are
// called from request goroutines.
type Format[R, P any] interface {
	// Failure returns the API error a reply asks for instead of an answer,
	// or nil.
	Failure(reply P) *Error
	// Write writes reply to req: whole, or as a stream when req asked for
	// one (see NewStream; r.Context() ends when the client goes or the
	// Server closes). It returns an error, answered as a 500, only before it
	// has written anything.
	Write(w http.ResponseWriter, r *http.Request, req R, reply P) error
	// ErrorBody returns the JSON body of an API error; a zero Type stands
	// for the API's type of a server error.
	ErrorBody(e Error) any
}

// Route answers a request outside the model endpoint, given its body, with
// status 200.
type Route func(w http.ResponseWriter, body []byte)

// Received is what a Server records about a model request beside its
// decoded body. A request type embeds it; New fills it in.
type Received struct {
	// Seq numbers model requests from 1 in arrival order.
	Seq int `json:"-"`
	// Header holds the request headers.
	Header http.Header `json:"-"`
	// Raw is the undecoded body.
	Raw json.RawMessage `json:"-"`
}

// received gives a Server the Received that a request type embeds.
func (r *Received) received() *Received { return r }

// request is the constraint on a request type: it embeds Received.
type request[R any] interface {
	*R
	received() *Received
}

// Error is an API error reply: HTTP Status (zero means 500), an error Type
// and a Message, written in the API's body format (Format.ErrorBody).
type Error struct {
	Status  int
	Type    string
	Message string
}

// Call is a request the stand-in got outside its model endpoint: another
// route (Status 200), a model request whose body did not decode (400), or
// anything else (404): an unknown path, or a proxy CONNECT to another host.
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

// Server is a stand-in for one model API: New makes it, Start starts it,
// Close stops it. Safe for concurrent use.
type Server[R, P any] struct {
	modelPath string
	routes    map[string]Route
	format    Format[R, P]
	script    func(R) P
	received  func(*R) *Received

	mu       sync.Mutex
	requests []R
	calls    []Call

	ln     net.Listener
	srv    *http.Server
	url    string
	ctx    context.Context // cancelled by Close: ends streams in flight
	cancel context.CancelFunc
	done   chan struct{} // closed when Serve has returned
	closed bool
}

// New returns an unstarted Server for an API in format whose model endpoint
// is POST modelPath: such a request is decoded from JSON into R (which
// embeds Received), its Received filled in, logged (Requests), and answered
// with what script returns for it. Other requests are answered by routes,
// keyed by "METHOD /path", and logged as Calls; anything else is answered
// 404 and logged. script is called from the request's goroutine, once per
// request; it must be safe for concurrent use (harnesses run sub-agents and
// side calls at once).
func New[R any, P any, PR request[R]](modelPath string, routes map[string]Route, format Format[R, P], script func(R) P) *Server[R, P] {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server[R, P]{
		modelPath: modelPath,
		routes:    routes,
		format:    format,
		script:    script,
		received:  func(r *R) *Received { return PR(r).received() },
		ctx:       ctx,
		cancel:    cancel,
	}
}

// Start listens on a free loopback port and serves in the background. The
// listen error, if any, is returned. Start on a started or closed Server is
// an error.
func (s *Server[R, P]) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("start stand-in for %s: server closed", s.modelPath)
	}
	if s.ln != nil {
		return fmt.Errorf("start stand-in for %s: already started", s.modelPath)
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

// URL returns the server's root URL, "http://127.0.0.1:PORT" (also the
// value for proxy variables); "" before Start.
func (s *Server[R, P]) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Close ends streams in flight, closes the listener and every connection,
// and waits for the serving goroutine; it does not wait for a script call
// still running, whose reply is then dropped. It is safe to call twice and
// without Start. The logs stay readable after Close.
func (s *Server[R, P]) Close() {
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

// Requests returns a copy of the log of model requests, in arrival order.
func (s *Server[R, P]) Requests() []R {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]R(nil), s.requests...)
}

// Calls returns a copy of the log of every other request, in arrival
// order: other routes, model requests that did not decode, unknown paths,
// and proxy CONNECTs when a harness uses the stand-in as its HTTP(S) proxy.
func (s *Server[R, P]) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// serveHTTP routes one request.
func (s *Server[R, P]) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		s.writeError(w, &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "read body: " + err.Error()})
		return
	}
	if r.Method == http.MethodPost && r.URL.Path == s.modelPath {
		s.serveModel(w, r, body)
		return
	}
	if route, ok := s.routes[r.Method+" "+r.URL.Path]; ok {
		s.logCall(r, http.StatusOK, body)
		route(w, body)
		return
	}
	s.logCall(r, http.StatusNotFound, body)
	s.writeError(w, &Error{Status: http.StatusNotFound, Type: "not_found_error", Message: "no route for " + r.Method + " " + r.URL.Path})
}

// serveModel decodes, logs and answers one model request.
func (s *Server[R, P]) serveModel(w http.ResponseWriter, r *http.Request, body []byte) {
	var req R
	if err := json.Unmarshal(body, &req); err != nil {
		s.logCall(r, http.StatusBadRequest, body)
		s.writeError(w, &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "decode request: " + err.Error()})
		return
	}
	rcv := s.received(&req)
	rcv.Header, rcv.Raw = r.Header.Clone(), body
	s.mu.Lock()
	rcv.Seq = len(s.requests) + 1
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	reply := s.script(req)
	if e := s.format.Failure(reply); e != nil {
		s.writeError(w, e)
		return
	}
	if err := s.format.Write(w, r, req, reply); err != nil {
		s.writeError(w, &Error{Status: http.StatusInternalServerError, Message: err.Error()})
	}
}

// logCall records a request outside the model endpoint.
func (s *Server[R, P]) logCall(r *http.Request, status int, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: r.Method, Host: r.Host, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Status: status, Body: body})
}

// writeError writes e in the API's format.
func (s *Server[R, P]) writeError(w http.ResponseWriter, e *Error) {
	status := e.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	WriteJSON(w, status, s.format.ErrorBody(*e))
}

// WriteJSON writes v as a JSON body with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
