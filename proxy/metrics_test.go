package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/proxy"
)

// fixedStream is an adapters.Stream whose counters are given.
type fixedStream struct{ st adapters.StreamStats }

func (fixedStream) Open(context.Context) error          { return nil }
func (fixedStream) Close() error                        { return nil }
func (f fixedStream) StreamStats() adapters.StreamStats { return f.st }
func metricsBody(t *testing.T, s *proxy.Server) string {
	t.Helper()
	resp, err := http.Get(s.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestMetrics_HooksAndStreams: every hook call is timed by harness and event and counted by
// outcome; a body that does not decode counts as malformed; the stream clients' counters are
// served beside them, two clients of one harness adding up. No label carries a session id.
func TestMetrics_HooksAndStreams(t *testing.T) {
	s := MustOpenServer(t, func(s *proxy.Server) {
		s.Streams = []proxy.NamedStream{
			{Harness: "opencode", Target: "http://127.0.0.1:4096", Stream: fixedStream{adapters.StreamStats{Connected: true, Connects: 3, Reconnects: 2, Events: 40, Malformed: 1}}},
			{Harness: "opencode", Target: "http://127.0.0.1:4097", Stream: fixedStream{adapters.StreamStats{Connects: 1, Events: 2, Dropped: 1, SinkErrors: 4}}},
		}
	})
	for _, body := range []string{startPayload, startPayload, `{"session_id":"5e550000-0000-4000-8000-0000000000c2","hook_event_name":"SomethingNew"}`, `{"not json`} {
		resp, err := http.Post(s.URL()+"/hooks/claude-code", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := metricsBody(t, s)
	for _, want := range []string{
		`heirloom_hook_duration_seconds_count{event="SessionStart",harness="claude-code"} 2`,
		`heirloom_hook_duration_seconds_count{event="other",harness="claude-code"} 1`,
		`heirloom_adapter_events_total{harness="claude-code",outcome="accepted",source="hook"} 3`,
		`heirloom_adapter_events_total{harness="claude-code",outcome="malformed",source="hook"} 1`,
		`heirloom_adapter_events_total{harness="opencode",outcome="accepted",source="stream"} 42`,
		`heirloom_adapter_events_total{harness="opencode",outcome="malformed",source="stream"} 1`,
		`heirloom_adapter_events_total{harness="opencode",outcome="refused",source="stream"} 1`,
		`heirloom_adapter_events_total{harness="opencode",outcome="failed",source="stream"} 4`,
		`heirloom_stream_connected{harness="opencode",target="http://127.0.0.1:4096"} 1`,
		`heirloom_stream_connected{harness="opencode",target="http://127.0.0.1:4097"} 0`,
		`heirloom_stream_reconnects_total{harness="opencode",target="http://127.0.0.1:4096"} 2`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("GET /metrics lacks %s", want)
		}
	}
	if strings.Contains(got, "5e550000-0000-4000-8000-0000000000c1") || strings.Contains(got, "5e550000-0000-4000-8000-0000000000c2") {
		t.Errorf("a session id in a label:\n%s", got)
	}
}

// TestMetrics_FromTheStart: a fresh sidecar serves heirloom's series for every registered
// harness at 0 (no proxy mode, no traffic needed), and the store's and index's figures; a
// sub-agent's life then counts its inherited block (and its size) and its run's end.
func TestMetrics_FromTheStart(t *testing.T) {
	tr := cct.NewTree(t, "S")
	s := openFeedServer(t, tr, proxy.FeedOptions{})
	got := metricsBody(t, s)
	for _, want := range []string{
		`heirloom_adapter_events_total{harness="claude-code",outcome="accepted",source="hook"} 0`,
		`heirloom_upstream_requests_total{harness="claude-code",outcome="unreachable"} 0`,
		`heirloom_blocks_delivered_total{block="inherited",harness="claude-code"} 0`,
		`heirloom_block_chars_count{block="recovered",harness="claude-code"} 0`,
		`heirloom_runs_ended_total{end_reason="watchdog_timeout",harness="claude-code"} 0`,
		`heirloom_spawn_refused_total{enforced="true",harness="claude-code",limit="max_depth"} 0`,
		"heirloom_store_bytes ", "heirloom_store_compactions_total ", "heirloom_index_version 2",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("a fresh sidecar's /metrics lacks %q", want)
		}
	}
	spawnLifecycle(t, s, tr)
	got = metricsBody(t, s)
	for _, want := range []string{
		`heirloom_blocks_delivered_total{block="inherited",harness="claude-code"} 1`,
		`heirloom_block_chars_count{block="inherited",harness="claude-code"} 1`,
		`heirloom_block_chars_bucket{block="inherited",harness="claude-code",le="9500"} 1`,
		`heirloom_runs_ended_total{end_reason="completed",harness="claude-code"} 1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("after a sub-agent's life, /metrics lacks %q", want)
		}
	}
}

// TestMetrics_Dashboard: docs/grafana-dashboard.json is valid JSON, and every heirloom series its
// panels query is one /metrics serves.
func TestMetrics_Dashboard(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil || len(d.Panels) == 0 {
		t.Fatalf("the dashboard does not parse: %v", err)
	}
	tr := cct.NewTree(t, "S")
	s := MustOpenServer(t, func(s *proxy.Server) {
		s.Engine.Config.TranscriptRoots = []string{tr.Root}
		s.Streams = []proxy.NamedStream{{Harness: "opencode", Target: "http://127.0.0.1:4096", Stream: fixedStream{adapters.StreamStats{Connected: true}}}}
	})
	spawnLifecycle(t, s, tr)
	served := metricsBody(t, s)
	name := regexp.MustCompile(`\bheirloom_[a-z_]+`) // process_* and go_* are serve's registry's
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			for _, m := range name.FindAllString(q.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
				if !strings.Contains(served, "# TYPE "+base+" ") {
					t.Errorf("panel %q queries %s, which /metrics does not serve", p.Title, m)
				}
			}
		}
	}
}
