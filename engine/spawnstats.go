package engine

import (
	"cmp"
	"slices"
	"sync"
)

// Limits a spawn can be over: SpawnDecision.Limit and the limit label of SpawnRefusals.
const (
	LimitMaxDepth    = "max_depth"    // spawn.max_depth
	LimitMaxChildren = "max_children" // spawn.max_children
)

// SpawnRefusalCount is how many spawns of one harness were over one limit, enforced or not.
type SpawnRefusalCount struct {
	Harness  string // the harness as registered; "other" for a name the engine does not know
	Limit    string // LimitMaxDepth or LimitMaxChildren
	Enforced bool   // refused; false: observe mode let it go ahead
	Count    uint64
}

// refusalCounts are the engine's SpawnRefusals, by harness, limit and enforced.
type refusalCounts struct {
	mu sync.Mutex
	n  map[SpawnRefusalCount]uint64 // keys have Count 0
}

// add counts one spawn of harness over limit.
func (c *refusalCounts) add(harness, limit string, enforced bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[SpawnRefusalCount]uint64{}
	}
	c.n[SpawnRefusalCount{Harness: harness, Limit: limit, Enforced: enforced}]++
}

// SpawnRefusals returns how many spawns were over a spawn limit since the engine was made, by
// harness, limit and whether they were refused, sorted; every registered harness has its series
// for both limits and both modes, at 0 until counted. A spawn asked about again (the same call)
// is counted once. Safe to call at any time: /metrics reads it as heirloom_spawn_refused_total.
func (e *Engine) SpawnRefusals() []SpawnRefusalCount {
	e.refusals.mu.Lock()
	counts := map[SpawnRefusalCount]uint64{}
	for k, n := range e.refusals.n {
		counts[k] = n
	}
	e.refusals.mu.Unlock()
	if e.Harnesses != nil {
		for _, reg := range e.Harnesses.All() {
			for _, limit := range []string{LimitMaxDepth, LimitMaxChildren} {
				for _, enforced := range []bool{false, true} {
					k := SpawnRefusalCount{Harness: reg.Name, Limit: limit, Enforced: enforced}
					counts[k] += 0
				}
			}
		}
	}
	out := make([]SpawnRefusalCount, 0, len(counts))
	for k, n := range counts {
		k.Count = n
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b SpawnRefusalCount) int {
		if a.Enforced != b.Enforced {
			if a.Enforced {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.Harness, b.Harness), cmp.Compare(a.Limit, b.Limit))
	})
	return out
}

// spawnRefused counts, and logs at debug, a spawn of harness over a limit: refused when
// enforced, let through by observe mode otherwise. Per-spawn facts go to metrics, not the log.
func (e *Engine) spawnRefused(harness string, d SpawnDecision, session, run string) {
	if _, ok := e.Harnesses.Get(harness); !ok {
		harness = "other"
	}
	e.refusals.add(harness, d.Limit, !d.Allow)
	e.Logger.Debug("spawn over the limits", "harness", harness, "session", session, "run", run, "reason", d.Reason, "refused", !d.Allow)
}
