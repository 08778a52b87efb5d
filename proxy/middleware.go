package proxy

import (
	"bufio"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// statusWriter remembers the status a handler wrote, for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets streaming handlers (the live event feed) flush through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack lets the live feed's WebSocket upgrade take over the connection; the request log then
// shows 101.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return c, rw, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests logs every request's method, route, status and latency; never its body. Health
// probes, and MCP clients' GET /mcp for an event stream (405), log at debug level so that
// routine polling does not flood the log.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		route := r.Pattern
		switch h := r.PathValue("harness"); {
		case route == "":
			route = "(none)"
		case route == "/hooks/{harness}" && h != "":
			if _, ok := s.Harnesses.Get(h); ok { // a known name: the set is fixed
				route = "/hooks/" + h
			}
		}
		args := []any{"method", r.Method, "route", route, "status", sw.status, "latency", time.Since(start).Round(time.Microsecond).String()}
		switch {
		case route == "/healthz" || route == "/readyz":
			// Probes ask every few seconds; a failed one says why in its body, and the store
			// logs a full disk once a minute.
			s.Logger.Debug("request", args...)
		case sw.status == http.StatusServiceUnavailable:
			s.Logger.Warn("request", args...)
		case sw.status >= 500:
			s.Logger.Error("request", args...)
		case route == "/mcp" && r.Method == http.MethodGet && sw.status == http.StatusMethodNotAllowed,
			strings.HasPrefix(r.URL.Path, "/.well-known/") && sw.status == http.StatusNotFound:
			// An MCP client asking for a server-sent event stream, which a stateless server has
			// none of, or looking for OAuth metadata, which it has none of: the protocol's
			// expected answers, not problems.
			s.Logger.Debug("request", args...)
		case sw.status >= 400:
			s.Logger.Warn("request", args...)
		default:
			// Never an INFO line per hook or call: a busy harness makes hundreds a second, and
			// the metrics count them (STYLE 17).
			s.Logger.Debug("request", args...)
		}
	})
}

// checkCaller rejects requests that cannot come from a local harness or user before they reach a
// route: a Host that is not a loopback name while we listen on loopback (DNS rebinding), a browser
// cross-origin request, and, when a token is set, a request without it (probes excepted).
func (s *Server) checkCaller(next http.Handler) http.Handler {
	loopbackBind := isLoopbackHost(hostOnly(s.Addr))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopbackBind && !isLoopbackHost(hostOnly(r.Host)) {
			s.writeError(w, r, Errorf(ECodeForbidden, "host "+r.Host+" not allowed"))
			return
		}
		if !sameOrigin(r) {
			s.writeError(w, r, Errorf(ECodeForbidden, "cross-origin requests not allowed"))
			return
		}
		if r.Header.Get("Sec-Fetch-Mode") == "no-cors" && !uiOpen(r) { // the page's own script and style sheet load so
			s.writeError(w, r, Errorf(ECodeForbidden, "no-cors requests not allowed"))
			return
		}
		if s.Token != "" && !open(r.URL.Path) && !uiOpen(r) && !s.hasToken(r) {
			s.writeError(w, r, Errorf(ECodeUnauthorized, "bearer token required"))
			return
		}
		s.setUICookie(w, r)
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether r carries no Origin, or one that is ours: a loopback name with
// r's own host and port. A browser page elsewhere must not reach the API, nor open the live
// feed (the WebSocket upgrade checks this again).
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && isLoopbackHost(u.Hostname()) && u.Host == r.Host
}

// open reports whether path is served without the token: the probes, and the OAuth discovery
// paths MCP clients try first (/.well-known/…), which answer 404 so that a client goes on with
// its configured bearer token instead of starting an OAuth flow.
func open(path string) bool {
	return path == "/healthz" || path == "/readyz" || strings.HasPrefix(path, "/.well-known/")
}

// hasToken reports whether r carries the configured bearer token in its Authorization header,
// or is one of the viewer's reads with its cookie (see hasUICookie).
func (s *Server) hasToken(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return s.hasUICookie(r)
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) == 1
}

// hostOnly strips the port from a host[:port].
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// isLoopbackHost reports whether host is "localhost" or a loopback IP.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
