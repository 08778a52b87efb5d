package openclaw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// conn is one WebSocket connection to the Gateway and the two goroutines that own its halves:
// the reader, the only caller of ReadMessage, and the writer, the only caller of WriteMessage.
// Control frames (pongs, close frames) go through WriteControl, which gorilla allows from any
// goroutine. The reader never waits on anyone: responses go to their waiting request, events
// to a bounded queue.
type conn struct {
	c  *Client
	ws *websocket.Conn

	out       chan []byte   // frames for the writer
	challenge chan struct{} // closed when connect.challenge arrived
	rearm     chan struct{} // tells the writer the window changed
	events    *queue        // event frames for the loop goroutine, in order
	// window is the liveness window, ns: nothing read for this long ends the connection. It
	// lives in the net.Conn, which extends the read deadline on every read that brings bytes.
	window *atomic.Int64

	mu      sync.Mutex
	pending map[string]chan Frame // request id → where its response goes
	nextID  int64
	err     error // why the connection ended; set once, before done closes

	done       chan struct{} // closed when the connection has ended, for whatever reason
	readerDone chan struct{} // closed when the reader has returned
	peerClosed atomic.Bool   // the Gateway sent a close frame (gorilla answered it)
	helloed    atomic.Bool   // the handshake completed: silence is now a dead Gateway
	wg         sync.WaitGroup

	// Owned by the reader.
	challenged bool
	lastSeq    int64
	seqSeen    bool
}

func newConn(c *Client, ws *websocket.Conn, lc *liveConn) *conn {
	if lc == nil { // dialed without our NetDialContext: a fixed window still bounds silence
		lc = &liveConn{}
		lc.window.Store(int64(c.handshakeWait))
	}
	cn := &conn{
		c:          c,
		ws:         ws,
		out:        make(chan []byte, 16),
		challenge:  make(chan struct{}),
		rearm:      make(chan struct{}, 1),
		events:     newQueue(c.queueBytes),
		pending:    make(map[string]chan Frame),
		done:       make(chan struct{}),
		readerDone: make(chan struct{}),
		window:     &lc.window,
	}
	ws.SetReadLimit(c.maxFrameBytes)
	cn.alive()
	ws.SetPongHandler(func(string) error { cn.alive(); return nil })
	ws.SetPingHandler(func(data string) error {
		cn.alive()
		err := ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(writeWait))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	// The default close handler answers a close frame with one carrying the same code, as
	// RFC 6455 5.5.1 asks; the reader then ends with the *websocket.CloseError.
	return cn
}

func (cn *conn) start() {
	cn.wg.Add(2)
	go cn.read()
	go cn.write()
}

// established switches the connection from the handshake to following: from now on the
// liveness window is d, restarted from now.
func (cn *conn) established(d time.Duration) {
	cn.window.Store(int64(d))
	cn.helloed.Store(true)
	cn.alive()
	select {
	case cn.rearm <- struct{}{}:
	default:
	}
}

// alive restarts the liveness window: something arrived.
func (cn *conn) alive() {
	_ = cn.ws.SetReadDeadline(time.Now().Add(time.Duration(cn.window.Load())))
}

// liveConn is the TCP connection under a conn: every read that returns bytes restarts the
// read deadline, so the deadline measures silence, not the time one frame takes to arrive.
type liveConn struct {
	net.Conn
	window atomic.Int64 // ns
}

func (l *liveConn) Read(p []byte) (int, error) {
	n, err := l.Conn.Read(p)
	if n > 0 {
		_ = l.Conn.SetReadDeadline(time.Now().Add(time.Duration(l.window.Load())))
	}
	return n, err
}

// fail ends the connection with err, once: pending and future requests fail, the writer
// stops, the loop goroutine stops taking events after the ones already queued.
func (cn *conn) fail(err error) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.err != nil {
		return
	}
	cn.err = err
	close(cn.done)
}

// ended returns why the connection ended; nil while it is up.
func (cn *conn) ended() error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.err
}

