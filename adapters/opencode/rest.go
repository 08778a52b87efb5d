package opencode

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/heirloom-dev/heirloom/adapters"
)

// DecodeSessionList turns a GET /session reply (or GET /session/{id}/children: the same array of
// session infos) into one KindSessionStart event per session, named NameSessionList, with the
// fields DecodeFrame gives session.created: SessionID, ParentSessionID, Title, AgentName, Cwd,
// At from time.created. Parents come before their children; otherwise the reply's order is
// kept. Elements that are not objects, have no id, or name an id no record may have (see
// adapters.CheckID) are skipped.
//
// It returns an error wrapping adapters.ErrMalformed when b is not a JSON array.
func DecodeSessionList(b []byte) ([]adapters.Event, error) {
	elems, err := decodeArray("session list", b)
	if err != nil {
		return nil, err
	}
	infos := make([]SessionInfo, 0, len(elems))
	for _, raw := range elems {
		var in SessionInfo
		if adapters.DecodeObject("session", raw, &in) == nil && in.ID != "" &&
			adapters.CheckID("id", in.ID) == nil && adapters.CheckID("parentID", in.ParentID) == nil {
			infos = append(infos, in)
		}
	}
	depth := depths(infos)
	slices.SortStableFunc(infos, func(a, b SessionInfo) int { return depth[a.ID] - depth[b.ID] })
	evs := make([]adapters.Event, 0, len(infos))
	for _, in := range infos {
		evs = append(evs, sessionEvent(adapters.KindSessionStart, NameSessionList, in.ID, in))
	}
	return evs, nil
}

// depths returns how many ancestors each session has among infos, a cycle counting once.
func depths(infos []SessionInfo) map[string]int {
	parent := make(map[string]string, len(infos))
	for _, in := range infos {
		parent[in.ID] = in.ParentID
	}
	depth := make(map[string]int, len(infos))
	for _, in := range infos {
		d, id := 0, in.ParentID
		for id != "" && d < len(infos) {
			if _, ok := parent[id]; !ok {
				break
			}
			d, id = d+1, parent[id]
		}
		depth[in.ID] = d
	}
	return depth
}

// DecodeMessages turns a GET /session/{id}/message reply, the messages of session sessionID as
// an array of {info, parts}, into the events the stream's message.part.updated frames give for
// those parts in their latest state, named NameMessages: first one KindTurns event holding
// every turn in message and part order (At the first message's time.created), then a
// KindSpawn or KindSpawnResult per task call. Turns are those DecodeFrame makes, with the same
// ids, so replaying a resync over what the stream delivered changes nothing; the role of a text
// part is its message's role here rather than inferred. The empty reply yields no events.
// Elements and parts of an unexpected shape are skipped.
//
// A task call naming an id no record may have (see adapters.CheckIDs) yields no spawn.
//
// It returns an error wrapping adapters.ErrMalformed when sessionID is empty or no id (see
// adapters.CheckID), or b is not a JSON array.
func DecodeMessages(sessionID string, b []byte) ([]adapters.Event, error) {
	if sessionID == "" {
		return nil, adapters.Malformed("messages: session id empty")
	}
	if err := adapters.CheckID("messages: session id", sessionID); err != nil {
		return nil, err
	}
	elems, err := decodeArray("messages of "+sessionID, b)
	if err != nil {
		return nil, err
	}
	turns := event(adapters.KindTurns, NameMessages, sessionID)
	var spawns []adapters.Event
	for _, raw := range elems {
		var m MessageWithParts
		if adapters.DecodeObject("message", raw, &m) != nil {
			continue
		}
		if turns.At.IsZero() {
			turns.At = millis(m.Info.Time.Created)
		}
		for _, p := range m.Parts {
			if p.ID == "" {
				continue
			}
			if t, ok := partTurn(p, m.Info.Role); ok {
				turns.Turns = append(turns.Turns, t)
			}
			if ev, ok := taskEvent(NameMessages, sessionID, p, millis(m.Info.Time.Created)); ok && adapters.CheckIDs(ev) == nil {
				spawns = append(spawns, ev)
			}
		}
	}
	var evs []adapters.Event
	if len(turns.Turns) > 0 {
		evs = append(evs, turns)
	}
	return append(evs, spawns...), nil
}

// decodeArray splits b, which must be one JSON array, into its elements.
func decodeArray(what string, b []byte) ([]json.RawMessage, error) {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '[' {
		return nil, adapters.Malformed("%s: not a JSON array", what)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(b, &elems); err != nil {
		return nil, adapters.Malformed("%s: %v", what, err)
	}
	return elems, nil
}
