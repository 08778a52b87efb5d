package soak

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// samples makes a run's samples: idle ones before the load (t < 0), one every 5 s under load
// for 120 s with RSS and goroutines from rss and gor, and idle ones after, with goroutines
// afterGor. A little noise is added, as a real machine adds it.
func samples(rss func(t float64) float64, gor func(t float64) int, afterGor int) []Sample {
	r := rand.New(rand.NewPCG(1, 2))
	noise := func() float64 { return 1 + (r.Float64()-0.5)*0.04 }
	var out []Sample
	for t := -10.0; t < 0; t += 5 {
		out = append(out, Sample{T: t, Phase: PhaseIdle, RSS: 30 << 20, Goroutines: 28})
	}
	for t := 5.0; t <= 120; t += 5 {
		out = append(out, Sample{T: t, Phase: PhaseLoad, RSS: int64(rss(t) * noise() * (1 << 20)), Goroutines: gor(t) + r.IntN(8)})
	}
	for t := 125.0; t <= 150; t += 5 {
		out = append(out, Sample{T: t, Phase: PhaseAfter, RSS: 45 << 20, Goroutines: afterGor})
	}
	return out
}

// TestCheckGrowth shows that the soak can fail: synthetic runs whose memory or goroutines grow
// without bound, break a cap or leak past the load fail; runs that level off pass.
func TestCheckGrowth(t *testing.T) {
	flatGor := func(float64) int { return 50 }
	levelling := func(t float64) float64 { return 45 - 15/(1+t/10) } // cache and heap filling up
	tests := []struct {
		name    string
		samples []Sample
		want    string // a violation containing this; "" for none
	}{
		{"Flat", samples(func(float64) float64 { return 45 }, flatGor, 30), ""},
		{"LevelsOff", samples(levelling, flatGor, 30), ""},
		{"WarmupGrowthIgnored", samples(func(t float64) float64 { return 20 + min(t, 30) }, flatGor, 30), ""},
		{"RSSGrowsLinearly", samples(func(t float64) float64 { return 20 + 0.8*t }, flatGor, 30), "RSS grows under load"},
		{"RSSOverCap", samples(func(t float64) float64 { return 150 + t/60 }, flatGor, 30), "over the cap of 150.0 MiB"},
		{"GoroutinesGrow", samples(func(float64) float64 { return 45 }, func(t float64) int { return 40 + 2*int(t) }, 30), "goroutines grow under load"},
		{"GoroutinesOverCap", samples(func(float64) float64 { return 45 }, func(t float64) int { return 990 + int(t) }, 30), "over the cap of 1000"},
		{"GoroutinesLeakPastLoad", samples(func(float64) float64 { return 45 }, flatGor, 80), "goroutines leak"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, notes := CheckGrowth(tt.samples, DefaultLimits())
			if len(notes) > 0 {
				t.Errorf("notes %q, want none", notes)
			}
			switch {
			case tt.want == "" && len(v) > 0:
				t.Errorf("violations %q, want none", v)
			case tt.want != "" && !containsAny(v, tt.want):
				t.Errorf("violations %q, want one with %q", v, tt.want)
			}
		})
	}
}

// TestCheckGrowth_TooShort: a run too short to judge says so instead of passing silently.
func TestCheckGrowth_TooShort(t *testing.T) {
	s := samples(func(t float64) float64 { return 40 + t }, func(float64) int { return 50 }, 30)
	var short []Sample
	for _, x := range s {
		if x.Phase != PhaseLoad || x.T <= 50 {
			short = append(short, x)
		}
	}
	v, notes := CheckGrowth(short, DefaultLimits())
	if len(v) > 0 || len(notes) != 1 || !strings.Contains(notes[0], "growth not judged") {
		t.Errorf("violations %q, notes %q; want only a note that growth was not judged", v, notes)
	}
}

func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestHistQuantile: percentiles read from the log buckets are within their 4% of the truth.
func TestHistQuantile(t *testing.T) {
	var h hist
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	for _, tt := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.99, 990 * time.Millisecond}, {1, 1000 * time.Millisecond}} {
		got := h.quantile(tt.q)
		if d := float64(got-tt.want) / float64(tt.want); d < -0.04 || d > 0.04 {
			t.Errorf("quantile(%v) = %v, want %v ± 4%%", tt.q, got, tt.want)
		}
	}
	var empty hist
	if got := empty.quantile(0.5); got != 0 {
		t.Errorf("empty quantile = %v, want 0", got)
	}
}