// cause returns why the connection ended, wrapping ErrNotConnected.
func (cn *conn) cause() error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return fmt.Errorf("%w: %w", ErrNotConnected, cn.err)
}

// finish ends the connection and waits for its goroutines: unless the Gateway closed first,
// it sends a close frame with code and reason and waits up to closeGrace for the Gateway's
// reply, then closes the TCP connection.
func (cn *conn) finish(code int, reason string) {
	cn.fail(errClosing)
	if !cn.peerClosed.Load() {
		_ = cn.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(closeGrace))
		t := time.NewTimer(closeGrace)
		select {
		case <-cn.readerDone:
		case <-t.C:
		}
		t.Stop()
	}
	_ = cn.ws.Close()
	cn.wg.Wait()
}

// read is the reader goroutine.
func (cn *conn) read() {
	defer cn.wg.Done()
	defer close(cn.readerDone)
	for {
		_, data, err := cn.ws.ReadMessage()
		if err != nil {
			cn.fail(cn.readError(err))
			return
		}
		cn.c.stats.Frames.Add(1)
		if err := cn.handle(data); err != nil {
			cn.fail(err)
			return
		}
		// Time spent handling the frame (decoding a large one takes a while) is ours, not the
		// Gateway's silence: the window starts again now. The net poller fails a read whose
		// deadline has passed even when bytes are waiting.
		cn.alive()
	}
}

// readError says why reading failed, counting what Stats counts.
func (cn *conn) readError(err error) error {
	var ce *websocket.CloseError
	var ne net.Error
	switch {
	case errors.As(err, &ce):
		cn.peerClosed.Store(true)
		return &CloseError{Code: ce.Code, Reason: ce.Text}
	case errors.Is(err, websocket.ErrReadLimit):
		cn.c.stats.Oversized.Add(1)
		return fmt.Errorf("%w (%d bytes)", errOversized, cn.c.maxFrameBytes)
	case errors.As(err, &ne) && ne.Timeout():
		select {
		case <-cn.done: // we ended it
			return errClosing
		default:
		}
		if !cn.helloed.Load() {
			return errors.New("no answer from the Gateway within HandshakeTimeout")
		}
		cn.c.stats.IdleTimeouts.Add(1)
		return errIdle
	}
	return fmt.Errorf("read: %w", err)
}

// handle routes one frame: a response to its request, an event to the queue. An error ends the
// connection; malformed frames are counted and skipped.
func (cn *conn) handle(data []byte) error {
	var f Frame
	if err := json.Unmarshal(data, &f); err != nil {
		cn.c.malformed(fmt.Sprintf("frame of %d bytes", len(data)), err)
		return nil
	}
	switch f.Type {
	case "res":
		cn.mu.Lock()
		ch := cn.pending[f.ID]
		delete(cn.pending, f.ID)
		cn.mu.Unlock()
		if ch != nil {
			ch <- f // buffered; a response nobody waits for any more is dropped
		}
		return nil
	case "event":
	default:
		cn.c.malformed("frame", fmt.Errorf("type %q", f.Type))
		return nil
	}
	if f.Event == "connect.challenge" {
		if !cn.challenged {
			cn.challenged = true
			close(cn.challenge)
		}
		return nil
	}
	if f.Seq != nil {
		if cn.seqSeen && *f.Seq > cn.lastSeq+1 {
			// The Gateway numbers each connection's events; a jump means it dropped some for
			// us (a slow consumer): resync before this event.
			cn.c.stats.gap.Add(1)
			if !cn.events.push(queued{resync: true, gap: [2]int64{cn.lastSeq + 1, *f.Seq}}) {
				cn.c.stats.overflows.Add(1)
				return errOverflow
			}
		}
		cn.lastSeq, cn.seqSeen = *f.Seq, true
	}
	if f.Event == "tick" {
		return nil // a keepalive: reading it was the point
	}
	if !cn.events.push(queued{frame: f, size: int64(len(data))}) {
		cn.c.stats.overflows.Add(1)
		return errOverflow
	}
	return nil
}

