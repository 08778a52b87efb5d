package openclaw_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/openclaw/gatewaytest"
)

// stampedRow is a session row with the updatedAt the resync compares.
func stampedRow(key string, updatedAt int64) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"key": key, "sessionId": "sid-" + key, "createdAt": 1795314779000, "updatedAt": updatedAt})
	return b
}

// historyRow is a chat.history row: a user message with its transcript entry id.
func historyRow(id, text string, seq int) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"role": "user", "content": text, "timestamp": 1795314779000 + seq,
		"__openclaw": map[string]any{"id": id, "seq": seq}})
	return b
}

// historyCalls returns the keys of the chat.history requests made so far, in order, and fails
// the test on a request whose params are not {sessionKey, limit: HistoryLimit}.
func historyCalls(t *testing.T, srv *gatewaytest.Server) []string {
	t.Helper()
	var keys []string
	for _, r := range srv.RequestsFor("chat.history") {
		var p struct {
			SessionKey string `json:"sessionKey"`
			Limit      int    `json:"limit"`
		}
		if err := json.Unmarshal(r.Params, &p); err != nil || p.Limit != openclaw.HistoryLimit ||
			string(r.Params) != fmt.Sprintf(`{"sessionKey":%q,"limit":%d}`, p.SessionKey, openclaw.HistoryLimit) {
			t.Errorf("chat.history params: got %s", r.Params)
		}
		keys = append(keys, p.SessionKey)
	}
	return keys
}

// Turns written while the client was away, which the Gateway never sends as events, come back
// with the resync after the reconnect, once each; a session that did not change since its
// history was read is not read again.
func TestClientBackfillsHistory(t *testing.T) {
	streamtest.CheckGoroutines(t)
	const main, other = "agent:main:main", "agent:main:other"
	srv := newGateway(t)
	srv.SetSessions(stampedRow(main, 1000), stampedRow(other, 900))
	srv.SetHistory(main, historyRow("m1", "before", 1))
	srv.SetHistory(other, historyRow("o1", "other's", 1))
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.URL(), sink)
	openClient(t, c, srv)
	streamtest.WaitFor(t, streamtest.Patience, "the first backfill", func() bool {
		return sink.Count(withTurn("m1")) == 1 && sink.Count(withTurn("o1")) == 1
	})
	if got := historyCalls(t, srv); len(got) != 2 || got[0] != main || got[1] != other {
		t.Errorf("first resync's history calls: got %q, want %s then %s (most recently updated first)", got, main, other)
	}
	ev := sink.All()[sink.Index(withTurn("m1"))]
	if ev.Name != openclaw.NameChatHistory || ev.SessionID != main || len(ev.Turns) != 1 || ev.Turns[0].Text != "before" {
		t.Errorf("backfill event: got %+v", ev)
	}
	if sink.Index(withTurn("m1")) < sink.Index(named(openclaw.NameSessionsList, main)) {
		t.Error("the history came before the session it belongs to")
	}

	// Away: main runs on, and only its transcript knows.
	srv.Stop()
	srv.SetHistory(main, historyRow("m1", "before", 1), historyRow("m2", "while away", 2), historyRow("m3", "and more", 3))
	srv.SetSessions(stampedRow(main, 2000), stampedRow(other, 900))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "the backfill after the reconnect", func() bool { return sink.Count(withTurn("m3")) == 1 })
	streamtest.WaitFor(t, streamtest.Patience, "the resync's end", func() bool { return c.Stats().Resyncs == 2 })
	for _, id := range []string{"m2", "m3"} {
		if n := sink.Count(withTurn(id)); n != 1 {
			t.Errorf("turn %s: got %d events, want 1", id, n)
		}
	}
	if got := historyCalls(t, srv); len(got) != 3 || got[2] != main {
		t.Errorf("history calls: got %q, want %s read again and %s not", got, main, other)
	}

	// Nothing changed: the next resync reads no history.
	srv.DropConnections(gatewaytest.CloseServiceRestart, "service restart")
	streamtest.WaitFor(t, streamtest.Patience, "the third resync", func() bool { return c.Stats().Resyncs == 3 })
	if got := historyCalls(t, srv); len(got) != 3 {
		t.Errorf("history calls: got %q, want none for unchanged sessions", got)
	}
	if st := c.Stats(); st.ResyncErrors != 0 || st.Malformed != 0 {
		t.Errorf("stats: got %+v, want no errors", st)
	}
}

