package proxy

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/heirloom-dev/heirloom/ui"
)

// The viewer's cookie. A browser cannot put a bearer header on a page load or a WebSocket, so
// the page trades the token once (POST /ui/session) for a cookie. The cookie is not the token:
// it is a value derived from it that only reads accept (uiReads), and only from the viewer's own
// origin (Sec-Fetch-Site same-origin), since a browser sends a host's cookies to every port of
// it. Its name carries the port, so two sidecars on one host keep theirs apart.

// uiCookieName is the viewer's cookie for the server listening at addr (host:port).
func uiCookieName(addr string) string {
	port := ""
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		port = addr[i+1:]
	}
	return "heirloom_ui_" + port
}

// uiCookieValue is the value the viewer's cookie holds for token: an HMAC of a fixed purpose
// under the token, which grants reads and cannot be turned back into the token.
func uiCookieValue(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("heirloom viewer: reads only"))
	return hex.EncodeToString(m.Sum(nil))
}

// uiReads are the requests the viewer's cookie authorises: the reads the page makes, and
// search (a POST that changes nothing).
func uiReads(r *http.Request) bool {
	p := r.URL.Path
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return p == "/api/sessions" || p == "/api/runs" || p == "/api/events" || p == "/api/status" || p == "/api/index" ||
			strings.HasPrefix(p, "/api/runs/") ||
			strings.HasPrefix(p, "/api/sessions/") && (strings.Count(p, "/") == 3 || strings.HasSuffix(p, "/lineage") ||
				strings.HasSuffix(p, "/blocks") || strings.HasSuffix(p, "/transcript"))
	case http.MethodPost:
		return p == "/api/sessions/search"
	}
	return false
}

// hasUICookie reports whether r is one of the viewer's reads carrying its cookie, from its own
// origin.
func (s *Server) hasUICookie(r *http.Request) bool {
	// From the viewer's own page: a fetch says so (Sec-Fetch-Site), a WebSocket names its
	// Origin, which checkCaller has found to be this very host and port. A page on another port
	// of the host navigating here says same-site, and names no Origin.
	fromPage := r.Header.Get("Sec-Fetch-Site") == "same-origin" || r.Header.Get("Origin") != "" && sameOrigin(r)
	if !uiReads(r) || !fromPage {
		return false
	}
	c, err := r.Cookie(uiCookieName(r.Host))
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(uiCookieValue(s.Token))) == 1
}

// routeUI serves the lineage viewer: its static files at /ui/ (no data in them: open, like the
// probes), and POST /ui/session, which takes the bearer token once and keeps it in a cookie
// for this origin, so the page's reads and its live feed carry it.
func (s *Server) routeUI(mux *http.ServeMux) {
	files := http.FileServerFS(ui.Assets())
	mux.Handle("GET /ui/", http.StripPrefix("/ui/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:")
		files.ServeHTTP(w, r)
	})))
	mux.Handle("GET /ui", http.RedirectHandler("/ui/", http.StatusFound))
	mux.Handle("POST /ui/session", s.apiHandler(func(r *http.Request) (any, error) {
		// The caller checks passed: the bearer token is right (or none is configured).
		return struct{}{}, nil
	}))
}

// setUICookie answers POST /ui/session with the token's cookie.
func (s *Server) setUICookie(w http.ResponseWriter, r *http.Request) {
	if s.Token == "" || r.Method != http.MethodPost || r.URL.Path != "/ui/session" {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: uiCookieName(r.Host), Value: uiCookieValue(s.Token), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// uiOpen reports whether path is one of the viewer's static files (no data: served without the
// token).
func uiOpen(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && (r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, "/ui/"))
}
