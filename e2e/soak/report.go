package soak

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Phases of a run, as samples name them.
const (
	PhaseIdle  = "idle"  // heirloom started and following the stand-ins, no load yet
	PhaseLoad  = "load"  // the mixed load runs
	PhaseAfter = "after" // the load has stopped; heirloom sits idle again
)

// Sample is what the soak saw of heirloom at one moment, and what happened since the previous
// sample. Rates are per second over that interval.
type Sample struct {
	T          float64 `json:"t_s"` // seconds since the load began; negative before it
	Phase      string  `json:"phase"`
	RSS        int64   `json:"rss_bytes"`        // VmRSS of /proc/<pid>/status
	Goroutines int     `json:"goroutines"`       // go_goroutines of /metrics
	HeapInuse  int64   `json:"heap_inuse_bytes"` // go_memstats_heap_inuse_bytes
	OpenFDs    int     `json:"open_fds"`         // process_open_fds
	StoreBytes int64   `json:"store_bytes"`      // heirloom_store_bytes
	Ingested   int64   `json:"ingested_bytes"`   // bytes handed to heirloom so far: transcripts and stream frames

	Hooks      float64            `json:"hooks_per_s"`              // Claude Code hook calls answered
	Stored     map[string]float64 `json:"stream_stored_per_s"`      // stream events the engine accepted, by harness
	Sent       map[string]float64 `json:"stream_sent_per_s"`        // frames the stand-ins published, by harness
	Connected  map[string]bool    `json:"stream_connected"`         // heirloom's connection to each stand-in
	Feed       float64            `json:"feed_events_per_s"`        // live feed messages the consumers read
	IngestRate float64            `json:"ingest_bytes_per_s"`       // bytes handed to heirloom
	Paths      map[string]Latency `json:"paths,omitempty"`          // latency of each path over the interval
	Hook       *Latency           `json:"hook_all,omitempty"`       // every hook event together, over the interval
	Degraded   int64              `json:"degraded_total,omitempty"` // replies so far that lacked a block they should carry

	counts map[string]float64 // the soak's and heirloom's counters, for the next sample's rates
}

// Restart is one restart of an upstream stand-in and how heirloom took it.
type Restart struct {
	Harness     string  `json:"harness"`
	At          float64 `json:"at_s"`         // seconds since the load began
	DownMs      int64   `json:"down_ms"`      // how long the stand-in was gone
	Clean       bool    `json:"clean"`        // the stream ended cleanly first (OpenCode: server.instance.disposed)
	ReconnectMs int64   `json:"reconnect_ms"` // from listening again to heirloom connected; -1: it did not
	StoredAfter float64 `json:"stored_after"` // stream events stored in the 5 s after reconnecting; -1: the load ended first
}

// Report is the outcome of a soak.
type Report struct {
	Started  time.Time `json:"started"`
	Duration float64   `json:"load_s"` // how long the load ran
	Config   Config    `json:"config"`
	Binary   string    `json:"binary"`
	DataDir  string    `json:"data_dir"`

	IdleRSSBefore        int64 `json:"idle_rss_before_bytes"` // the last idle sample before the load
	IdleRSSAfter         int64 `json:"idle_rss_after_bytes"`  // the last sample after it
	PeakRSS              int64 `json:"peak_rss_bytes"`        // VmHWM at the end
	PeakRSSLoad          int64 `json:"peak_rss_load_bytes"`   // the largest RSS sampled
	GoroutinesIdleBefore int   `json:"goroutines_idle_before"`
	GoroutinesIdleAfter  int   `json:"goroutines_idle_after"`
	GoroutinesPeak       int   `json:"goroutines_peak"`

	Ingested   int64            `json:"ingested_bytes"` // bytes handed to heirloom in all
	StoreBytes int64            `json:"store_bytes"`    // the store's size at the end
	Hooks      int64            `json:"hooks"`          // Claude Code hook calls
	Sent       map[string]int64 `json:"stream_sent"`    // frames published, by harness
	Stored     map[string]int64 `json:"stream_stored"`  // events the engine accepted from each stream, during the load
	FeedEvents int64            `json:"feed_events"`
	FeedConns  int64            `json:"feed_connects"`
	FeedDrops  int64            `json:"feed_dropped"` // connections heirloom ended (a consumer that fell behind)
	SearchHits int64            `json:"searches_with_hits"`
	Runs       map[string]int64 `json:"runs_completed"`   // sub-agent runs heirloom saw complete during the load, by harness
	Degraded   int64            `json:"degraded_replies"` // SubagentStart or SessionStart(compact) without their block
	DegradedIn int64            `json:"degraded_injects"` // /api/inject for a child without the inherited block

	Paths    map[string]Latency  `json:"paths"`            // every path over the load
	HookAll  Latency             `json:"hook_all"`         // every hook event together
	Errors   map[string][]string `json:"errors,omitempty"` // the first errors of each path
	Restarts []Restart           `json:"restarts"`
	Logs     []LogCount          `json:"heirloom_warnings,omitempty"`
	Samples  []Sample            `json:"samples"`

	Violations []string `json:"violations"` // why the run failed; empty when it passed
	Notes      []string `json:"notes,omitempty"`
}

