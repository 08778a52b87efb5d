package gatewaytest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// errHung is what a write returns while the server hangs: nothing goes out.
var errHung = errors.New("gatewaytest: server hangs")

// conn is one client connection: the handler goroutine reads and answers requests; ticks and
// emitted events are written from other goroutines, one data frame at a time.
type conn struct {
	s  *Server
	ws *websocket.Conn
	n  int // 1-based, in order of acceptance

	helloed    atomic.Bool // hello-ok sent
	subscribed atomic.Bool // sessions.subscribe answered

	wmu sync.Mutex // one writer of data frames at a time
	seq int64      // the last event seq sent; under wmu

	closeOnce sync.Once
	kill      chan struct{} // closed by closeWith
	done      chan struct{} // closed when the handler is finished with the connection
}

var upgrader = websocket.Upgrader{
	// Browsers are not the concern of a stand-in; OpenClaw's origin checks are not modelled.
	CheckOrigin: func(*http.Request) bool { return true },
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered the request
	}
	s.mu.Lock()
	if s.closed || s.ln == nil {
		s.mu.Unlock()
		_ = ws.Close()
		return
	}
	s.accepted++
	c := &conn{s: s, ws: ws, n: s.accepted, kill: make(chan struct{}), done: make(chan struct{})}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = ws.Close()
		close(c.done)
		s.wg.Done()
	}()
	c.serve()
}

// serve runs the handshake and then answers requests until the connection ends.
func (c *conn) serve() {
	ws := c.ws
	ws.SetReadLimit(PreauthMaxPayload)
	ws.SetPingHandler(func(data string) error {
		c.s.mu.Lock()
		quiet := c.s.noPongs || c.s.hung
		c.s.mu.Unlock()
		if quiet {
			return nil
		}
		return ignoreClosed(ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(writeWait)))
	})
	ws.SetCloseHandler(func(code int, reason string) error {
		c.s.mu.Lock()
		c.s.closes = append(c.s.closes, Close{Conn: c.n, Code: code, Reason: reason})
		c.s.mu.Unlock()
		if hung, _ := c.s.isHung(); hung {
			return nil // a hung server does not answer a close frame either
		}
		// RFC 6455 5.5.1: answer a close frame with a close frame, echoing the code.
		_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(writeWait))
		return nil
	})

	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	challenge, _ := json.Marshal(map[string]any{
		"type":  "event",
		"event": "connect.challenge",
		"payload": map[string]any{
			"nonce":        hex.EncodeToString(nonce),
			"ts":           time.Now().UnixMilli(),
			"capabilities": []string{"model-catalog-snapshot"},
		},
	})
	if c.write(challenge) != nil {
		c.holdWhileHung()
		return
	}

	_ = ws.SetReadDeadline(time.Now().Add(handshakeWait))
	_, data, err := ws.ReadMessage()
	if err != nil {
		c.holdWhileHung()
		return
	}
	if hung, _ := c.s.isHung(); hung {
		c.holdWhileHung()
		return
	}
	if !c.handshake(data) {
		c.drain()
		return
	}
	_ = ws.SetReadDeadline(time.Time{})
	select {
	case <-c.kill: // closeWith ran meanwhile: its deadline for the close reply stands again
		_ = ws.NetConn().SetReadDeadline(time.Now().Add(closeWait))
	default:
	}
	ws.SetReadLimit(c.s.opts.MaxPayload)

	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			c.holdWhileHung()
			return
		}
		if hung, _ := c.s.isHung(); hung {
			continue // read and dropped: a hung Gateway answers nothing
		}
		c.request(data)
	}
}

// holdWhileHung keeps a hung server's connection open until the server stops hanging, the
// connection is closed on purpose, or the server closes.
func (c *conn) holdWhileHung() {
	hung, unhung := c.s.isHung()
	if !hung {
		return
	}
	select {
	case <-unhung:
	case <-c.kill:
	case <-c.s.stop:
	}
}

// drain reads until the client's close reply or the close wait passes, after the server sent
// a close frame itself.
func (c *conn) drain() {
	_ = c.ws.SetReadDeadline(time.Now().Add(closeWait))
	for {
		if _, _, err := c.ws.ReadMessage(); err != nil {
			return
		}
	}
}

// closeWith starts the close handshake: a close frame with code and reason, then the read
// loop ends on the client's reply or after closeWait.
func (c *conn) closeWith(code int, reason string) {
	c.closeOnce.Do(func() {
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(closeWait))
		_ = c.ws.NetConn().SetReadDeadline(time.Now().Add(closeWait))
		close(c.kill)
	})
}

// reply sends a res frame: ok with result, or not ok with e.
func (c *conn) reply(id string, result any, e *Error) {
	frame := map[string]any{"type": "res", "id": id, "ok": e == nil}
	if e != nil {
		frame["error"] = e
	} else if result != nil {
		frame["payload"] = result
	}
	b, err := json.Marshal(frame)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"type": "res", "id": id, "ok": false,
			"error": &Error{Code: "UNAVAILABLE", Message: "gatewaytest: " + err.Error()}})
	}
	_ = c.write(b)
}

// sendEvent writes an event frame with this connection's next seq. The frame is put together
// by hand around the payload, so that a multi-MiB payload costs a copy, not a marshal, while
// the connection's writes (ticks included) wait.
func (c *conn) sendEvent(event string, payload json.RawMessage) error {
	if hung, _ := c.s.isHung(); hung {
		return errHung
	}
	name, err := json.Marshal(event)
	if err != nil {
		return err
	}
	b := make([]byte, 0, len(payload)+len(name)+64)
	b = append(b, `{"type":"event","event":`...)
	b = append(b, name...)
	if len(payload) > 0 {
		b = append(b, `,"payload":`...)
		b = append(b, payload...)
	}
	b = append(b, `,"seq":`...)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.seq++
	b = strconv.AppendInt(b, c.seq, 10)
	b = append(b, '}')
	return c.writeLocked(b)
}

// write writes one text frame, unless the server hangs.
func (c *conn) write(b []byte) error {
	if hung, _ := c.s.isHung(); hung {
		return errHung
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(b)
}

func (c *conn) writeLocked(b []byte) error {
	_ = c.ws.SetWriteDeadline(time.Now().Add(writeWait))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

// truncateReason fits a close reason into a control frame (125 bytes, 2 for the code),
// cutting at a rune boundary: the peer rejects a reason that is not UTF-8.
func truncateReason(s string) string {
	const max = 123
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

func ignoreClosed(err error) error {
	if errors.Is(err, websocket.ErrCloseSent) {
		return nil
	}
	return err
}
