package engine

import (
	"sync"
	"time"
)

// receipts holds, for a harness whose spawning tool returns the new sub-agent's id before the
// sub-agent starts (adapters.Registration.SpawnReceipts: Codex's spawn_agent), which run each
// such sub-agent serves, from the receipt until the sub-agent's SubagentStart takes it. The gap
// is milliseconds, so memory serves: lost at a restart, the start falls back to the pairing a
// harness without receipts gets. It is bounded by receiptTTL and maxReceipts.
type receipts struct {
	mu sync.Mutex
	m  map[string]receipt // by lockKey(scope, sub-agent session id)
}

type receipt struct {
	run string
	at  time.Time
}

const (
	receiptTTL  = 10 * time.Minute // a sub-agent that has not started by then never will
	maxReceipts = 4096             // past this, expired receipts are dropped at each put
)

// put records that sub-agent key serves run.
func (r *receipts) put(key, run string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]receipt)
	}
	if len(r.m) >= maxReceipts {
		for k, v := range r.m {
			if now.Sub(v.at) > receiptTTL {
				delete(r.m, k)
			}
		}
	}
	if len(r.m) < maxReceipts {
		r.m[key] = receipt{run: run, at: now}
	}
}

// take returns and forgets the run a receipt named for sub-agent key, "" when none did (or too
// long ago).
func (r *receipts) take(key string, now time.Time) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[key]
	delete(r.m, key)
	if !ok || now.Sub(v.at) > receiptTTL {
		return ""
	}
	return v.run
}
