package engine

import (
	"sync"
	"time"
)

// Reservations: a harness whose events name a sub-agent's run by the child's session rather
// than by the spawning call (adapters.Registration.RunsByChild: OpenClaw) has no run to record
// when its plugin asks about a spawn: the run appears when its events report the child, a
// moment later. Until then the allowed spawn holds a reservation, which counts among its
// parent's active children (spawn.max_children), so back-to-back spawns cannot all pass before
// the first child is reported. Reservations are kept in memory only: they are never stored and
// never listed as runs, so the run list shows the child's run alone. One is released when a
// run of its parent appears (the oldest first) and expires after reservationGrace (a call that
// started no child); a restart forgets them.

// reservationGrace is the longest a reservation counts (at most runs.ghost_grace).
const reservationGrace = time.Minute

// reservations are the open reservations, by parent (lockKey(scope, parent)), oldest first.
// The zero value is ready to use; it is safe for concurrent use.
type reservations struct {
	mu sync.Mutex
	by map[string][]reservation
}

// reservation is one allowed spawn whose child's run has not appeared yet.
type reservation struct {
	call string    // the spawning call's id
	at   time.Time // when it was allowed
}

// add reserves a place among parent's active children for call, allowed at at; a call holding
// one already keeps it.
func (rs *reservations) add(scope, parent, call string, at time.Time) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	k := lockKey(scope, parent)
	for _, r := range rs.by[k] {
		if r.call == call {
			return
		}
	}
	if rs.by == nil {
		rs.by = map[string][]reservation{}
	}
	rs.by[k] = append(rs.by[k], reservation{call, at})
}

// holds reports whether call holds a reservation of parent's not expired at now.
func (rs *reservations) holds(scope, parent, call string, now time.Time, grace time.Duration) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, r := range rs.live(lockKey(scope, parent), now, grace) {
		if r.call == call {
			return true
		}
	}
	return false
}

// count returns how many reservations of parent have not expired at now.
func (rs *reservations) count(scope, parent string, now time.Time, grace time.Duration) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.live(lockKey(scope, parent), now, grace))
}

// release drops parent's oldest reservation: a run of its appeared.
func (rs *reservations) release(scope, parent string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	k := lockKey(scope, parent)
	if list := rs.by[k]; len(list) > 1 {
		rs.by[k] = list[1:]
	} else {
		delete(rs.by, k)
	}
}

// expire drops every reservation expired at now.
func (rs *reservations) expire(now time.Time, grace time.Duration) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for k := range rs.by {
		rs.live(k, now, grace)
	}
}

// live drops key's reservations expired at now and returns the rest; the caller holds rs.mu.
func (rs *reservations) live(k string, now time.Time, grace time.Duration) []reservation {
	list := rs.by[k]
	i := 0
	for i < len(list) && now.Sub(list[i].at) > grace {
		i++
	}
	if i == len(list) {
		delete(rs.by, k)
		return nil
	}
	rs.by[k] = list[i:]
	return list[i:]
}
