package proxy

import (
	"context"
	"errors"
	"net/http"

	"github.com/heirloom-dev/heirloom/kv"
)

// routeAPI registers the read API under /api/. Each route answers GET (and HEAD); any other
// method gets a JSON 405 naming the allowed ones.
func (s *Server) routeAPI(mux *http.ServeMux) {
	s.routeGet(mux, "/api/sessions", s.listSessions)
	mux.Handle("GET /api/sessions/{key}", s.apiHandler(s.getSession))
	mux.Handle("DELETE /api/sessions/{key}", s.apiHandler(s.deleteSession))
	mux.HandleFunc("/api/sessions/{key}", func(w http.ResponseWriter, r *http.Request) {
		s.allow(w, r, http.MethodGet, http.MethodHead, http.MethodDelete)
	})
	s.routeGet(mux, "/api/sessions/{key}/transcript", s.getTranscript)
	s.routeGet(mux, "/api/sessions/{key}/lineage", s.getLineage)
	s.routeGet(mux, "/api/sessions/{key}/blocks", s.getBlocks)
	s.routeGet(mux, "/api/runs", s.listRuns)
	s.routeGet(mux, "/api/runs/{id}", s.getRun)
	mux.Handle("POST /api/inject", s.apiHandler(s.postInject))
	mux.Handle("GET /api/inject", deprecated(s.apiHandler(s.getInject)))
	mux.HandleFunc("/api/inject", func(w http.ResponseWriter, r *http.Request) {
		s.allow(w, r, http.MethodPost)
	})
	mux.Handle("POST /api/sessions/{key}/checkpoints", s.apiHandler(s.postCheckpoint))
	mux.HandleFunc("/api/sessions/{key}/checkpoints", func(w http.ResponseWriter, r *http.Request) {
		s.allow(w, r, http.MethodPost)
	})
	// Search shares its path with GET and DELETE /api/sessions/{key}: its own 405 for GET.
	mux.Handle("POST /api/sessions/search", s.apiHandler(s.postSearch))
	mux.HandleFunc("GET /api/sessions/search", func(w http.ResponseWriter, r *http.Request) {
		s.allow(w, r, http.MethodPost)
	})
	s.routeGet(mux, "/api/index", s.getIndex)
	s.routeGet(mux, "/api/status", s.getStatus)
	mux.Handle("POST /api/index/rebuild", s.apiHandler(s.postReindex))
	mux.HandleFunc("/api/index/rebuild", func(w http.ResponseWriter, r *http.Request) {
		s.allow(w, r, http.MethodPost)
	})
	// The live feed: a WebSocket (events.go).
	mux.HandleFunc("GET /api/events", s.serveEvents)
	mux.HandleFunc("/api/events", func(w http.ResponseWriter, r *http.Request) {
		s.allow(w, r, http.MethodGet)
	})
	mux.Handle("POST /api/spawn-check", s.apiHandler(s.postSpawnCheck))
	mux.HandleFunc("/api/spawn-check", func(w http.ResponseWriter, r *http.Request) {
		s.allow(w, r, http.MethodPost)
	})
}

// deprecated marks every reply of h as from a deprecated route (GET /api/inject), naming its
// successor.
func deprecated(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Deprecation", injectDeprecatedSince)
		w.Header().Set("Link", `</api/inject>; rel="successor-version"`)
		h.ServeHTTP(w, r)
	})
}

// Handler returns the handler the server serves once open: every route, behind the caller checks
// and the request log. It is built once, by Open; nil before Open. Tests use it to drive requests
// through httptest.NewRecorder.
func (s *Server) Handler() http.Handler {
	if s.http == nil {
		return nil
	}
	return s.http.Handler
}

// apiFunc is an API handler: it returns the reply to send as JSON with status 200, or an error
// for apiHandler to write.
type apiFunc func(r *http.Request) (any, error)

// routeGet registers h for GET and HEAD on pattern, and a JSON 405 for every other method.
func (s *Server) routeGet(mux *http.ServeMux, pattern string, h apiFunc) {
	mux.Handle("GET "+pattern, s.apiHandler(h))
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s.allow(w, r, http.MethodGet, http.MethodHead)
	})
}

// apiHandler adapts h to net/http: its reply is written as JSON, its error through writeError,
// the one place errors become HTTP. When the client has gone away
// nothing is written.
func (s *Server) apiHandler(h apiFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		reply, err := h(r)
		switch {
		case err == nil:
			writeJSON(w, http.StatusOK, reply)
		case r.Context().Err() != nil && errors.Is(err, r.Context().Err()):
			// The caller hung up or timed out: nobody reads a reply.
		default:
			s.writeError(w, r, err)
		}
	}
}

// notFound turns kv.ErrNotFound from a store call about what into a 404 naming it; any other
// error is returned as is.
func notFound(err error, what string) error {
	if errors.Is(err, kv.ErrNotFound) {
		return Errorf(ECodeNotFound, what+" not found")
	}
	return err
}

// ignoreNotFound returns nil for an error wrapping kv.ErrNotFound, else err.
func ignoreNotFound(err error) error {
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	return err
}

// runByChild returns the run paired with session id, or nil when none is.
func (s *Server) runByChild(ctx context.Context, scope, id string) (*APIRun, error) {
	r, err := s.store().RunByChild(ctx, scope, id)
	if err != nil {
		return nil, ignoreNotFound(err)
	}
	run := apiRun(r)
	return &run, nil
}