// write is the writer goroutine: request frames in order, and a ping every quarter window.
func (cn *conn) write() {
	defer cn.wg.Done()
	ping := time.NewTimer(cn.pingEvery())
	defer ping.Stop()
	for {
		select {
		case <-cn.done:
			return
		case b := <-cn.out:
			_ = cn.ws.SetWriteDeadline(time.Now().Add(writeWait))
			if err := cn.ws.WriteMessage(websocket.TextMessage, b); err != nil {
				cn.fail(fmt.Errorf("write: %w", err))
				return
			}
		case <-ping.C:
			if err := cn.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)); err != nil {
				cn.fail(fmt.Errorf("ping: %w", err))
				return
			}
			ping.Reset(cn.pingEvery())
		case <-cn.rearm:
			ping.Reset(cn.pingEvery())
		}
	}
}

func (cn *conn) pingEvery() time.Duration {
	return max(time.Duration(cn.window.Load())/4, 10*time.Millisecond)
}

// request sends one request and waits for its response, the end of the connection, or ctx.
func (cn *conn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	cn.mu.Lock()
	if cn.err != nil {
		cn.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, cn.cause())
	}
	cn.nextID++
	id := strconv.FormatInt(cn.nextID, 10)
	ch := make(chan Frame, 1)
	cn.pending[id] = ch
	cn.mu.Unlock()
	defer func() {
		cn.mu.Lock()
		delete(cn.pending, id)
		cn.mu.Unlock()
	}()

	b, err := json.Marshal(Frame{Type: "req", ID: id, Method: method, Params: p})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case cn.out <- b:
	case <-cn.done:
		return nil, fmt.Errorf("%s: %w", method, cn.cause())
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
	answer := func(f Frame) (json.RawMessage, error) {
		if f.OK == nil || !*f.OK {
			return nil, requestError(method, f)
		}
		return f.Payload, nil
	}
	select {
	case f := <-ch:
		return answer(f)
	case <-cn.done:
		// The reader hands a response on before it ends the connection: an answer that came
		// with the end (a refusal, then the close frame) is here by now.
		select {
		case f := <-ch:
			return answer(f)
		default:
		}
		return nil, fmt.Errorf("%s: %w", method, cn.cause())
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// requestError turns a failed response into a *RequestError.
func requestError(method string, f Frame) *RequestError {
	re := &RequestError{Method: method, Code: "UNKNOWN", Message: "the Gateway answered without ok"}
	if f.Error == nil {
		return re
	}
	re.Code, re.Message, re.Retryable = f.Error.Code, f.Error.Message, f.Error.Retryable
	re.RetryAfter = time.Duration(f.Error.RetryAfterMs) * time.Millisecond
	var d struct {
		Code string `json:"code"`
	}
	if len(f.Error.Details) > 0 && json.Unmarshal(f.Error.Details, &d) == nil {
		re.Detail = d.Code
	}
	return re
}

// queued is one item for the loop goroutine: an event frame, or a resync the reader asked for.
type queued struct {
	frame  Frame
	size   int64
	resync bool
	gap    [2]int64 // resync: the first missing seq and the one that arrived
}

// queue is a FIFO of event frames bounded in bytes. The reader pushes without waiting; the
// loop goroutine pops.
type queue struct {
	mu    sync.Mutex
	items []queued
	bytes int64
	max   int64
	ready chan struct{} // has a value when items were pushed since the last pop found it empty
}

func newQueue(max int64) *queue {
	return &queue{max: max, ready: make(chan struct{}, 1)}
}

// push adds it, unless that would put more than max bytes in the queue.
func (q *queue) push(it queued) bool {
	q.mu.Lock()
	if len(q.items) > 0 && q.bytes+it.size > q.max {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, it)
	q.bytes += it.size
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// pop takes the oldest item; false when there is none.
func (q *queue) pop() (queued, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return queued{}, false
	}
	it := q.items[0]
	q.items[0] = queued{}
	q.items = q.items[1:]
	if len(q.items) == 0 {
		q.items = nil // let the backing array go
	}
	q.bytes -= it.size
	return it, true
}
