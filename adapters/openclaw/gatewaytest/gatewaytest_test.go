package gatewaytest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/heirloom-dev/heirloom/adapters/openclaw/gatewaytest"
)

// rawClient is a bare WebSocket client that speaks frames by hand.
type rawClient struct {
	t  *testing.T
	ws *websocket.Conn
	n  int
}

func dial(t *testing.T, srv *gatewaytest.Server) *rawClient {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(srv.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return &rawClient{t: t, ws: ws}
}

// frame is any frame, loosely.
type frame struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	OK      bool            `json:"ok"`
	Event   string          `json:"event"`
	Seq     *int64          `json:"seq"`
	Payload json.RawMessage `json:"payload"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details struct {
			Code string `json:"code"`
		} `json:"details"`
	} `json:"error"`
}

// read returns the next frame, or the close error.
func (c *rawClient) read() (frame, error) {
	c.t.Helper()
	_ = c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		return frame{}, err
	}
	var f frame
	if err := json.Unmarshal(b, &f); err != nil {
		c.t.Fatalf("frame %s: %v", b, err)
	}
	return f, nil
}

// call sends a request and returns its response, skipping events.
func (c *rawClient) call(method string, params any) frame {
	c.t.Helper()
	c.n++
	id := strings.Repeat("r", c.n)
	if err := c.ws.WriteJSON(map[string]any{"type": "req", "id": id, "method": method, "params": params}); err != nil {
		c.t.Fatal(err)
	}
	for {
		f, err := c.read()
		if err != nil {
			c.t.Fatalf("%s: %v", method, err)
		}
		if f.Type == "res" && f.ID == id {
			return f
		}
	}
}

func connectParams(minP, maxP int, token string) map[string]any {
	return map[string]any{
		"minProtocol": minP, "maxProtocol": maxP,
		"client": map[string]any{"id": "gateway-client", "version": "1", "platform": "linux", "mode": "backend"},
		"role":   "operator", "scopes": []string{"operator.read"},
		"auth": map[string]any{"token": token},
	}
}

// handshake reads the challenge and connects.
func (c *rawClient) handshake(params map[string]any) frame {
	c.t.Helper()
	f, err := c.read()
	if err != nil || f.Event != "connect.challenge" {
		c.t.Fatalf("first frame: got %+v, %v; want connect.challenge", f, err)
	}
	return c.call("connect", params)
}

// closeCode reads until the connection ends and returns the close code it ended with.
func (c *rawClient) closeCode() int {
	c.t.Helper()
	for {
		_, err := c.read()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		if err != nil {
			c.t.Fatalf("got %v, want a close frame", err)
		}
	}
}

// The handshake refusals OpenClaw 2026.9.6 makes, with its error detail codes and close codes.
func TestHandshakeRefusals(t *testing.T) {
	cases := []struct {
		name       string
		params     map[string]any
		code       string // error.code
		detail     string // error.details.code
		closeCode  int
		messagePre string
	}{
		{"ProtocolThreeOnly", connectParams(3, 3, "tok"), "INVALID_REQUEST", "PROTOCOL_MISMATCH", 1002, "protocol mismatch"},
		{"TokenMismatch", connectParams(3, 5, "nope"), "INVALID_REQUEST", "AUTH_TOKEN_MISMATCH", 1008, "unauthorized: gateway token mismatch"},
		{"TokenMissing", connectParams(4, 4, ""), "INVALID_REQUEST", "AUTH_TOKEN_MISSING", 1008, "unauthorized: gateway token missing"},
		{"UnknownProperty", func() map[string]any {
			p := connectParams(4, 4, "tok")
			p["includeEverything"] = true
			return p
		}(), "INVALID_REQUEST", "", 1008, "invalid connect params: at root: unexpected property 'includeEverything'"},
		{"UnknownClientID", func() map[string]any {
			p := connectParams(4, 4, "tok")
			p["client"].(map[string]any)["id"] = "heirloom"
			return p
		}(), "INVALID_REQUEST", "", 1008, "invalid connect params: client.id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := gatewaytest.NewServer(t, gatewaytest.Options{Token: "tok"})
			c := dial(t, srv)
			res := c.handshake(tc.params)
			if res.OK || res.Error == nil || res.Error.Code != tc.code || res.Error.Details.Code != tc.detail ||
				!strings.HasPrefix(res.Error.Message, tc.messagePre) {
				t.Errorf("connect: got %+v %+v, want %s (%s) %q…", res, res.Error, tc.code, tc.detail, tc.messagePre)
			}
			if got := c.closeCode(); got != tc.closeCode {
				t.Errorf("close code: got %d, want %d", got, tc.closeCode)
			}
			if srv.Connects() != 0 {
				t.Errorf("connects: got %d, want 0", srv.Connects())
			}
		})
	}
}

// After hello-ok: the policy the options set, the built-in methods answering from the state the
// test set, closed params refused, events with per-connection seq numbers.
func TestServer(t *testing.T) {
	srv := gatewaytest.NewServer(t, gatewaytest.Options{Token: "tok", TickInterval: time.Hour, MaxPayload: 1 << 20})
	srv.SetSessions(json.RawMessage(`{"key":"agent:main:main"}`), json.RawMessage(`{"key":"agent:main:subagent:x"}`))
	srv.SetDescribe("agent:main:subagent:x", json.RawMessage(`{"key":"agent:main:subagent:x","spawnedBy":"agent:main:main"}`))
	c := dial(t, srv)
	hello := c.handshake(connectParams(3, 5, "tok"))
	var h struct {
		Type     string
		Protocol int
		Auth     struct{ Scopes []string }
		Policy   struct{ MaxPayload, TickIntervalMs int64 }
	}
	if err := json.Unmarshal(hello.Payload, &h); err != nil || !hello.OK || h.Type != "hello-ok" || h.Protocol != 4 ||
		h.Policy.MaxPayload != 1<<20 || h.Policy.TickIntervalMs != 3600000 || len(h.Auth.Scopes) != 1 {
		t.Fatalf("hello: got %+v (%v)", h, err)
	}

	if res := c.call("sessions.subscribe", map[string]any{}); !res.OK || string(res.Payload) != `{"subscribed":true}` {
		t.Errorf("subscribe: got %s", res.Payload)
	}
	res := c.call("sessions.list", map[string]any{"limit": 1})
	var list struct {
		Sessions   []struct{ Key string }
		HasMore    bool
		NextOffset int
		TotalCount int
	}
	if err := json.Unmarshal(res.Payload, &list); err != nil || len(list.Sessions) != 1 || !list.HasMore || list.NextOffset != 1 || list.TotalCount != 2 {
		t.Errorf("list: got %s", res.Payload)
	}
	if res := c.call("sessions.list", map[string]any{"includeSubagents": true}); res.OK || res.Error.Code != "INVALID_REQUEST" {
		t.Errorf("list with an unknown property: got %+v, want INVALID_REQUEST", res)
	}
	if res := c.call("sessions.describe", map[string]any{"key": "agent:main:subagent:x"}); !strings.Contains(string(res.Payload), `"spawnedBy":"agent:main:main"`) {
		t.Errorf("describe: got %s", res.Payload)
	}
	if res := c.call("sessions.describe", map[string]any{"key": "agent:main:none"}); string(res.Payload) != `{"session":null}` {
		t.Errorf("describe unknown: got %s", res.Payload)
	}

	srv.Emit("sessions.changed", map[string]any{"sessionKey": "agent:main:main"})
	srv.Replay([]gatewaytest.EventFrame{{Event: "task", Payload: json.RawMessage(`{}`)}})
	for want := int64(1); want <= 2; want++ {
		f, err := c.read()
		if err != nil || f.Type != "event" || f.Seq == nil || *f.Seq != want {
			t.Fatalf("event %d: got %+v, %v", want, f, err)
		}
	}
	methods := []string{}
	for _, r := range srv.Requests() {
		methods = append(methods, r.Method)
	}
	if got := strings.Join(methods, " "); got != "connect sessions.subscribe sessions.list sessions.list sessions.describe sessions.describe" {
		t.Errorf("request log: got %s", got)
	}
}

// DropConnections sends the close code and reason; Restart brings the Gateway back on the same
// port; a recording loads as its event frames.
func TestServerDropRestartRecording(t *testing.T) {
	srv := gatewaytest.NewServer(t, gatewaytest.Options{TickInterval: time.Hour})
	c := dial(t, srv)
	c.handshake(connectParams(4, 4, ""))
	if n := srv.DropConnections(gatewaytest.CloseAuthChanged, "gateway auth changed"); n != 1 {
		t.Errorf("dropped %d, want 1", n)
	}
	if got := c.closeCode(); got != 4001 {
		t.Errorf("close code: got %d, want 4001", got)
	}
	url := srv.URL()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if srv.URL() != url {
		t.Errorf("URL after restart: got %s, want %s", srv.URL(), url)
	}
	c = dial(t, srv)
	if res := c.handshake(connectParams(4, 4, "")); !res.OK {
		t.Errorf("connect after restart: got %+v", res)
	}

	rec, err := gatewaytest.LoadRecording("../testdata/live/spawn.all-frames.json")
	if err != nil {
		t.Fatal(err)
	}
	frames, err := gatewaytest.EventFrames(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) == 0 || frames[0].Event == "connect.challenge" {
		t.Errorf("event frames: got %d, first %+v", len(frames), frames[0])
	}
}

// chat.history answers the messages SetHistory set, latest page first, with OpenClaw's paging
// fields; an unknown key is an empty page; params are a closed object.
func TestServerHistory(t *testing.T) {
	srv := gatewaytest.NewServer(t, gatewaytest.Options{TickInterval: time.Hour})
	srv.SetHistory("agent:main:main",
		json.RawMessage(`{"role":"user","content":"one","__openclaw":{"id":"m1","seq":1}}`),
		json.RawMessage(`{"role":"user","content":"two","__openclaw":{"id":"m2","seq":2}}`),
		json.RawMessage(`{"role":"user","content":"three","__openclaw":{"id":"m3","seq":3}}`))
	c := dial(t, srv)
	c.handshake(connectParams(4, 4, ""))
	type page struct {
		SessionKey    string
		Messages      []struct{ Content string }
		HasMore       bool
		NextOffset    int
		TotalMessages int
	}
	read := func(params map[string]any) (page, bool) {
		res := c.call("chat.history", params)
		var p page
		if !res.OK || json.Unmarshal(res.Payload, &p) != nil {
			return p, false
		}
		return p, true
	}
	if p, ok := read(map[string]any{"sessionKey": "agent:main:main", "limit": 2}); !ok || len(p.Messages) != 2 ||
		p.Messages[0].Content != "two" || p.Messages[1].Content != "three" || !p.HasMore || p.NextOffset != 2 || p.TotalMessages != 3 {
		t.Errorf("latest page: got %+v", p)
	}
	if p, ok := read(map[string]any{"sessionKey": "agent:main:main", "limit": 2, "offset": 2}); !ok || len(p.Messages) != 1 ||
		p.Messages[0].Content != "one" || p.HasMore {
		t.Errorf("older page: got %+v", p)
	}
	if p, ok := read(map[string]any{"sessionKey": "agent:main:none", "limit": 200}); !ok || len(p.Messages) != 0 || p.SessionKey != "agent:main:none" {
		t.Errorf("unknown key: got %+v", p)
	}
	if res := c.call("chat.history", map[string]any{"sessionKey": "agent:main:main", "since": 1}); res.OK || res.Error.Code != "INVALID_REQUEST" {
		t.Errorf("unknown property: got %+v, want INVALID_REQUEST", res)
	}
	if res := c.call("chat.history", map[string]any{"limit": 1}); res.OK || res.Error.Code != "INVALID_REQUEST" {
		t.Errorf("no sessionKey: got %+v, want INVALID_REQUEST", res)
	}
}
