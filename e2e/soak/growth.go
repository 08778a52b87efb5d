package soak

import (
	"fmt"
	"time"
)

// Limits say when a soak fails on memory and goroutines.
type Limits struct {
	// Warmup is how long after the load starts its samples are not judged for growth: caches
	// fill and the heap finds its size.
	Warmup time.Duration
	// MaxRSS is the most resident memory any sample may show, in bytes; 0: no cap.
	MaxRSS int64
	// MaxGoroutines is the most goroutines any sample may show; 0: no cap.
	MaxGoroutines int
	// RSSGrowth and RSSGrowthBytes bound growth under load: the peak RSS of the last third of
	// the judged samples may exceed the peak of the second third by at most this fraction of
	// it plus this many bytes.
	RSSGrowth      float64
	RSSGrowthBytes int64
	// GoroutineGrowth and GoroutineGrowthN bound goroutine growth the same way.
	GoroutineGrowth  float64
	GoroutineGrowthN int
	// IdleGoroutines bounds a leak that outlives the load: once the load has stopped and
	// heirloom sat idle, it may run at most this many more goroutines than it did idle
	// before the load. Negative: not checked.
	IdleGoroutines int
}

// DefaultLimits are the limits CI runs with: issue 16's 150 MiB cap, and growth slack wide
// enough for the noise of a shared two-core machine (RSS moves by a few MiB from sample to
// sample, goroutines by a dozen with the requests in flight). How steep a leak the thirds
// catch depends on the run's length: in a two-minute run, only one of about 25 MiB or 30
// goroutines a minute (a gentler one still fails the caps or the idle check); in a 30-minute
// run, one of about 1.5 MiB or 2 goroutines a minute.
func DefaultLimits() Limits {
	return Limits{
		Warmup:           30 * time.Second,
		MaxRSS:           150 << 20,
		MaxGoroutines:    1000,
		RSSGrowth:        0.10,
		RSSGrowthBytes:   8 << 20,
		GoroutineGrowth:  0.10,
		GoroutineGrowthN: 20,
		IdleGoroutines:   25,
	}
}

// minJudged is how many samples under load, after the warm-up, the growth check needs: two
// per third at least.
const minJudged = 6

// CheckGrowth judges the samples of a run against l and returns what failed, each a sentence;
// none when the run passes. It also returns notes: what it could not judge.
//
//   - Every sample must stay within the caps.
//   - Under load after the warm-up, the samples are cut in thirds (the first absorbs what is
//     left over); the last third's peak RSS and goroutines must stay within the slack over the
//     second third's. Memory that grows without bound keeps setting new peaks; memory that
//     levels off does not.
//   - The last sample after the load must show no more goroutines than the last idle one
//     before it, plus l.IdleGoroutines.
func CheckGrowth(samples []Sample, l Limits) (violations, notes []string) {
	var judged []Sample
	var idle, after *Sample
	for i, s := range samples {
		if l.MaxRSS > 0 && s.RSS > l.MaxRSS {
			violations = append(violations, fmt.Sprintf("RSS %s at %s (%s) is over the cap of %s", mib(s.RSS), secs(s.T), s.Phase, mib(l.MaxRSS)))
		}
		if l.MaxGoroutines > 0 && s.Goroutines > l.MaxGoroutines {
			violations = append(violations, fmt.Sprintf("%d goroutines at %s (%s) is over the cap of %d", s.Goroutines, secs(s.T), s.Phase, l.MaxGoroutines))
		}
		switch {
		case s.Phase == PhaseLoad && s.T >= l.Warmup.Seconds():
			judged = append(judged, s)
		case s.Phase == PhaseIdle:
			idle = &samples[i]
		case s.Phase == PhaseAfter:
			after = &samples[i]
		}
	}
	if len(judged) < minJudged {
		notes = append(notes, fmt.Sprintf("growth not judged: %d samples under load after the %s warm-up, %d needed (run longer or sample more often)",
			len(judged), l.Warmup, minJudged))
	} else {
		n := len(judged)
		second, last := judged[n-2*(n/3):n-n/3], judged[n-n/3:]
		peak := func(ss []Sample) (rss int64, g int) {
			for _, s := range ss {
				rss, g = max(rss, s.RSS), max(g, s.Goroutines)
			}
			return rss, g
		}
		rss2, g2 := peak(second)
		rss3, g3 := peak(last)
		if allowed := rss2 + int64(l.RSSGrowth*float64(rss2)) + l.RSSGrowthBytes; rss3 > allowed {
			violations = append(violations, fmt.Sprintf("RSS grows under load: the last third's peak %s is over the second third's %s plus slack (%s allowed)",
				mib(rss3), mib(rss2), mib(allowed)))
		}
		if allowed := g2 + int(l.GoroutineGrowth*float64(g2)) + l.GoroutineGrowthN; g3 > allowed {
			violations = append(violations, fmt.Sprintf("goroutines grow under load: the last third's peak %d is over the second third's %d plus slack (%d allowed)",
				g3, g2, allowed))
		}
	}
	switch {
	case l.IdleGoroutines < 0:
	case idle == nil || after == nil:
		notes = append(notes, "goroutines after the load not judged: no idle sample before or after it")
	case after.Goroutines > idle.Goroutines+l.IdleGoroutines:
		violations = append(violations, fmt.Sprintf("goroutines leak: %d idle after the load, %d idle before it (at most %d more allowed)",
			after.Goroutines, idle.Goroutines, l.IdleGoroutines))
	}
	return violations, notes
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func secs(t float64) string { return fmt.Sprintf("%.0fs", t) }
