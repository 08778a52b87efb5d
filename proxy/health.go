package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

// handleHealthz answers 200 while the process is up. It touches nothing.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	if !s.allow(w, r, http.MethodGet, http.MethodHead) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz answers 200 when the store is open and takes a synced write, else 503 saying
// why (a full disk names its free space and the reserve). A full disk is not logged here: the
// store says it once a minute.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	if !s.allow(w, r, http.MethodGet, http.MethodHead) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.store().Check(ctx); err != nil {
		why := "store not writable" // the rest is for the log: /readyz needs no token
		switch {
		case errors.Is(err, kv.ErrDiskFull):
			why += ": " + err.Error() // how much is free against the reserve; logged by the store
		case errors.Is(err, kv.ErrClosed):
			why += ": store closed"
		default:
			s.Logger.Warn("not ready", "error", err)
		}
		s.writeError(w, r, Errorf(ECodeUnavailable, why))
		return
	}
	reply := map[string]any{"status": "ready"}
	if st := s.store().IndexStatus(); st.Building {
		reply["search_index"] = fmt.Sprintf("building: %d of %d turns indexed; searches see those", st.Done, st.Total)
	}
	writeJSON(w, http.StatusOK, reply)
}
