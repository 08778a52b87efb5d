package proxy

import "net/http"

// EventsHandler is GET /api/events' handler alone, without the caller checks in front of it:
// tests use it to show that the WebSocket upgrade refuses a cross-origin page by itself.
func (s *Server) EventsHandler() http.Handler { return http.HandlerFunc(s.serveEvents) }
