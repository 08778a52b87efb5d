package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/proxy"
)

// benchUpstreamReply is what the benchmark's upstream answers to every hook: a memory daemon's
// typical reply, a decision and some context.
const benchUpstreamReply = `{"continue":true,"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","additionalContext":"memory: the team runs go test -race before every commit"}}`

// BenchmarkProxyAddedLatency measures what putting heirloom in front of an existing http hook
// target costs a harness: the same PreToolUse(Bash) hook call is sent, over real HTTP on
// loopback with keep-alive connections, first to the upstream directly, then to heirloom
// configured with that upstream, which forwards it while it records the call (one synced Pebble
// write) and merges the replies. Each client is its own session. It reports p50 and p99 of both,
// the added latency at p50 and p99 (proxied minus direct), and, untimed, the same calls to a
// heirloom without an upstream (heirloom-alone): the proxied call should cost about the larger of
// direct and heirloom-alone, not their sum. ns/op covers one direct and one proxied call. The upstream answers at once (delay 0: the worst case for the added latency) or
// after a delay, as a daemon that does work would, which heirloom's own work then overlaps.
func BenchmarkProxyAddedLatency(b *testing.B) {
	for _, delay := range []time.Duration{0, 5 * time.Millisecond} {
		for _, clients := range []int{1, 50} {
			b.Run(fmt.Sprintf("upstream=%v/clients=%d", delay, clients), func(b *testing.B) {
				benchProxy(b, delay, clients)
			})
		}
	}
}

func benchProxy(b *testing.B, delay time.Duration, clients int) {
	var upstreamCalls atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		upstreamCalls.Add(1)
		if delay > 0 {
			time.Sleep(delay)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, benchUpstreamReply)
	}))
	b.Cleanup(up.Close)
	s := mustOpenServer(b, func(s *proxy.Server) {
		s.Upstreams = map[string]*proxy.Upstream{"claude-code": {URL: up.URL + "/hook"}}
	})
	alone := mustOpenServer(b, nil) // heirloom without an upstream: its own cost of the same call
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients + 8, DisableCompression: true}}
	// Before the servers shut down: a connection dialed but never used would hold up their
	// Shutdown for 5s.
	b.Cleanup(client.CloseIdleConnections)
	payloads := make([][]byte, clients)
	for i := range payloads {
		id := fmt.Sprintf("5e550000-0000-4000-8000-%012d", i)
		payloads[i] = fmt.Appendf(nil, `{"session_id":%q,"transcript_path":"","cwd":"/work/app","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_use_id":"toolu_%02d"}`, id, i)
		// Each session started first, as Claude Code starts it: the calls measured are those of a
		// running session (heirloom records no session a later event merely names).
		for _, srv := range []*proxy.Server{s, alone} {
			resp, err := client.Post(srv.URL()+"/hooks/claude-code", "application/json",
				strings.NewReader(fmt.Sprintf(`{"session_id":%q,"cwd":"/work/app","hook_event_name":"SessionStart","source":"startup"}`, id)))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("SessionStart of %s: %s", id, resp.Status)
			}
		}
	}
	call := func(url string, payload []byte) time.Duration {
		start := time.Now()
		resp, err := client.Post(url, "application/json", bytes.NewReader(payload))
		if err != nil {
			b.Error(err)
			return 0
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		el := time.Since(start)
		if url == alone.URL()+"/hooks/claude-code" {
			if resp.StatusCode != http.StatusOK || string(body) != "{}" {
				b.Errorf("%s: %d %s", url, resp.StatusCode, body)
			}
			return el
		}
		if resp.StatusCode != http.StatusOK || string(body) != benchUpstreamReply {
			b.Errorf("%s: %d %s", url, resp.StatusCode, body)
		}
		return el
	}
	// run sends b.N calls to url from clients goroutines and returns their latencies.
	run := func(url string) []time.Duration {
		lat := make([]time.Duration, b.N)
		var next atomic.Int64
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= int64(b.N) {
						return
					}
					lat[i] = call(url, payloads[c])
				}
			})
		}
		wg.Wait()
		slices.Sort(lat)
		return lat
	}
	// Warm both paths: connections open, sessions exist.
	for c := range clients {
		call(up.URL+"/hook", payloads[c])
		call(s.URL()+"/hooks/claude-code", payloads[c])
		call(alone.URL()+"/hooks/claude-code", payloads[c])
	}
	upstreamCalls.Store(0)
	b.ResetTimer()
	direct := run(up.URL + "/hook")
	proxied := run(s.URL() + "/hooks/claude-code")
	b.StopTimer()
	own := run(alone.URL() + "/hooks/claude-code")
	if got := upstreamCalls.Load(); got != int64(2*b.N) {
		b.Fatalf("upstream saw %d calls, want %d", got, 2*b.N)
	}
	p := func(lat []time.Duration, q int) float64 {
		return float64(lat[min(len(lat)-1, len(lat)*q/100)].Nanoseconds())
	}
	b.ReportMetric(p(direct, 50), "direct-p50-ns")
	b.ReportMetric(p(direct, 99), "direct-p99-ns")
	b.ReportMetric(p(proxied, 50), "proxied-p50-ns")
	b.ReportMetric(p(proxied, 99), "proxied-p99-ns")
	b.ReportMetric(p(own, 50), "heirloom-alone-p50-ns")
	b.ReportMetric(p(own, 99), "heirloom-alone-p99-ns")
	b.ReportMetric(p(proxied, 50)-p(direct, 50), "added-p50-ns")
	b.ReportMetric(p(proxied, 99)-p(direct, 99), "added-p99-ns")
}
