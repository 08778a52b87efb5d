// Package leaktest checks that a test leaves no goroutine behind: the stream clients' reconnect
// tests (through adapters/internal/streamtest) and the live feed's. Only tests import it.
package leaktest

import (
	"runtime"
	"testing"
	"time"
)

// Check fails the test if, once every other cleanup has run, more goroutines are left than
// when it was called. Call it first in a test, so its cleanup runs last.
func Check(t testing.TB) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		after := settle(before, 2*time.Second)
		if after > before {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("goroutines: got %d after the test, want at most %d as before it\n%s", after, before, buf)
		}
	})
}

// settle waits up to timeout for the goroutine count to drop to want and returns the last
// count: goroutines that are ending need a moment to be gone.
func settle(want int, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}
