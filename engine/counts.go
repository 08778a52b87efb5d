package engine

import (
	"cmp"
	"slices"
	"sync"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// What the engine counts for /metrics: the blocks of context it delivered, and the runs that
// ended, by harness. Label values come from fixed sets (registered harness names, block kinds,
// end reasons), never from a session.

// BlockCharBuckets are the upper bounds of the block-size histogram, in the harness's
// characters: the cap is 9,500 by default.
var BlockCharBuckets = []float64{500, 1000, 2500, 5000, 7500, 9500}

// Block kinds: the block label of the delivery metrics.
const (
	BlockInherited     = "inherited"
	BlockReinforcement = "reinforcement"
	BlockRecovered     = "recovered"
	BlockCompaction    = "compaction" // the objective handed to a compaction summary (plugins)
)

// DeliveryStat is the blocks of one kind delivered to one harness's sessions.
type DeliveryStat struct {
	Harness, Block string
	Count          uint64
	Chars          uint64   // their characters summed
	Buckets        []uint64 // cumulative counts for BlockCharBuckets
}

// RunEndStat is the runs of one harness that ended for one reason.
type RunEndStat struct {
	Harness, EndReason string
	Count              uint64
}

// counts holds the engine's counters.
type counts struct {
	mu         sync.Mutex
	deliveries map[[2]string]*DeliveryStat
	runEnds    map[[2]string]uint64
}

// delivered counts one block of kind block, chars long, delivered to a harness's session.
func (c *counts) delivered(harness, block string, chars int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deliveries == nil {
		c.deliveries = map[[2]string]*DeliveryStat{}
	}
	k := [2]string{harness, block}
	d := c.deliveries[k]
	if d == nil {
		d = &DeliveryStat{Harness: harness, Block: block, Buckets: make([]uint64, len(BlockCharBuckets))}
		c.deliveries[k] = d
	}
	d.Count++
	d.Chars += uint64(chars)
	for i, b := range BlockCharBuckets {
		if float64(chars) <= b {
			d.Buckets[i]++
		}
	}
}

// ended counts one run of harness that ended for reason.
func (c *counts) ended(harness, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runEnds == nil {
		c.runEnds = map[[2]string]uint64{}
	}
	c.runEnds[[2]string{harness, reason}]++
}

// blockKind is the block label of a block's heading.
func blockKind(heading string) string {
	switch heading {
	case inject.InheritedHeading:
		return BlockInherited
	case inject.ObjectiveHeading:
		return BlockReinforcement
	case inject.RecoveredHeading:
		return BlockRecovered
	}
	return "other"
}

// knownHarness is name when it is registered, else "other": a label never holds what a caller
// made up.
func (e *Engine) knownHarness(name string) string {
	if _, ok := e.Harnesses.Get(name); ok {
		return name
	}
	return "other"
}

// DeliveryStats returns the blocks delivered since the engine was made, by harness and kind,
// sorted; every registered harness has every kind, at 0 until counted.
func (e *Engine) DeliveryStats() []DeliveryStat {
	e.counts.mu.Lock()
	out := map[[2]string]DeliveryStat{}
	for k, d := range e.counts.deliveries {
		d := *d
		d.Buckets = slices.Clone(d.Buckets)
		out[k] = d
	}
	e.counts.mu.Unlock()
	for _, reg := range e.Harnesses.All() {
		for _, b := range []string{BlockInherited, BlockReinforcement, BlockRecovered, BlockCompaction} {
			if _, ok := out[[2]string{reg.Name, b}]; !ok {
				out[[2]string{reg.Name, b}] = DeliveryStat{Harness: reg.Name, Block: b, Buckets: make([]uint64, len(BlockCharBuckets))}
			}
		}
	}
	list := make([]DeliveryStat, 0, len(out))
	for _, d := range out {
		list = append(list, d)
	}
	slices.SortFunc(list, func(a, b DeliveryStat) int {
		return cmp.Or(cmp.Compare(a.Harness, b.Harness), cmp.Compare(a.Block, b.Block))
	})
	return list
}

// runEndReasons are the end reasons a run's metric series exist for from the start.
var runEndReasons = []string{kv.EndCompleted, kv.EndFailed, kv.EndKilled, kv.EndWatchdogTimeout, kv.EndGhostSweep}

// RunEnds returns the runs that ended since the engine was made, by harness and end reason,
// sorted; every registered harness has every end reason, at 0 until counted.
func (e *Engine) RunEnds() []RunEndStat {
	e.counts.mu.Lock()
	out := map[[2]string]uint64{}
	for k, n := range e.counts.runEnds {
		out[k] = n
	}
	e.counts.mu.Unlock()
	for _, reg := range e.Harnesses.All() {
		for _, r := range runEndReasons {
			out[[2]string{reg.Name, r}] += 0
		}
	}
	list := make([]RunEndStat, 0, len(out))
	for k, n := range out {
		list = append(list, RunEndStat{Harness: k[0], EndReason: k[1], Count: n})
	}
	slices.SortFunc(list, func(a, b RunEndStat) int {
		return cmp.Or(cmp.Compare(a.Harness, b.Harness), cmp.Compare(a.EndReason, b.EndReason))
	})
	return list
}
