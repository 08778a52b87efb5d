package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// PluginHarness is a harness that reaches heirloom through a plugin of its own (OpenClaw): the
// plugin posts hook events to /hooks/{harness} and asks /api/inject before each model call.
// Its session keys name their memory scope and say whether they belong to a sub-agent.
type PluginHarness interface {
	// Harness names the harness, as in adapters.Event.Harness and the /hooks/{harness} path.
	Harness() string
	// DecodeHook decodes one body the plugin posted. Bad input returns an error wrapping
	// adapters.ErrMalformed; a hook the adapter does not know decodes to KindUnknown.
	DecodeHook(body []byte) (adapters.Event, error)
	// ScopeOf returns the memory scope of a session key; "" means the configured scope.
	ScopeOf(session string) string
	// IsSubagent reports whether a session key, by itself, names a sub-agent.
	IsSubagent(session string) bool
}

// SessionDescriber asks a streaming harness about one session now (OpenClaw's Gateway client).
type SessionDescriber interface {
	// Describe returns the session's current state as events for Consume. It fails fast when
	// not connected and honours ctx's deadline.
	Describe(ctx context.Context, session string) ([]adapters.Event, error)
}

// DefaultDescribeWait bounds how long /api/inject waits for a harness to describe a sub-agent
// whose parent heirloom does not know yet. A prompt build waits on it, so it is short.
const DefaultDescribeWait = 300 * time.Millisecond

// pluginHookHandler serves POST /hooks/{harness} for a PluginHarness: decode, apply like a
// streamed event within HookTimeout, reply {}. Bad requests get a JSON error (400, 405, 413);
// everything after a successful decode fails open.
func (s *Server) pluginHookHandler(w http.ResponseWriter, r *http.Request) {
	ph := s.plugin(r.PathValue("harness"))
	if ph == nil {
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
	ev, err := ph.DecodeHook(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if ev.Kind == adapters.KindUnknown {
		s.Logger.Debug("unhandled plugin hook", "harness", ev.Harness, "event", ev.Name)
	} else {
		ctx, cancel := context.WithTimeout(r.Context(), s.HookTimeout)
		defer cancel()
		s.consumeInTime(ctx, ev)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}"))
}

// consumeInTime applies ev like a streamed event, waiting until ctx ends at most. Work still
// running past the deadline finishes in the background under the server's own context.
func (s *Server) consumeInTime(ctx context.Context, ev adapters.Event) {
	done := make(chan error, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		done <- s.Consume(s.ctx, ev)
	}()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			s.Logger.Error("plugin hook failed", "harness", ev.Harness, "event", ev.Name, "session", ev.SessionID, "error", err)
		}
	case <-ctx.Done():
		s.Logger.Warn("plugin hook over its deadline; answered", "harness", ev.Harness, "event", ev.Name, "session", ev.SessionID)
	}
}

// plugin returns the PluginHarness named harness, or nil.
func (s *Server) plugin(harness string) PluginHarness {
	if s.OpenClaw != nil && harness != "" && s.OpenClaw.Harness() == harness {
		return s.OpenClaw
	}
	return nil
}

// describeParent asks the harness's Gateway about sub-agent session id, whose parent is not
// known yet, within DescribeWait; what it learns is stored. It returns the parent it found, or
// "" (no describer, not connected, too slow, no parent).
func (s *Server) describeParent(ctx context.Context, scope, id string) string {
	if s.OpenClawGateway == nil || s.DescribeWait < 0 {
		return ""
	}
	wait := s.DescribeWait
	if wait == 0 {
		wait = DefaultDescribeWait
	}
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	evs, err := s.OpenClawGateway.Describe(dctx, id)
	if err != nil {
		s.Logger.Debug("describe failed; answering from what is stored", "session", id, "error", err)
		return ""
	}
	for _, ev := range evs {
		if err := s.Consume(ctx, ev); err != nil {
			s.Logger.Warn("describe: event not stored", "session", ev.SessionID, "error", err)
		}
	}
	sess, err := s.Store.GetSession(ctx, scope, id)
	if err != nil {
		if !errors.Is(err, kv.ErrNotFound) {
			s.Logger.Warn("describe: session not read back", "session", id, "error", err)
		}
		return ""
	}
	return sess.ParentID
}
