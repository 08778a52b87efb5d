package engine

import (
	"context"
	"testing"
	"time"
)

func TestHarnessFirst(t *testing.T) {
	ctx := context.Background()
	var h harnessFirst
	h.wait(ctx) // nothing in flight: at once
	if h.waited != 0 {
		t.Fatalf("waited %v with no call in flight", h.waited)
	}

	// A streamed event waits for the call in flight to end (or streamYield, on a slow machine).
	leave := h.enter()
	go func() { time.Sleep(time.Millisecond / 2); leave() }()
	start := time.Now()
	h.wait(ctx)
	inFlight := func() int { h.mu.Lock(); defer h.mu.Unlock(); return h.n }
	if inFlight() != 0 && time.Since(start) < streamYield {
		t.Fatal("the event went ahead of the call in flight")
	}
	for inFlight() != 0 {
		h.wait(ctx)
	}

	// A call that stays in flight holds each event streamYield at most, and the streams no
	// longer than their share of a window.
	defer h.enter()()
	h.mu.Lock()
	h.window, h.waited = time.Time{}, 0
	h.mu.Unlock()
	start = time.Now()
	h.wait(ctx)
	if el := time.Since(start); el < streamYield {
		t.Fatalf("waited %v for a call in flight, want %v", el, streamYield)
	}
	h.mu.Lock()
	h.window, h.waited = time.Now(), yieldShare
	h.mu.Unlock()
	h.wait(ctx)
	if h.waited != yieldShare {
		t.Fatalf("waited past the streams' share: %v", h.waited)
	}
}
