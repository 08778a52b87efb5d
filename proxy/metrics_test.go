package proxy_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

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
	for _, body := range []string{startPayload, startPayload, `{"session_id":"s2","hook_event_name":"SomethingNew"}`, `{"not json`} {
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
	if strings.Contains(got, `"s1"`) || strings.Contains(got, `"s2"`) {
		t.Errorf("a session id in a label:\n%s", got)
	}
}
