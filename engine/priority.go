package engine

import (
	"context"
	"sync"
	"time"
)

// streamYield is the longest a streamed event waits for a harness's calls in flight to finish
// before it is applied anyway (see harnessFirst); yieldShare of every yieldWindow is the most
// the streams spend waiting so, so that harnesses busy without pause slow a stream down by a
// quarter at most rather than to one event per streamYield.
const (
	streamYield = 2 * time.Millisecond
	yieldWindow = 100 * time.Millisecond
	yieldShare  = yieldWindow / 4
)

// harnessFirst gives a harness's calls (hooks, plugin calls) the machine before streamed
// events: a harness waits on its call, while a stream's events wait in the connection at no
// one's cost. Each call is counted in flight from start to answer; a streamed event arriving
// while any is in flight waits until none is, or streamYield at most, within the streams'
// share of waiting. The zero value is ready to use.
type harnessFirst struct {
	mu     sync.Mutex
	n      int
	idle   chan struct{} // closed when n falls to zero; made anew when it rises from zero
	window time.Time     // start of the current yieldWindow
	waited time.Duration // waited in it
}

// enter counts a call in flight; the func it returns ends it.
func (h *harnessFirst) enter() func() {
	h.mu.Lock()
	if h.n == 0 {
		h.idle = make(chan struct{})
	}
	h.n++
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		if h.n--; h.n == 0 {
			close(h.idle)
		}
		h.mu.Unlock()
	}
}

// wait returns once no call is in flight, after streamYield at most, at once when the streams
// used their share of waiting, or when ctx ends.
func (h *harnessFirst) wait(ctx context.Context) {
	h.mu.Lock()
	now := time.Now()
	if now.Sub(h.window) >= yieldWindow {
		h.window, h.waited = now, 0
	}
	if h.n == 0 || h.waited >= yieldShare {
		h.mu.Unlock()
		return
	}
	idle := h.idle
	h.mu.Unlock()
	t := time.NewTimer(streamYield)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	}
	h.mu.Lock()
	h.waited += time.Since(now)
	h.mu.Unlock()
}
