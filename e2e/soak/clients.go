package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// ring keeps the last few ids a generator made, for the callers that ask about them.
type ring struct {
	mu    sync.Mutex
	items []string
	next  int
}

const ringSize = 64

func (r *ring) add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.items) < ringSize {
		r.items = append(r.items, id)
		return
	}
	r.items[r.next] = id
	r.next = (r.next + 1) % ringSize
}

// pick returns one of the ids, or "" when there is none yet.
func (r *ring) pick(rnd *rand.Rand) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.items) == 0 {
		return ""
	}
	return r.items[rnd.IntN(len(r.items))]
}

// searcher asks POST /api/sessions/search every period until ctx ends: one or two search words,
// sometimes only one harness's sessions.
func (s *soak) searcher(ctx context.Context, r *rand.Rand, period time.Duration) {
	harnesses := []string{"", "", "claude-code", "opencode", "openclaw"}
	for sleep(ctx, jitter(r, period)) {
		req := map[string]any{"query": query(r), "limit": 10}
		if h := harnesses[r.IntN(len(harnesses))]; h != "" {
			req["harness"] = h
		}
		body, _ := json.Marshal(req)
		start := time.Now()
		status, reply, err := s.heirloom.do(ctx, http.MethodPost, "/api/sessions/search", "application/json", body)
		d := time.Since(start)
		if ctx.Err() != nil {
			return
		}
		var res struct {
			Hits []json.RawMessage `json:"hits"`
		}
		failed := err != nil || status != http.StatusOK || json.Unmarshal(reply, &res) != nil
		if failed {
			s.errorf("search", "status %d, error %v, reply %.200q", status, err, reply)
		} else if len(res.Hits) > 0 {
			s.searchHits.Add(1)
		}
		s.lat.record("search", d, failed, false)
	}
}

// mcpCaller calls a tool on /mcp every period until ctx ends, as an MCP client does over
// stateless streamable HTTP: session_search, or session_transcript and subagent_runs of a
// recent Claude Code session.
func (s *soak) mcpCaller(ctx context.Context, r *rand.Rand, period time.Duration) {
	for id := 1; sleep(ctx, jitter(r, period)); id++ {
		name, args := "session_search", map[string]any{"query": query(r), "limit": 10}
		if sid := s.recentClaude.pick(r); sid != "" {
			switch r.IntN(3) {
			case 1:
				name, args = "session_transcript", map[string]any{"session": sid, "limit": 20}
			case 2:
				name, args = "subagent_runs", map[string]any{"session": sid}
			}
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
		start := time.Now()
		status, reply, err := s.heirloom.do(ctx, http.MethodPost, "/mcp", "application/json", body,
			"Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", "2025-06-18")
		d := time.Since(start)
		if ctx.Err() != nil {
			return
		}
		failed := err != nil || status != http.StatusOK
		if !failed {
			if why := mcpFailure(reply); why != "" {
				failed, err = true, fmt.Errorf("%s", why)
			}
		}
		if failed {
			s.errorf("mcp:"+name, "status %d, error %v, reply %.300q", status, err, reply)
		}
		s.lat.record("mcp:"+name, d, failed, false)
	}
}

// mcpFailure returns why an MCP reply (JSON, or one server-sent event holding it) is not a
// successful tool result, or "".
func mcpFailure(reply []byte) string {
	body := reply
	if i := bytes.Index(reply, []byte("data: ")); i >= 0 {
		body = reply[i+len("data: "):]
		if j := bytes.IndexByte(body, '\n'); j >= 0 {
			body = body[:j]
		}
	}
	var res struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	switch {
	case json.Unmarshal(body, &res) != nil:
		return "not JSON-RPC"
	case res.Error != nil:
		return "JSON-RPC error: " + res.Error.Message
	case res.Result == nil:
		return "no result"
	case res.Result.IsError:
		return "tool error"
	}
	return ""
}

// injector asks POST /api/inject every period until ctx ends, as the OpenCode and OpenClaw
// plugins do before a sub-agent's model call: for a recent child of either stream. A reply
// without the inherited block counts as degraded.
func (s *soak) injector(ctx context.Context, r *rand.Rand, period time.Duration) {
	for sleep(ctx, jitter(r, period)) {
		harness, session := "opencode", s.recentOCChildren.pick(r)
		if r.IntN(2) == 0 || session == "" {
			harness, session = "openclaw", s.recentClawChildren.pick(r)
		}
		if session == "" {
			continue
		}
		body, _ := json.Marshal(map[string]string{"harness": harness, "session": session})
		start := time.Now()
		status, reply, err := s.heirloom.do(ctx, http.MethodPost, "/api/inject", "application/json", body)
		d := time.Since(start)
		if ctx.Err() != nil {
			return
		}
		var res struct {
			Context string `json:"context"`
		}
		failed := err != nil || status != http.StatusOK || json.Unmarshal(reply, &res) != nil
		if failed {
			s.errorf("inject", "%s %s: status %d, error %v, reply %.200q", harness, session, status, err, reply)
		} else if !strings.Contains(res.Context, "Inherited from Parent Session") {
			s.degradedInject.Add(1)
		}
		s.lat.record("inject", d, failed, d > s.cfg.SlowHook)
	}
}

// feedConsumer reads the live feed (GET /api/events, a WebSocket) until ctx ends, counting the
// events. A failed dial is an error; a connection heirloom ends is counted as dropped; either
// way it is made again after a second. With churn, it
// closes its connection itself every 15–25 s and connects again, as a viewer tab does.
func (s *soak) feedConsumer(ctx context.Context, r *rand.Rand, churn bool) {
	u := "ws" + strings.TrimPrefix(s.heirloom.URL, "http") + "/api/events"
	header := http.Header{"Authorization": {"Bearer " + s.heirloom.Token}}
	dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second, Proxy: nil}
	for ctx.Err() == nil {
		ws, _, err := dialer.DialContext(ctx, u, header)
		if err != nil {
			if ctx.Err() == nil {
				s.errorf("feed", "dial: %v", err)
				s.lat.record("feed", 0, true, false)
			}
			sleep(ctx, time.Second)
			continue
		}
		s.feedConnects.Add(1)
		cctx, cancel := context.WithCancel(ctx)
		if churn {
			cctx, cancel = context.WithTimeout(ctx, 15*time.Second+time.Duration(r.IntN(10))*time.Second)
		}
		stop := context.AfterFunc(cctx, func() {
			_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"), time.Now().Add(time.Second))
			_ = ws.SetReadDeadline(time.Now().Add(time.Second))
		})
		for {
			_, _, err := ws.ReadMessage()
			if err != nil {
				if cctx.Err() == nil {
					// heirloom ended the connection: the feed drops a consumer that falls
					// behind, by design (a loaded machine can make this one slow), so it is
					// counted and reported, not failed.
					s.feedDrops.Add(1)
					s.errorf("feed (dropped)", "connection ended: %v", err)
				}
				break
			}
			s.feedEvents.Add(1)
		}
		stop()
		cancel()
		_ = ws.Close()
		if ctx.Err() == nil && !churn {
			sleep(ctx, time.Second)
		}
	}
}

// sleep waits d or until ctx ends; it reports whether the wait ran its course.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// jitter returns d scaled by a random factor in [0.5, 1.5).
func jitter(r *rand.Rand, d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.5 + r.Float64()))
}