// A chat.history call that fails is counted; the rest of the resync goes on, and the session
// is read again at the next resync.
func TestClientHistoryFailure(t *testing.T) {
	streamtest.CheckGoroutines(t)
	const bad, good = "agent:main:bad", "agent:main:good"
	srv := newGateway(t)
	srv.SetSessions(stampedRow(bad, 2000), stampedRow(good, 1000))
	srv.Handle("chat.history", func(params json.RawMessage) (any, error) {
		var p struct{ SessionKey string }
		_ = json.Unmarshal(params, &p)
		if p.SessionKey == bad {
			return nil, &gatewaytest.Error{Code: "UNAVAILABLE", Message: "session rows are initializing", Retryable: true}
		}
		return map[string]any{"sessionKey": p.SessionKey, "messages": []json.RawMessage{historyRow("g1", "good", 1)}}, nil
	})
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.URL(), sink)
	openClient(t, c, srv)
	if st := c.Stats(); st.Resyncs != 1 || st.ResyncErrors != 1 || st.Reconnects != 0 {
		t.Errorf("stats: got %+v, want a resync with one error, on the same connection", st)
	}
	if sink.Count(withTurn("g1")) != 1 {
		t.Errorf("events: got %+v, want the good session's turn after the failed call", sink.All())
	}

	srv.Handle("chat.history", nil)
	srv.SetHistory(bad, historyRow("b1", "late", 1))
	srv.DropConnections(gatewaytest.CloseServiceRestart, "service restart")
	streamtest.WaitFor(t, streamtest.Patience, "the failed session read again", func() bool { return sink.Count(withTurn("b1")) == 1 })
	streamtest.WaitFor(t, streamtest.Patience, "the second resync", func() bool { return c.Stats().Resyncs == 2 })
	if got := historyCalls(t, srv); len(got) != 3 || got[2] != bad {
		t.Errorf("history calls: got %q, want %s, %s, then %s again only", got, bad, good, bad)
	}
}

// ResyncSessions bounds the history calls of one resync; the sessions past it are read at the
// next one.
func TestClientHistoryLimit(t *testing.T) {
	streamtest.CheckGoroutines(t)
	const newer, older = "agent:main:newer", "agent:main:older"
	srv := newGateway(t)
	srv.SetSessions(stampedRow(older, 1000), stampedRow(newer, 2000))
	srv.SetHistory(older, historyRow("o1", "older", 1))
	srv.SetHistory(newer, historyRow("n1", "newer", 1))
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.URL(), sink)
	c.ResyncSessions = 1
	openClient(t, c, srv)
	if got := historyCalls(t, srv); len(got) != 1 || got[0] != newer {
		t.Errorf("first resync's history calls: got %q, want %s only", got, newer)
	}
	srv.DropConnections(gatewaytest.CloseServiceRestart, "service restart")
	streamtest.WaitFor(t, streamtest.Patience, "the second resync", func() bool { return c.Stats().Resyncs == 2 })
	if got := historyCalls(t, srv); len(got) != 2 || got[1] != older {
		t.Errorf("history calls: got %q, want %s at the second resync", got, older)
	}
	if sink.Count(withTurn("o1")) != 1 || sink.Count(withTurn("n1")) != 1 {
		t.Errorf("events: got %+v, want each session's turn once", sink.All())
	}
}
