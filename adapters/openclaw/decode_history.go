package openclaw

import (
	"encoding/json"
	"slices"

	"github.com/heirloom-dev/heirloom/adapters"
)

// NameChatHistory names the events DecodeChatHistory gives: the method whose result it reads.
const NameChatHistory = "chat.history"

// Kinds of synthetic chat.history rows (__openclaw.kind): boundaries the Gateway draws between
// transcript generations, not records of the transcript.
const (
	rowKindCompaction = "compaction"
	rowKindReset      = "reset"
)

// DecodeChatHistory turns the result of chat.history for session sessionKey ({sessionKey,
// sessionId, messages: [row, …], hasMore, nextOffset, deltaCursor, sessionInfo, …}) into one
// KindTurns event named NameChatHistory, with the turns of its messages in the result's order
// (oldest first); no event when no row makes a turn.
//
// Each row is rendered as DecodeEvent renders the message of a session.message event, and its
// Turn.ID is what DecodeEvent gives that message live: the transcript entry's id
// (__openclaw.id, which session.message also sends as messageId), else its idempotencyKey. A
// history replay therefore replaces, not duplicates, the turns the stream already delivered. The
// one exception is a toolResult row: the Gateway streams a tool's result as a session.tool
// event, not as a session.message, so the row takes the id of that event's turn,
// toolCallId+":result" (its text and tool are the same too). The tool call itself is a line of
// its assistant turn, as live; history has no counterpart of a session.tool start turn.
//
// The Gateway can project one transcript record into more than one display row ("siblings"
// sharing an __openclaw.id and seq). Siblings make one turn, as the record does live: the
// first sibling's role, time and tool, the texts of all of them joined by newlines, and the
// paths they name. Rows left out: compaction and reset boundaries (__openclaw.kind
// "compaction" or "reset"; the sessions.changed events and the session rows mark those),
// placeholders for rows too large to send (__openclaw.truncated, which would overwrite the
// whole turn the stream delivered), and every row DecodeEvent makes no turn of (no id, hidden,
// blank, heirloom's own blocks). Spawns named in the history are not decoded: the session rows
// of the resync carry the lineage.
//
// It returns an error wrapping adapters.ErrMalformed when sessionKey is empty or no key (see
// adapters.CheckID), when result is not a JSON object, or when its messages are missing or not
// an array. Rows that are not objects
// are skipped.
func DecodeChatHistory(sessionKey string, result json.RawMessage) ([]adapters.Event, error) {
	if sessionKey == "" {
		return nil, adapters.Malformed("%s: no session key", NameChatHistory)
	}
	if err := adapters.CheckID(NameChatHistory+": session key", sessionKey); err != nil {
		return nil, err
	}
	var h ChatHistory
	if err := adapters.DecodeObject(NameChatHistory+" result", result, &h); err != nil {
		return nil, err
	}
	var rows []json.RawMessage
	if !adapters.IsArray(h.Messages) || json.Unmarshal(h.Messages, &rows) != nil {
		return nil, adapters.Malformed("%s result: messages missing or not an array", NameChatHistory)
	}
	var turns []adapters.Turn
	at := make(map[string]int, len(rows)) // turn id → index in turns
	for _, raw := range rows {
		if !adapters.IsObject(raw) {
			continue
		}
		var m HistoryMessage
		adapters.UnmarshalObject(raw, &m)
		if m.Meta.Kind == rowKindCompaction || m.Meta.Kind == rowKindReset || m.Meta.Truncated {
			continue
		}
		// The envelope is read once, into Meta; the message's own copy of its id is that one.
		m.OpenClaw.ID = m.Meta.ID
		t, ok := messageTurn("", m.TranscriptMessage)
		if !ok {
			continue
		}
		if m.Role == "toolResult" && m.ToolCallID != "" {
			t.ID = m.ToolCallID + ":result"
		}
		i, seen := at[t.ID]
		if !seen {
			at[t.ID] = len(turns)
			turns = append(turns, t)
			continue
		}
		merged := &turns[i]
		merged.Text = joinLines(merged.Text, t.Text)
		if merged.Tool == "" {
			merged.Tool = t.Tool
		}
		for _, f := range t.Files {
			if !slices.Contains(merged.Files, f) {
				merged.Files = append(merged.Files, f)
			}
		}
		if merged.At.IsZero() {
			merged.At = t.At
		}
	}
	if len(turns) == 0 {
		return nil, nil
	}
	ev := newEvent(adapters.KindTurns, NameChatHistory, sessionKey, turns[len(turns)-1].At)
	ev.Turns = turns
	return []adapters.Event{ev}, nil
}
