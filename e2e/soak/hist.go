package soak

import (
	"math"
	"strings"
	"sync"
	"time"
)

// Latencies are kept in logarithmic buckets, each 4% wider than the one before, from 1 µs to
// about 100 s: a percentile read from them is within 4% of the true one, and a histogram has
// a fixed size however long the soak runs.
const (
	histMin     = float64(time.Microsecond)
	histGrowth  = 1.04
	histBuckets = 470 // 1 µs × 1.04^470 ≈ 100 s
)

var histLogGrowth = math.Log(histGrowth)

// hist is a latency histogram. The zero value is empty and ready; it is not safe for
// concurrent use (latencies wraps it).
type hist struct {
	counts [histBuckets]int64
	n      int64
	sum    time.Duration
	max    time.Duration
}

func (h *hist) add(d time.Duration) {
	i := 0
	if float64(d) > histMin {
		i = min(int(math.Log(float64(d)/histMin)/histLogGrowth), histBuckets-1)
	}
	h.counts[i]++
	h.n++
	h.sum += d
	h.max = max(h.max, d)
}

func (h *hist) merge(o *hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// quantile returns the latency below which a fraction q of the values fall: the middle of its
// bucket, never above the largest value seen. Zero when empty.
func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			d := time.Duration(histMin * math.Pow(histGrowth, float64(i)+0.5))
			return min(d, h.max)
		}
	}
	return h.max
}

// latencies records the latency and the outcome of every call on every path: a histogram for
// the current report interval and one for the whole run, per path. Safe for concurrent use.
type latencies struct {
	mu    sync.Mutex
	paths map[string]*pathStats
}

// pathStats is one path's record.
type pathStats struct {
	interval, total hist
	errors          int64 // calls that failed: transport errors, bad status, bad replies
	slow            int64 // calls that succeeded but took longer than the path allows
}

func newLatencies() *latencies { return &latencies{paths: make(map[string]*pathStats)} }

func (l *latencies) path(name string) *pathStats {
	p := l.paths[name]
	if p == nil {
		p = &pathStats{}
		l.paths[name] = p
	}
	return p
}

// record counts one call of path that took d; err says whether it failed, slow whether it was
// too slow. A failed call counts in the errors, not in the latencies.
func (l *latencies) record(path string, d time.Duration, failed, slow bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.path(path)
	if failed {
		p.errors++
		return
	}
	if slow {
		p.slow++
	}
	p.interval.add(d)
	p.total.add(d)
}

// Latency is a path's figures over some span: calls, p50, p99 and the largest, in
// milliseconds.
type Latency struct {
	Calls  int64   `json:"calls"`
	Errors int64   `json:"errors,omitempty"`
	Slow   int64   `json:"slow,omitempty"`
	P50ms  float64 `json:"p50_ms"`
	P99ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }

func (h *hist) latency() Latency {
	return Latency{Calls: h.n, P50ms: ms(h.quantile(0.50)), P99ms: ms(h.quantile(0.99)), MaxMs: ms(h.max)}
}

// takeInterval returns each path's figures since the last call, and those of the paths named
// with prefix together, and starts a new interval.
func (l *latencies) takeInterval(prefix string) (map[string]Latency, Latency) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]Latency, len(l.paths))
	var group hist
	for name, p := range l.paths {
		if p.interval.n > 0 {
			out[name] = p.interval.latency()
		}
		if strings.HasPrefix(name, prefix) {
			group.merge(&p.interval)
		}
		p.interval = hist{}
	}
	return out, group.latency()
}

// totals returns each path's figures over the whole run, with its errors and slow calls.
func (l *latencies) totals() map[string]Latency {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]Latency, len(l.paths))
	for name, p := range l.paths {
		lat := p.total.latency()
		lat.Errors, lat.Slow = p.errors, p.slow
		out[name] = lat
	}
	return out
}

// group returns the figures over the whole run of every path whose name has prefix, merged.
func (l *latencies) group(prefix string) Latency {
	l.mu.Lock()
	defer l.mu.Unlock()
	var h hist
	var errs, slow int64
	for name, p := range l.paths {
		if strings.HasPrefix(name, prefix) {
			h.merge(&p.total)
			errs += p.errors
			slow += p.slow
		}
	}
	lat := h.latency()
	lat.Errors, lat.Slow = errs, slow
	return lat
}
