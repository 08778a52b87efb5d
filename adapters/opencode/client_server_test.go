package opencode_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

// fakeServer is a stand-in for `opencode serve` on loopback: /event streams what the test's
// stream function writes, /session and /session/{id}/message answer from its tables, and
// every request is logged.
type fakeServer struct {
	*httptest.Server

	// stream writes connection n (1-based) of /event after the headers went out; returning
	// closes the stream cleanly. Nil: send server.connected, then heartbeats until the client
	// goes.
	stream func(w *sseWriter, r *http.Request, n int)
	// beforeHeaders, when set, runs before /event writes its headers (a hanging server).
	beforeHeaders func(r *http.Request, n int)
	// wrap, when set, wraps the server's handler.
	wrap func(http.Handler) http.Handler

	conns atomic.Int64

	mu       sync.Mutex
	sessions []string          // GET /session reply items, JSON objects
	messages map[string]string // session id → GET /session/{id}/message reply
	requests []request
}

type request struct {
	Path   string
	Header http.Header
}

// newFakeServer returns a server to set up and then start; it is closed in t.Cleanup.
func newFakeServer(t testing.TB) *fakeServer {
	t.Helper()
	s := &fakeServer{messages: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /event", s.serveEvent)
	mux.HandleFunc("GET /session", func(w http.ResponseWriter, r *http.Request) {
		s.log(r)
		s.mu.Lock()
		body := "[" + strings.Join(s.sessions, ",") + "]"
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	})
	mux.HandleFunc("GET /session/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.log(r)
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, item := range s.sessions {
			var info struct{ ID string }
			if json.Unmarshal([]byte(item), &info) == nil && info.ID == r.PathValue("id") {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, item)
				return
			}
		}
		http.NotFound(w, r)
	})
	mux.HandleFunc("GET /session/{id}/message", func(w http.ResponseWriter, r *http.Request) {
		s.log(r)
		s.mu.Lock()
		body, ok := s.messages[r.PathValue("id")]
		s.mu.Unlock()
		if !ok {
			body = "[]"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	})
	s.Server = httptest.NewUnstartedServer(mux)
	t.Cleanup(s.Close)
	return s
}

// start starts serving with the functions set so far, which must not change afterwards.
func (s *fakeServer) start() *fakeServer {
	if s.wrap != nil {
		s.Config.Handler = s.wrap(s.Config.Handler)
	}
	s.Start()
	return s
}

func (s *fakeServer) serveEvent(w http.ResponseWriter, r *http.Request) {
	s.log(r)
	n := int(s.conns.Add(1))
	if s.beforeHeaders != nil {
		s.beforeHeaders(r, n)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	sw := &sseWriter{w: w, rc: http.NewResponseController(w)}
	_ = sw.rc.Flush()
	if s.stream == nil {
		sw.send(frameConnected)
		sw.hold(r)
		return
	}
	s.stream(sw, r, n)
}

func (s *fakeServer) log(r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, request{Path: r.URL.Path, Header: r.Header.Clone()})
	s.mu.Unlock()
}

// setSessions replaces the GET /session reply.
func (s *fakeServer) setSessions(items ...string) {
	s.mu.Lock()
	s.sessions = items
	s.mu.Unlock()
}

// setMessages sets the GET /session/{id}/message reply of one session.
func (s *fakeServer) setMessages(id, body string) {
	s.mu.Lock()
	s.messages[id] = body
	s.mu.Unlock()
}

// requestsTo returns the logged requests for path.
func (s *fakeServer) requestsTo(path string) []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []request
	for _, r := range s.requests {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// sseWriter writes SSE frames and flushes each.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// send writes one frame with data as its single data line; false once the client is gone.
func (s *sseWriter) send(data string) bool {
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", data); err != nil {
		return false
	}
	return s.rc.Flush() == nil
}

// hold sends a heartbeat every 50 ms until the client goes, as OpenCode does every 10 s.
func (s *sseWriter) hold(r *http.Request) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if !s.send(frameHeartbeat) {
				return
			}
		}
	}
}

const (
	frameConnected = `{"id":"evt_0","type":"server.connected","properties":{}}`
	frameHeartbeat = `{"id":"evt_1","type":"server.heartbeat","properties":{}}`
)

// frameSessionCreated is a session.created frame as OpenCode 1.18 sends it.
func frameSessionCreated(id string) string {
	return fmt.Sprintf(`{"id":"evt_c_%[1]s","type":"session.created","properties":{"sessionID":%[1]q,"info":%[2]s}}`,
		id, sessionInfo(id, 1))
}

// sessionInfo is one session as GET /session lists it, updated at the given millisecond.
func sessionInfo(id string, updated int64) string {
	return fmt.Sprintf(`{"id":%q,"slug":"s","projectID":"global","directory":"/tmp/proj","title":"title %s",`+
		`"version":"1.18.33","time":{"created":1,"updated":%d}}`, id, id, updated)
}

// frameTextPart is a message.part.updated frame carrying a text part.
func frameTextPart(session, part, text string) string {
	return fmt.Sprintf(`{"id":"evt_p_%[2]s","type":"message.part.updated","properties":{"sessionID":%[1]q,`+
		`"part":{"id":%[2]q,"sessionID":%[1]q,"messageID":"msg_1","type":"text","text":%[3]q},"time":1}}`,
		session, part, text)
}

// messagesReply is a GET /session/{id}/message reply: one user message with one text part.
func messagesReply(session, part, text string) string {
	return fmt.Sprintf(`[{"info":{"id":"msg_%[2]s","sessionID":%[1]q,"role":"user","time":{"created":1},`+
		`"agent":"build","model":{"providerID":"fake","modelID":"m"}},"parts":[{"id":%[2]q,"sessionID":%[1]q,`+
		`"messageID":"msg_%[2]s","type":"text","text":%[3]q}]}]`, session, part, text)
}

func forSession(id string) func(adapters.Event) bool {
	return func(ev adapters.Event) bool { return ev.SessionID == id }
}

func withText(text string) func(adapters.Event) bool {
	return func(ev adapters.Event) bool {
		for _, turn := range ev.Turns {
			if turn.Text == text {
				return true
			}
		}
		return false
	}
}

// newTestClient returns a Client for srv with test-sized timeouts, closed in t.Cleanup.
func newTestClient(t *testing.T, url string, sink adapters.Sink) *opencode.Client {
	t.Helper()
	c := opencode.NewClient(url, sink)
	c.IdleTimeout = 200 * time.Millisecond
	c.BackoffMin = 10 * time.Millisecond
	c.BackoffMax = 50 * time.Millisecond
	c.Logger = &streamtest.Logger{TB: t}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
