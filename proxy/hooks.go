package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
)

// serveHook serves one harness's hook endpoint: decode, ask the engine within HookTimeout,
// reply.
//
// Bad requests get a JSON error (400 malformed, 405 method, 413 too large). Everything after a
// successful decode fails open: whatever goes wrong or runs late, the harness gets 200 and the
// empty reply, never an error it would show its user.
//
// With an upstream (up not nil), the call is also forwarded to it while the engine decides,
// and the reply is the upstream's with heirloom's context first and heirloom's refusal, if any,
// kept (see forward). A body heirloom
// cannot decode is then still forwarded, and the upstream's reply passed through as it is.
func (s *Server) serveHook(w http.ResponseWriter, r *http.Request, harness string, h adapters.Hooks, up *upstream) {
	start := time.Now()
	if !s.allow(w, r, http.MethodPost) {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.MaxBodyBytes))
	if err != nil {
		s.metrics.event(harness, sourceHook, outcomeRefused)
		s.writeError(w, r, err)
		return
	}
	ev, err := h.Decode(body)
	if err != nil {
		s.metrics.event(harness, sourceHook, outcomeMalformed)
		if up != nil {
			s.Logger.Debug("undecodable hook call forwarded as it is", "harness", harness, "error", err)
			mine := make(chan []byte, 1)
			mine <- h.Reply(adapters.Event{}, adapters.Answer{})
			s.forward(w, r, up, body, adapters.Event{Harness: harness}, mine)
			return
		}
		s.writeError(w, r, err)
		return
	}
	defer func() { s.metrics.hookDone(harness, ev, time.Since(start)) }()
	if ev.Kind == adapters.KindUnknown {
		s.Logger.Debug("unhandled hook event", "harness", harness, "event", ev.Name)
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.HookTimeout)
	defer cancel()
	if up != nil {
		// Forward while deciding: the harness waits for the slower of the two, not both.
		mine := make(chan []byte, 1)
		go func() { mine <- h.Reply(ev, s.hookAnswer(ctx, harness, ev)) }()
		s.forward(w, r, up, body, ev, mine)
		return
	}
	a := s.hookAnswer(ctx, harness, ev)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(h.Reply(ev, a))
}

// hookAnswer asks the engine for its answer to ev (context, a refusal) and returns it, or the
// empty answer when ctx ends first or the engine fails: the hook fails open, a spawn heirloom
// could not decide in time goes ahead. Work still running past the deadline finishes in the
// engine's background.
func (s *Server) hookAnswer(ctx context.Context, harness string, ev adapters.Event) adapters.Answer {
	a, err := s.Engine.Hook(ctx, ev)
	if err == nil {
		s.metrics.event(harness, sourceHook, outcomeAccepted)
		return a
	}
	s.metrics.event(harness, sourceHook, outcomeFailed)
	s.logEngineError("hook", harness, ev, err)
	return adapters.Answer{}
}

// servePluginHook serves POST /hooks/{harness} for a harness's plugin: decode, apply like a
// streamed event within HookTimeout, reply {}. Bad requests get a JSON error (400, 405, 413);
// everything after a successful decode fails open.
func (s *Server) servePluginHook(w http.ResponseWriter, r *http.Request, harness string, p adapters.Plugin) {
	start := time.Now()
	if !s.allow(w, r, http.MethodPost) {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.MaxBodyBytes))
	if err != nil {
		s.metrics.event(harness, sourcePlugin, outcomeRefused)
		s.writeError(w, r, err)
		return
	}
	ev, err := p.DecodeHook(body)
	if err != nil {
		s.metrics.event(harness, sourcePlugin, outcomeMalformed)
		s.writeError(w, r, err)
		return
	}
	defer func() { s.metrics.hookDone(harness, ev, time.Since(start)) }()
	if ev.Kind == adapters.KindUnknown {
		s.metrics.event(harness, sourcePlugin, outcomeAccepted)
		s.Logger.Debug("unhandled plugin hook", "harness", harness, "event", ev.Name)
	} else {
		ctx, cancel := context.WithTimeout(r.Context(), s.HookTimeout)
		defer cancel()
		if err := s.Engine.PluginEvent(ctx, ev); err != nil {
			s.metrics.event(harness, sourcePlugin, outcomeFailed)
			s.logEngineError("plugin hook", harness, ev, err)
		} else {
			s.metrics.event(harness, sourcePlugin, outcomeAccepted)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}"))
}

// logEngineError logs why the engine gave a hook no answer: a deadline passed (warn), the
// harness hung up or the engine is shutting down (debug), or it failed (error).
func (s *Server) logEngineError(what, harness string, ev adapters.Event, err error) {
	args := []any{"harness", harness, "event", ev.Name, "session", ev.SessionID}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		s.Logger.Warn(what+" over its deadline; answered without heirloom's context", args...)
	case errors.Is(err, context.Canceled), errors.Is(err, engine.ErrNotOpen):
		s.Logger.Debug(what+" not answered: hung up or shutting down", append(args, "error", err)...)
	case errors.Is(err, kv.ErrDiskFull):
		// Answered without heirloom's work; the store says so once a minute, not per call.
		s.Logger.Debug(what+" not recorded: disk full", append(args, "error", err)...)
	default:
		s.Logger.Error(what+" failed", append(args, "error", err)...)
	}
}
