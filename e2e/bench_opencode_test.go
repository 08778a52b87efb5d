package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

// BenchmarkOpenCodeIngest decodes and stores the recorded OpenCode stream (parent, child,
// compaction) at full speed: every frame through opencode.DecodeFrame and the engine's Consume
// into a real Pebble store. Each iteration replays it with fresh session ids, so every
// iteration creates new sessions rather than re-upserting old ones. It reports events/s and the
// peak heap in use, sampled after every iteration.
func BenchmarkOpenCodeIngest(b *testing.B) {
	frames := sseFrames(b, "../adapters/opencode/testdata/parent-child-compact.sse")
	s := mustOpenServer(b, nil)
	ctx := b.Context()
	var events int
	var peak uint64
	var ms runtime.MemStats
	b.ResetTimer()
	for i := range b.N {
		suffix := []byte(fmt.Sprintf("x%07d", i))
		for _, f := range frames {
			f = bytes.ReplaceAll(f, []byte(ocParent), append([]byte(ocParent), suffix...))
			f = bytes.ReplaceAll(f, []byte(ocChild), append([]byte(ocChild), suffix...))
			evs, err := opencode.DecodeFrame(f)
			if err != nil {
				b.Fatal(err)
			}
			for _, ev := range evs {
				if err := s.Engine.Consume(ctx, ev); err != nil {
					b.Fatal(err)
				}
				events++
			}
		}
		if i%8 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	// The last replay must have linked its child: a benchmark of a no-op proves nothing.
	last := fmt.Sprintf("x%07d", b.N-1)
	child, err := s.Engine.Store.GetSession(ctx, "default", ocChild+last)
	if err != nil || child.ParentID != ocParent+last {
		b.Fatalf("last replay: child %+v, err %v", child, err)
	}
}

// BenchmarkInject measures POST /api/inject for a child session whose parent has a realistic
// transcript (200 turns), over real HTTP on loopback, reporting p50 and p99.
func BenchmarkInject(b *testing.B) {
	s := mustOpenServer(b, nil)
	ctx := b.Context()
	parent := adapters.Event{Harness: "opencode", Kind: adapters.KindSessionStart, SessionID: "ses_parent", Cwd: "/work/app", Title: "parser refactor"}
	child := adapters.Event{Harness: "opencode", Kind: adapters.KindSessionStart, SessionID: "ses_child", ParentSessionID: "ses_parent", Cwd: "/work/app"}
	turns := adapters.Event{Harness: "opencode", Kind: adapters.KindTurns, SessionID: "ses_parent"}
	for i := range 200 {
		role := []string{"user", "assistant", "tool"}[i%3]
		turns.Turns = append(turns.Turns, adapters.Turn{ID: fmt.Sprintf("prt_%03d", i), Role: role, Tool: map[bool]string{true: "read"}[role == "tool"],
			Text: strings.Repeat(fmt.Sprintf("turn %d must keep the API stable while reading parse.go; ", i), 8)})
	}
	for _, ev := range []adapters.Event{parent, child, turns} {
		if err := s.Engine.Consume(ctx, ev); err != nil {
			b.Fatal(err)
		}
	}
	client := &http.Client{}
	url := s.URL() + "/api/inject"
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		resp, err := client.Post(url, "application/json", strings.NewReader(`{"harness":"opencode","session":"ses_child"}`))
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(start))
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte("Inherited from Parent Session")) {
			b.Fatalf("inject: %d %s", resp.StatusCode, body)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Nanoseconds()), "p99-ns")
}
