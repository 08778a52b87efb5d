package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/heirloom-dev/heirloom/adapters"
)

// hookHandler serves one harness's hook endpoint: decode, decide within HookTimeout, reply.
//
// Bad requests get a JSON error (400 malformed, 405 method, 413 too large). Everything after a
// successful decode fails open: whatever goes wrong or runs late, the harness gets 200 and the
// empty reply, never an error it would show its user.
//
// With an upstream (up not nil), the call is also forwarded to it while heirloom decides, and
// the reply is the upstream's with heirloom's context first (see forward). A body heirloom
// cannot decode is then still forwarded, and the upstream's reply passed through as it is.
func (s *Server) hookHandler(hooks func() adapters.Hooks, up *upstream) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h := hooks()
		if h == nil {
			s.writeError(w, r, Errorf(ECodeNotFound, "no adapter for "+r.URL.Path))
			return
		}
		if !s.allow(w, r, http.MethodPost) {
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.MaxBodyBytes))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ev, err := h.Decode(body)
		if err != nil && up != nil {
			s.Logger.Debug("undecodable hook call forwarded as it is", "harness", h.Harness(), "error", err)
			mine := make(chan []byte, 1)
			mine <- h.Reply(adapters.Event{}, "")
			s.forward(w, r, up, body, adapters.Event{Harness: h.Harness()}, mine)
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ev.At = s.Now()
		if ev.Kind == adapters.KindUnknown {
			s.Logger.Debug("unhandled hook event", "harness", ev.Harness, "event", ev.Name)
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.HookTimeout)
		defer cancel()
		if up != nil {
			// Forward while deciding: the harness waits for the slower of the two, not both.
			mine := make(chan []byte, 1)
			go func() { mine <- h.Reply(ev, s.decideInTime(ctx, ev)) }()
			s.forward(w, r, up, body, ev, mine)
			return
		}
		text := s.decideInTime(ctx, ev)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(h.Reply(ev, text))
	}
}

// decideInTime runs the decision for ev and returns the context text for the reply, or "" when
// ctx ends first or the decision fails. Work still running past the deadline finishes in the
// background under the server's own context, so nothing acknowledged is left half-written.
func (s *Server) decideInTime(ctx context.Context, ev adapters.Event) string {
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		text, err := s.decide(s.ctx, ev)
		done <- result{text, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			if errors.Is(res.err, context.Canceled) {
				return ""
			}
			s.Logger.Error("hook failed", "harness", ev.Harness, "event", ev.Name, "session", ev.SessionID, "error", res.err)
			return ""
		}
		return res.text
	case <-ctx.Done():
		s.Logger.Warn("hook over its deadline; replied empty", "harness", ev.Harness, "event", ev.Name, "session", ev.SessionID)
		return ""
	}
}
