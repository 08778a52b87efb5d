package proxy

import "net/http"

// routeAPI registers the read API under /api/.
func (s *Server) routeAPI(mux *http.ServeMux) {}
