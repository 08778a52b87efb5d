package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/opencode"
	"github.com/heirloom-dev/heirloom/proxy"
)

// streamSessions is how many OpenCode sessions stream at once in BenchmarkOpenCodeStream: a
// parent and its child each, so twice as many sessions in the store.
const streamSessions = 8

// BenchmarkOpenCodeStream is stream ingest at harness speed: a loopback OpenCode stand-in sends
// the recorded parent → child → compaction stream for streamSessions sessions at once, their
// frames interleaved, as fast as heirloom's real OpenCode client takes them over HTTP, into the
// engine and a real Pebble store on disk. One op is one replay for every session (8 × 32
// events). It reports events/s stored (the clock stops once the last event is on disk: the
// store synced it) and the peak heap.
func BenchmarkOpenCodeStream(b *testing.B) {
	s := mustOpenServer(b, nil)
	frames := sseFrames(b, "../adapters/opencode/testdata/parent-child-compact.sse")
	want := int64(b.N * streamSessions * 32)
	srv := openCodeStandIn(b, func(ctx context.Context, w io.Writer) {
		for r := 0; r < b.N && ctx.Err() == nil; r++ {
			if _, err := w.Write(streamReplay(frames, r)); err != nil {
				return
			}
		}
	})
	c := opencode.NewClient(srv.URL, s.Engine)
	b.Cleanup(func() { _ = c.Close() })
	var peak uint64
	b.ResetTimer()
	start := time.Now()
	if err := c.Open(b.Context()); err != nil {
		b.Fatal(err)
	}
	var ms runtime.MemStats
	for n := 0; c.Stats().Events < want; n++ {
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("events: %d of %d after five minutes (%+v)", c.Stats().Events, want, c.Stats())
		}
		if n%100 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.Engine.Store.Sync(b.Context()); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	st := c.Stats()
	if st.SinkErrors > 0 || st.Malformed > 0 || st.Reconnects > 0 {
		b.Fatalf("stream: %+v", st)
	}
	b.ReportMetric(float64(want)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	checkReplay(b, s, b.N-1)
}

// BenchmarkHookUnderStream measures a Claude Code hook's latency (UserPromptSubmit over loopback
// HTTP, 4 clients, each its own session, each pausing 5 ms between calls, about 700 calls/s in
// all: busy sessions; the prompt is stored with a synced write) with the store otherwise quiet,
// and while an OpenCode stand-in streams into the same heirloom as fast as it takes the events
// (as BenchmarkOpenCodeStream). It reports p50 and p99 of both and the events/s stored while
// the hooks ran.
func BenchmarkHookUnderStream(b *testing.B) {
	for _, streaming := range []bool{false, true} {
		b.Run(map[bool]string{false: "quiet", true: "streaming"}[streaming], func(b *testing.B) {
			benchHookUnderStream(b, streaming)
		})
	}
}

func benchHookUnderStream(b *testing.B, streaming bool) {
	const clients = 4
	s := mustOpenServer(b, nil)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients + 4, DisableCompression: true}}
	b.Cleanup(hc.CloseIdleConnections)
	call := func(c, i int) time.Duration {
		payload := fmt.Appendf(nil, `{"session_id":"4d1c7e3a-0000-4000-8000-%012d","transcript_path":"","cwd":"/work/app","hook_event_name":"UserPromptSubmit","prompt":"prompt %d: keep the parser's API stable while reading parse.go"}`, c, i)
		start := time.Now()
		resp, err := hc.Post(s.URL()+"/hooks/claude-code", "application/json", bytes.NewReader(payload))
		if err != nil {
			b.Error(err)
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Errorf("hook: %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	for c := range clients {
		call(c, -1)
	}
	var events func() int64
	if streaming {
		frames := sseFrames(b, "../adapters/opencode/testdata/parent-child-compact.sse")
		srv := openCodeStandIn(b, func(ctx context.Context, w io.Writer) {
			for r := 0; ctx.Err() == nil; r++ {
				if _, err := w.Write(streamReplay(frames, r)); err != nil {
					return
				}
			}
		})
		c := opencode.NewClient(srv.URL, s.Engine)
		b.Cleanup(func() { _ = c.Close() })
		if err := c.Open(b.Context()); err != nil {
			b.Fatal(err)
		}
		for c.Stats().Events < 1000 { // streaming at full speed before the clock starts
			time.Sleep(time.Millisecond)
		}
		events = func() int64 { return c.Stats().Events }
	}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	var before int64
	if events != nil {
		before = events()
	}
	b.ResetTimer()
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				lat[i] = call(c, int(i))
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	p := func(q int) float64 { return float64(lat[min(len(lat)-1, len(lat)*q/100)].Nanoseconds()) }
	b.ReportMetric(p(50), "p50-ns")
	b.ReportMetric(p(99), "p99-ns")
	if events != nil {
		b.ReportMetric(float64(events()-before)/elapsed.Seconds(), "events/s")
	}
}

// streamReplay is replay r of the recorded stream for streamSessions sessions, interleaved
// frame by frame, as SSE; session k's ids are suffixed "r<r>k<k>".
func streamReplay(frames [][]byte, r int) []byte {
	var buf bytes.Buffer
	for _, f := range frames {
		for k := range streamSessions {
			suffix := fmt.Appendf(nil, "r%dk%d", r, k)
			f := bytes.ReplaceAll(f, []byte(ocParent), append([]byte(ocParent), suffix...))
			f = bytes.ReplaceAll(f, []byte(ocChild), append([]byte(ocChild), suffix...))
			buf.WriteString("data: ")
			buf.Write(f)
			buf.WriteString("\n\n")
		}
	}
	return buf.Bytes()
}

// checkReplay fails unless replay r's last session linked its child: a benchmark of a no-op
// proves nothing.
func checkReplay(tb testing.TB, s *proxy.Server, r int) {
	tb.Helper()
	suffix := fmt.Sprintf("r%dk%d", r, streamSessions-1)
	child, err := s.Engine.Store.GetSession(context.Background(), "default", ocChild+suffix)
	if err != nil || child.ParentID != ocParent+suffix || child.TurnCount == 0 {
		tb.Fatalf("replay %d: child %+v, err %v", r, child, err)
	}
}

// openCodeStandIn serves GET /event once as an event stream whose body write writes (the
// stream is then held open until the test ends), and an empty session list for the client's
// resync, on loopback.
func openCodeStandIn(tb testing.TB, write func(ctx context.Context, w io.Writer)) *httptest.Server {
	tb.Helper()
	done := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/event":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			once.Do(func() { write(r.Context(), w) })
			http.NewResponseController(w).Flush()
			select {
			case <-done:
			case <-r.Context().Done():
			}
		case "/session":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("[]"))
		default:
			http.NotFound(w, r)
		}
	}))
	tb.Cleanup(func() { close(done); srv.Close() })
	return srv
}
