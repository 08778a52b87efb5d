//go:build unix

package proxy_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/proxy"
)

// TestUpstreamParallel proves heirloom forwards a hook call while it works on it, not before or
// after. The parent's transcript is swapped for a named pipe: heirloom's SubagentStart opens it
// to read the parent's latest turns, and opening a pipe blocks until the other end opens too. The
// upstream opens the writing end, without blocking, and answers only once that succeeds, i.e.
// once heirloom's decision is under way. Done one after the other, either side would wait for
// the other in vain: the upstream first would time out (and the reply would lack its context),
// heirloom first would pass its deadline (and the reply would lack the inherited block).
func TestUpstreamParallel(t *testing.T) {
	var fifo string
	var overlapped atomic.Bool
	f := newProxyFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(readAll(r.Body), `"SubagentStart"`) {
			io.WriteString(w, "{}")
			return
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			// With no reader yet, a non-blocking open for writing fails with ENXIO.
			pipe, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err == nil {
				pipe.Close()
				overlapped.Store(true)
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		io.WriteString(w, `{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"upstream ran while heirloom worked"}}`)
	}, func(s *proxy.Server) {
		s.HookTimeout = 4 * time.Second
		s.Upstreams["claude-code"].Timeout = 4 * time.Second
	})
	payload := f.prime(t)
	fifo = f.tr.Transcript
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	t.Cleanup(func() {
		// Should heirloom still wait on the pipe (the test failed), let it go so Close returns.
		if pipe, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			pipe.Close()
		}
	})

	got := postHook(t, f.heirloom, mustJSON(t, payload))
	ctx := additionalContext(t, got)
	if !overlapped.Load() {
		t.Errorf("the upstream never saw heirloom reading the transcript during its call")
	}
	if !strings.HasPrefix(ctx, "## Inherited from Parent Session") || !strings.Contains(ctx, "MARK-4411") ||
		!strings.HasSuffix(ctx, "\n\nupstream ran while heirloom worked") {
		t.Errorf("got %q, want heirloom's block then the upstream's context", ctx)
	}
	if n := upstreamCount(t, f.heirloom, proxy.OutcomeOK); n != 3 {
		t.Errorf("ok count %v, want 3", n)
	}
}

func readAll(r io.Reader) string {
	b, _ := io.ReadAll(r)
	return string(b)
}
