package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
)

// TestLiveOpenCodeFirstCallBeatsTheStream runs the real `opencode serve` with heirloom's plugin,
// heirloom following it through a loopback proxy that delivers OpenCode's event stream (/event)
// streamDelay late and everything else at once. A parent's prompt spawns a child, whose first
// model request comes well within that delay: when the plugin asks heirloom for the child's
// context, the stream has reported neither the child nor the parent's prompt. heirloom must ask
// OpenCode about the child (GET /session/{id}, then the parent's messages) within
// adapters.openclaw.describe_wait rather than answer empty: the child's FIRST model request
// carries the inherited block with the parent's marker.
func TestLiveOpenCodeFirstCallBeatsTheStream(t *testing.T) {
	const streamDelay = 8 * time.Second
	m := ocMarker(t)
	marker := "FIRSTCALL-" + m
	var mu sync.Mutex
	var childFirst time.Time
	l := newOCLive(t, ocSetup{
		Follow: func(ocURL string) string { return delayedEvents(t, ocURL, streamDelay) },
		Script: func(r chatapi.Request) (chatapi.Reply, bool) {
			if r.ParentSessionID() != "" && !r.IsSideRequest() {
				mu.Lock()
				if childFirst.IsZero() {
					childFirst = time.Now()
				}
				mu.Unlock()
			}
			return chatapi.Reply{}, false
		},
	})
	parent := l.newParent(t, "first call") // the session's creation, streamDelay late
	sent := time.Now()
	sp := l.spawn(t, parent, marker)
	mu.Lock()
	ahead := childFirst.Sub(sent)
	mu.Unlock()
	if childFirst.IsZero() || ahead >= streamDelay {
		t.Fatalf("the child's first model request came %v after the parent's prompt, not within the stream's delay of %v: no race", ahead, streamDelay)
	}
	t.Logf("timing: the child's first model request %v after the parent's prompt; the stream is %v late", ahead.Round(time.Millisecond), streamDelay)
	block := ocInheritedBlock(l.firstRequest(t, sp))
	switch {
	case block == "":
		t.Fatalf("the child's first request, ahead of the stream, has no inherited block; requests:%s", ocRequestSummary(l.API.Requests()))
	case !strings.Contains(block, marker):
		t.Errorf("the child's inherited block lacks the parent's marker %s (the prompt the stream had not delivered):\n%s", marker, block)
	}
	ocAssertOffline(t, l.API)
}

// delayedEvents starts a loopback proxy to the OpenCode server at target that passes every
// request through at once but hands each chunk of an /event stream's body on delay after it
// arrived (headers at once, so the client's connect does not time out). It returns the
// proxy's URL; it closes when the test ends.
func delayedEvents(t *testing.T, target string, delay time.Duration) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path == "/event" {
			resp.Body = delayBody(resp.Body, delay)
		}
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// delayBody returns body with each chunk read from it handed on delay after it was read.
func delayBody(body io.ReadCloser, delay time.Duration) io.ReadCloser {
	type chunk struct {
		at time.Time
		b  []byte
	}
	chunks := make(chan chunk, 4096)
	pr, pw := io.Pipe()
	go func() { // read as it comes
		defer close(chunks)
		buf := make([]byte, 32<<10)
		for {
			n, err := body.Read(buf)
			if n > 0 {
				chunks <- chunk{time.Now(), append([]byte(nil), buf[:n]...)}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { // hand on late
		for c := range chunks {
			time.Sleep(time.Until(c.at.Add(delay)))
			if _, err := pw.Write(c.b); err != nil {
				break
			}
		}
		pw.Close()
	}()
	return struct {
		io.Reader
		io.Closer
	}{pr, closers{pr, body}}
}

// closers closes each of its closers.
type closers []io.Closer

func (cs closers) Close() error {
	for _, c := range cs {
		c.Close()
	}
	return nil
}
