package opencode_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
)

// A starting OpenCode never answers an /event request that reaches it too early, while later
// requests answer at once. The client must give up on the first within HeaderTimeout, not wait
// the whole IdleTimeout, so it follows a restarted server within seconds.
func TestClientHeaderTimeout(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newFakeServer(t)
	srv.beforeHeaders = func(r *http.Request, n int) {
		if n == 1 {
			<-r.Context().Done() // the early request: no headers, ever
		}
	}
	srv.start()
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.URL, sink)
	c.IdleTimeout = 30 * time.Second
	c.HeaderTimeout = 300 * time.Millisecond
	start := time.Now()
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, 10*time.Second, "a connection after the silent first attempt", func() bool { return c.Stats().Connects >= 1 })
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("connected after %v: the wait for headers was not bounded by HeaderTimeout", took)
	}
	if got := c.Stats().IdleTimeouts; got < 1 {
		t.Fatalf("idle timeouts: got %d, want the first attempt counted", got)
	}
	// Once connected, silence is judged by IdleTimeout again: no further drops within a second.
	connects := c.Stats().Connects
	time.Sleep(time.Second)
	if got := c.Stats().Connects; got != connects {
		t.Fatalf("connects: got %d after a quiet second, want %d (IdleTimeout is 30s)", got, connects)
	}
}