// Failed reports whether the run found a problem.
func (r *Report) Failed() bool { return len(r.Violations) > 0 }

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// sampleLine is one line of the running log: the sample in brief.
func sampleLine(s Sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%6.0fs %-5s rss %6.1f MiB  goroutines %4d  heap %5.1f MiB  store %6.1f MiB  in %7.1f MiB",
		s.T, s.Phase, mb(s.RSS), s.Goroutines, mb(s.HeapInuse), mb(s.StoreBytes), mb(s.Ingested))
	if s.Phase == PhaseLoad {
		fmt.Fprintf(&b, " | hooks %5.1f/s  oc %5.1f/s  claw %5.1f/s  feed %6.1f/s", s.Hooks, s.Stored["opencode"], s.Stored["openclaw"], s.Feed)
		if s.Hook != nil {
			fmt.Fprintf(&b, " | hook p50/p99 %.1f/%.1f ms", s.Hook.P50ms, s.Hook.P99ms)
		}
		for _, p := range [][2]string{{"search", "search"}, {"mcp:session_search", "mcp"}, {"inject", "inject"}} {
			if l, ok := s.Paths[p[0]]; ok {
				fmt.Fprintf(&b, "  %s %.1f/%.1f", p[1], l.P50ms, l.P99ms)
			}
		}
	}
	for h, up := range s.Connected {
		if !up {
			fmt.Fprintf(&b, "  [%s down]", h)
		}
	}
	return b.String()
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// goal says a figure and whether it meets its goal.
func goal(v, limit int64) string {
	if v <= limit {
		return fmt.Sprintf("%.1f MiB (met)", mb(v))
	}
	return fmt.Sprintf("%.1f MiB (over)", mb(v))
}

// WriteText writes the report for people: the figures, the per-path latencies, the restarts,
// and the verdict.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	verdict := "PASS"
	if r.Failed() {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "soak: %s after %.0f s of load (%d Claude Code sessions at once, OpenCode %.0f and OpenClaw %.0f frames/s offered)\n",
		verdict, r.Duration, r.Config.Sessions, r.Config.OpenCodeRate, r.Config.OpenClawRate)
	fmt.Fprintf(&b, "data dir %s\n\n", r.DataDir)
	fmt.Fprintf(&b, "memory   idle before %.1f MiB, peak sampled %.1f MiB (VmHWM %.1f MiB), idle after %.1f MiB\n",
		mb(r.IdleRSSBefore), mb(r.PeakRSSLoad), mb(r.PeakRSS), mb(r.IdleRSSAfter))
	fmt.Fprintf(&b, "goals    idle RSS <= 30 MiB: %s before the load, %s after it; RSS <= 150 MiB after 1 GB ingested: peak %s after %.2f GB\n",
		goal(r.IdleRSSBefore, 30<<20), goal(r.IdleRSSAfter, 30<<20), goal(r.PeakRSSLoad, 150<<20), float64(r.Ingested)/1e9)
	fmt.Fprintf(&b, "goroutines idle before %d, peak %d, idle after %d\n", r.GoroutinesIdleBefore, r.GoroutinesPeak, r.GoroutinesIdleAfter)
	fmt.Fprintf(&b, "ingested %.1f MiB (%.0f KiB/s); store %.1f MiB at the end\n", mb(r.Ingested), float64(r.Ingested)/1024/max(r.Duration, 1), mb(r.StoreBytes))
	fmt.Fprintf(&b, "hooks    %d (%.1f/s)\n", r.Hooks, float64(r.Hooks)/max(r.Duration, 1))
	for _, h := range slices.Sorted(maps.Keys(r.Sent)) {
		fmt.Fprintf(&b, "stream   %-8s %d frames published (%.1f/s), %d events stored (%.1f/s)\n", h, r.Sent[h], float64(r.Sent[h])/max(r.Duration, 1),
			r.Stored[h], float64(r.Stored[h])/max(r.Duration, 1))
	}
	fmt.Fprintf(&b, "runs     completed by harness %v\n", r.Runs)
	fmt.Fprintf(&b, "feed     %d events read (%.1f/s) over %d connections, %d dropped by heirloom\n", r.FeedEvents, float64(r.FeedEvents)/max(r.Duration, 1), r.FeedConns, r.FeedDrops)
	fmt.Fprintf(&b, "degraded %d hook replies without their block, %d injects without the inherited block\n\n", r.Degraded, r.DegradedIn)

	fmt.Fprintf(&b, "%-28s %9s %8s %6s %5s %9s %9s %9s\n", "path", "calls", "per s", "errors", "slow", "p50 ms", "p99 ms", "max ms")
	row := func(name string, l Latency) {
		fmt.Fprintf(&b, "%-28s %9d %8.2f %6d %5d %9.2f %9.2f %9.1f\n", name, l.Calls, float64(l.Calls)/max(r.Duration, 1), l.Errors, l.Slow, l.P50ms, l.P99ms, l.MaxMs)
	}
	row("hook (all events)", r.HookAll)
	for _, name := range slices.Sorted(maps.Keys(r.Paths)) {
		row(name, r.Paths[name])
	}
	if len(r.Restarts) > 0 {
		fmt.Fprintf(&b, "\nrestarts (reconnect: from listening again to heirloom connected)\n")
		for _, rs := range r.Restarts {
			after := "the load ended within 5 s"
			if rs.StoredAfter >= 0 {
				after = fmt.Sprintf("%.0f events stored in the next 5 s", rs.StoredAfter)
			}
			fmt.Fprintf(&b, "  %6.0fs %-8s down %5d ms clean=%-5v reconnect %6d ms, %s\n",
				rs.At, rs.Harness, rs.DownMs, rs.Clean, rs.ReconnectMs, after)
		}
	}
	if len(r.Logs) > 0 {
		fmt.Fprintf(&b, "\nheirloom's warnings and errors\n")
		for _, l := range r.Logs {
			fmt.Fprintf(&b, "  %6d × %s\n", l.Count, l.Line)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(r.Errors)) {
		fmt.Fprintf(&b, "\nfirst errors of %s\n", path)
		for _, e := range r.Errors[path] {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\nnote: %s", n)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "\nFAIL: %s", v)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
