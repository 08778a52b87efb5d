package engine

import (
	"context"
	"sync"
	"time"
)

// streamYield is the longest a streamed event waits for a harness's calls in flight to finish
// before it is applied anyway (see harnessFirst).
const streamYield = 2 * time.Millisecond

// harnessFirst gives a harness's calls (hooks, plugin calls) the machine before streamed
// events: a harness waits on its call, while a stream's events wait in the connection at no
// one's cost. Each call is counted in flight from start to answer; a streamed event arriving
// while any is in flight waits until none is, or streamYield at most, so a busy harness slows
// a stream down but never stops it. The zero value is ready to use.
type harnessFirst struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n falls to zero; made anew when it rises from zero
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

// wait returns once no call is in flight, after streamYield at most, or when ctx ends.
func (h *harnessFirst) wait(ctx context.Context) {
	h.mu.Lock()
	if h.n == 0 {
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
}
