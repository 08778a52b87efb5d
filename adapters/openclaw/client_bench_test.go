package openclaw_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/openclaw/gatewaytest"
)

// countingSink counts events and keeps none.
type countingSink struct{ n atomic.Int64 }

func (s *countingSink) Consume(context.Context, adapters.Event) error {
	s.n.Add(1)
	return nil
}

// BenchmarkClientReplay streams the frames recorded from OpenClaw 2026.9.6 while a parent
// spawned a sub-agent through a loopback Gateway as fast as the client takes them: one op is
// one replay of the recording, read, decoded and handed to the Sink.
func BenchmarkClientReplay(b *testing.B) {
	rec, err := gatewaytest.LoadRecording("testdata/live/spawn.all-frames.json")
	if err != nil {
		b.Fatal(err)
	}
	frames, err := gatewaytest.EventFrames(rec)
	if err != nil {
		b.Fatal(err)
	}
	size, perReplay := 0, 0
	for _, f := range frames {
		size += len(f.Payload)
		evs, _ := openclaw.DecodeEvent(f.Event, f.Payload)
		perReplay += len(evs)
	}
	srv := gatewaytest.NewServer(b, gatewaytest.Options{})
	sink := &countingSink{}
	c := openclaw.NewClient(srv.URL(), sink)
	b.Cleanup(func() { _ = c.Close() })
	if err := c.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	for c.Stats().Resyncs == 0 {
		time.Sleep(time.Millisecond)
	}
	b.ReportAllocs()
	b.ResetTimer()
	began := time.Now()
	for range b.N {
		srv.Replay(frames)
	}
	want := int64(perReplay * b.N)
	for sink.n.Load() < want {
		if time.Since(began) > time.Minute {
			b.Fatalf("events: got %d of %d after a minute", sink.n.Load(), want)
		}
		time.Sleep(100 * time.Microsecond)
	}
	elapsed := time.Since(began)
	b.StopTimer()
	b.ReportMetric(float64(len(frames)*b.N)/elapsed.Seconds(), "frames/s")
	b.ReportMetric(float64(want)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(size*b.N)/elapsed.Seconds()/(1<<20), "MiB/s")
}
