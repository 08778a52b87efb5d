package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/openclaw/gatewaytest"
)

// BenchmarkOpenClawInjectDescribe measures what a sub-agent's first prompt build waits for when
// heirloom has not yet heard of the sub-agent from the Gateway's stream: POST /api/inject over
// loopback HTTP, heirloom asking the Gateway (sessions.describe over the client's live WebSocket),
// storing the answer and building the block from the recorded parent. Every iteration is a new
// sub-agent. Reports p50 and p99.
func BenchmarkOpenClawInjectDescribe(b *testing.B) {
	rec, err := gatewaytest.LoadRecording(clawFramesFile)
	if err != nil {
		b.Fatal(err)
	}
	frames, err := gatewaytest.EventFrames(rec)
	if err != nil {
		b.Fatal(err)
	}
	gw := gatewaytest.NewServer(b, gatewaytest.Options{Token: clawToken})
	s, _ := clawFollow(b, gw)
	for deadline := time.Now().Add(20 * time.Second); gw.Subscribed() < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the client did not subscribe")
		}
	}
	gw.Replay(frames)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := s.Engine.Store.GetSession(b.Context(), clawScope, clawChild); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the replay was not stored")
		}
	}
	client := &http.Client{}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		key := fmt.Sprintf("agent:main:subagent:%08x-0000-4000-8000-000000000000", i)
		gw.SetDescribe(key, clawRow(b, key, clawParent, 1))
		b.StartTimer()
		start := time.Now()
		resp, err := client.Post(s.URL()+"/api/inject", "application/json", strings.NewReader(`{"harness":"openclaw","session":"`+key+`"}`))
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(start))
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte("SPAWN-PLEASE")) {
			b.Fatalf("inject: %d %s", resp.StatusCode, body)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Nanoseconds()), "p99-ns")
}
