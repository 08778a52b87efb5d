package proxy

import (
	"net/http"
	"strings"

	"github.com/heirloom-dev/heirloom/ui"
)

// uiCookie holds the sidecar's token for the viewer's own reads: a browser cannot put a bearer
// header on a page load or a WebSocket.
const uiCookie = "heirloom_token"

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
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: s.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// uiOpen reports whether path is one of the viewer's static files (no data: served without the
// token).
func uiOpen(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && (r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, "/ui/"))
}
