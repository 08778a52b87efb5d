package openclaw

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
)

// DecodeSessionList turns the result of sessions.list ({sessions: [row, …], …}), or of
// sessions.subscribe called with list parameters ({subscribed, list: {sessions, …}}), into one
// KindSessionStart event per session, named NameSessionsList, with the fields DecodeEvent
// gives a sessions.changed row and At the session's creation time. Parents come before their
// children; otherwise the result's order is kept. Rows that are not objects, have no key, or
// name a key no record may have (see adapters.CheckID) are skipped. A bare subscription acknowledgement ({subscribed: true}) yields nothing.
//
// It returns an error wrapping adapters.ErrMalformed when result is not a JSON object, or has
// no sessions array.
func DecodeSessionList(result json.RawMessage) ([]adapters.Event, error) {
	var l SessionList
	if err := adapters.DecodeObject(NameSessionsList+" result", result, &l); err != nil {
		return nil, err
	}
	if isNull(l.Sessions) && adapters.IsObject(l.List) {
		var inner SessionList
		adapters.UnmarshalObject(l.List, &inner)
		l.Sessions, l.Ts = inner.Sessions, inner.Ts
	}
	if isNull(l.Sessions) {
		if l.Subscribed {
			return nil, nil
		}
		return nil, adapters.Malformed("%s result: sessions missing", NameSessionsList)
	}
	var elems []json.RawMessage
	if !adapters.IsArray(l.Sessions) || json.Unmarshal(l.Sessions, &elems) != nil {
		return nil, adapters.Malformed("%s result: sessions not an array", NameSessionsList)
	}
	rows := make([]SessionRow, 0, len(elems))
	for _, raw := range elems {
		var row SessionRow
		if adapters.DecodeObject("session", raw, &row) == nil && row.Key != "" &&
			adapters.CheckID("key", row.Key) == nil && adapters.CheckID("spawnedBy", rowParent(row)) == nil {
			rows = append(rows, row)
		}
	}
	parentsFirst(rows)
	evs := make([]adapters.Event, 0, len(rows))
	for _, row := range rows {
		evs = append(evs, sessionEvent(adapters.KindSessionStart, NameSessionsList, row.Key, row,
			cmp.Or(row.CreatedAt, row.UpdatedAt, l.Ts).Time()))
	}
	return evs, nil
}

// DecodeSessionDescribe turns the result of sessions.describe ({session: row}) into the
// session's KindSessionStart event, named NameSessionsDescribe, with the fields DecodeEvent
// gives a sessions.changed row and At the session's creation time. {session: null}, the answer
// for a session the Gateway does not know, yields nothing.
//
// It returns an error wrapping adapters.ErrMalformed when result is not a JSON object, or its
// session is neither null nor an object with a key, or names a key no record may have (see
// adapters.CheckIDs).
func DecodeSessionDescribe(result json.RawMessage) ([]adapters.Event, error) {
	var d SessionDescription
	if err := adapters.DecodeObject(NameSessionsDescribe+" result", result, &d); err != nil {
		return nil, err
	}
	if isNull(d.Session) {
		return nil, nil
	}
	var row SessionRow
	if err := adapters.DecodeObject(NameSessionsDescribe+" session", d.Session, &row); err != nil {
		return nil, err
	}
	if row.Key == "" {
		return nil, adapters.Malformed("%s session: key missing, empty or not a string", NameSessionsDescribe)
	}
	ev := sessionEvent(adapters.KindSessionStart, NameSessionsDescribe, row.Key, row, cmp.Or(row.CreatedAt, row.UpdatedAt).Time())
	if err := adapters.CheckIDs(ev); err != nil {
		return nil, err
	}
	return []adapters.Event{ev}, nil
}

// decodeSessionsChanged maps a sessions.changed payload; see DecodeEvent.
func decodeSessionsChanged(payload json.RawMessage) ([]adapters.Event, error) {
	var p SessionsChanged
	if err := adapters.DecodeObject(eventSessionsChanged+" payload", payload, &p); err != nil {
		return nil, err
	}
	row := p.SessionRow
	if p.Session != nil {
		// A nested row is a complete snapshot: where it omits a fact, the fact is gone.
		row = *p.Session
	}
	key := cmp.Or(p.SessionKey, row.Key)
	if key == "" {
		return nil, nil
	}
	name := eventSessionsChanged
	if detail := cmp.Or(p.Reason, p.Phase); detail != "" {
		name += ":" + detail
	}
	ev := sessionEvent(adapters.KindSessionUpdate, name, key, row, p.Ts.Time())
	switch p.Reason {
	case reasonCreate:
		ev.Kind = adapters.KindSessionStart
	case reasonReset, reasonNew:
		ev.Kind, ev.Source = adapters.KindSessionStart, adapters.SourceClear
	case reasonDelete:
		ev.Kind = adapters.KindSessionDeleted
	case reasonCompact:
		if p.Compacted {
			ev.Kind = adapters.KindCompacted
		}
	}
	return []adapters.Event{ev}, nil
}

// decodeSessionOperation maps a session.operation payload; see DecodeEvent.
func decodeSessionOperation(payload json.RawMessage) ([]adapters.Event, error) {
	var p SessionOperation
	if err := adapters.DecodeObject(eventSessionOperation+" payload", payload, &p); err != nil {
		return nil, err
	}
	if p.SessionKey == "" {
		return nil, adapters.Malformed("%s: sessionKey missing, empty or not a string", eventSessionOperation)
	}
	if p.Operation != reasonCompact || p.Phase != "start" {
		return nil, nil
	}
	ev := newEvent(adapters.KindPreCompact, eventSessionOperation+":compact.start", p.SessionKey, p.Ts.Time())
	ev.Trigger = "manual"
	return []adapters.Event{ev}, nil
}

// sessionEvent describes session key from its row.
func sessionEvent(kind adapters.Kind, name, key string, row SessionRow, at time.Time) adapters.Event {
	ev := newEvent(kind, name, key, at)
	ev.Title = cmp.Or(row.Label, row.DisplayName, row.DerivedTitle)
	ev.Cwd = cmp.Or(row.WorkspaceDir, row.SpawnedCwd, row.SpawnedWorkspaceDir)
	ev.AgentName = row.SubagentRole
	if parent := rowParent(row); parent != "" && parent != key {
		ev.ParentSessionID, ev.Depth = parent, row.SpawnDepth
	}
	return ev
}

// rowParent is the session that spawned the row's session: spawnedBy. A row's
// parentSessionKey alone is not lineage: OpenClaw also sets it on forks and on the successor
// of a /new rollover (a navigation parent), which inherit nothing from it.
func rowParent(row SessionRow) string {
	return row.SpawnedBy
}

// maxDepth bounds how far parentsFirst follows parent links.
const maxDepth = 64

// parentsFirst orders rows so that a parent comes before its children, keeping the order
// otherwise.
func parentsFirst(rows []SessionRow) {
	parent := make(map[string]string, len(rows))
	for _, r := range rows {
		parent[r.Key] = rowParent(r)
	}
	depth := make(map[string]int, len(rows))
	for _, r := range rows {
		d := 0
		for id := parent[r.Key]; id != "" && id != r.Key && d < maxDepth; id = parent[id] {
			d++
		}
		depth[r.Key] = d
	}
	slices.SortStableFunc(rows, func(a, b SessionRow) int { return depth[a.Key] - depth[b.Key] })
}
