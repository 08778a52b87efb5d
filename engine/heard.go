package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// heard keeps when heirloom last heard from each harness: a hook, a plugin's call or event, a
// streamed event. `heirloom doctor` shows it.
type heard struct {
	m sync.Map // harness name → *atomic.Int64 (UnixNano)
}

// note records that harness was heard from at t.
func (h *heard) note(harness string, t time.Time) {
	if harness == "" {
		return
	}
	v, ok := h.m.Load(harness)
	if !ok {
		v, _ = h.m.LoadOrStore(harness, new(atomic.Int64))
	}
	v.(*atomic.Int64).Store(t.UnixNano())
}

// LastHeard returns when heirloom last heard from each harness it heard from since it started.
func (e *Engine) LastHeard() map[string]time.Time {
	out := map[string]time.Time{}
	e.heard.m.Range(func(k, v any) bool {
		out[k.(string)] = time.Unix(0, v.(*atomic.Int64).Load()).UTC()
		return true
	})
	return out
}
