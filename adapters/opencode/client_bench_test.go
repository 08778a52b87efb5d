package opencode_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

// countingSink counts events and keeps none.
type countingSink struct{ n atomic.Int64 }

func (s *countingSink) Consume(context.Context, adapters.Event) error {
	s.n.Add(1)
	return nil
}

// BenchmarkClientReplay streams the recorded parent → child → compaction session through a
// loopback server as fast as the client takes it: one op is one replay of the recording.
func BenchmarkClientReplay(b *testing.B) {
	rec, err := os.ReadFile("testdata/parent-child-compact.sse")
	if err != nil {
		b.Fatal(err)
	}
	frames := int64(bytes.Count(rec, []byte("data: ")))
	srv := newFakeServer(b)
	srv.stream = func(w *sseWriter, r *http.Request, n int) {
		for range b.N {
			if _, err := w.w.Write(rec); err != nil {
				return
			}
			_ = w.rc.Flush()
		}
		w.hold(r)
	}
	srv.start()
	sink := &countingSink{}
	c := opencode.NewClient(srv.URL, sink)
	b.Cleanup(func() { _ = c.Close() })
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	if err := c.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	want := frames * int64(b.N)
	for c.Stats().Frames < want {
		if time.Since(start) > time.Minute {
			b.Fatalf("frames: got %d of %d after a minute", c.Stats().Frames, want)
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(want)/elapsed.Seconds(), "frames/s")
	b.ReportMetric(float64(sink.n.Load())/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(len(rec)*b.N)/elapsed.Seconds()/(1<<20), "MiB/s")
}
