package openclaw

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Protocol is the Gateway protocol version the client speaks (OpenClaw
// 2026.9 accepts 3–4; operator clients use 4).
const Protocol = 4

// Client identity sent in connect: the reserved backend client id the
// Gateway's own helpers use, with a display name of ours.
const (
	clientID          = "gateway-client"
	clientMode        = "backend"
	clientDisplayName = "heirloom-e2e"
	clientPlatform    = "linux"
)

// OperatorScopes are the scopes a Client asks for: enough to read and
// subscribe (operator.read), send prompts (operator.write) and compact
// (operator.admin).
var OperatorScopes = []string{"operator.read", "operator.write", "operator.admin"}

// Frame is one Gateway WebSocket frame: a request {type:"req", id, method,
// params}, a response {type:"res", id, ok, payload | error}, or an event
// {type:"event", event, payload, seq?}.
type Frame struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	OK      *bool           `json:"ok,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
	Event   string          `json:"event,omitempty"`
	Seq     *int64          `json:"seq,omitempty"`
}

// RPCError is the error of a failed response, {code, message, details?}.
type RPCError struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details,omitempty"`
	// Retryable and RetryAfterMs are set on UNAVAILABLE while the Gateway
	// finishes starting.
	Retryable    bool  `json:"retryable,omitempty"`
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
}

func (e *RPCError) Error() string {
	if len(e.Details) > 0 {
		return fmt.Sprintf("%s: %s (details %.300s)", e.Code, e.Message, e.Details)
	}
	return e.Code + ": " + e.Message
}

// Event is an event frame as the client received it.
type Event struct {
	Name    string
	Payload json.RawMessage
	// Seq is the Gateway's broadcast sequence number, when it sent one.
	Seq *int64
	// At is when the client read the frame.
	At time.Time
}

// Decode unmarshals the payload into v.
func (e Event) Decode(v any) error {
	if err := json.Unmarshal(e.Payload, v); err != nil {
		return fmt.Errorf("decode %s payload: %w", e.Name, err)
	}
	return nil
}

// RecordedFrame is one frame of a Client's log: Dir is "in" (from the
// Gateway) or "out" (sent), T the time in Unix milliseconds. The shape is
// that of ../shared/fixtures/openclaw/live/spawn.all-frames.json.
type RecordedFrame struct {
	Dir   string          `json:"dir"`
	T     int64           `json:"t"`
	Frame json.RawMessage `json:"frame"`
}

// Identity is a device identity: an Ed25519 key pair whose id is the hex
// SHA-256 of the raw public key. Every connect signs the Gateway's challenge
// with it, as OpenClaw's own clients do; a loopback connect with the shared
// token pairs a new device silently (gateway.nodes.pairing.autoApproveLocal,
// on by default). A connect without a device keeps the scopes it asks for
// only as the reserved client id "gateway-client" in "backend" mode over
// loopback (OpenClaw 2026.9.6); any other client gets none.
type Identity struct {
	ID         string
	PublicKey  ed25519.PublicKey
	PrivateKey ed25519.PrivateKey
}

// NewIdentity returns a fresh device identity.
func NewIdentity() (*Identity, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate device key: %w", err)
	}
	sum := sha256.Sum256(pub)
	return &Identity{ID: hex.EncodeToString(sum[:]), PublicKey: pub, PrivateKey: priv}, nil
}

// deviceProof signs the v3 device-auth payload,
// "v3|device|client|mode|role|scopes|signedAt|token|nonce|platform|family".
func (id *Identity) deviceProof(token, nonce string, signedAt int64) map[string]any {
	payload := strings.Join([]string{
		"v3", id.ID, clientID, clientMode, "operator", strings.Join(OperatorScopes, ","),
		strconv.FormatInt(signedAt, 10), token, nonce, clientPlatform, "",
	}, "|")
	sig := ed25519.Sign(id.PrivateKey, []byte(payload))
	return map[string]any{
		"id":        id.ID,
		"publicKey": base64.RawURLEncoding.EncodeToString(id.PublicKey),
		"signature": base64.RawURLEncoding.EncodeToString(sig),
		"signedAt":  signedAt,
		"nonce":     nonce,
	}
}

// Client is an operator connection to the Gateway's WebSocket. It answers
// requests (Call), keeps every event it receives in order (Events,
// WaitEvent) and logs every frame in both directions (Frames). Safe for
// concurrent use.
type Client struct {
	// Hello is the payload of the hello-ok response.
	Hello json.RawMessage

	conn *websocket.Conn
	wmu  sync.Mutex // serialises writes

	mu      sync.Mutex
	nextID  int
	pending map[string]chan Frame
	events  []Event
	frames  []RecordedFrame
	changed chan struct{} // closed and replaced whenever events grow or the client closes
	err     error         // why the read loop ended
	done    chan struct{} // closed when the read loop has ended
}

// maxFrame is the largest frame the client reads; the Gateway's own limit is
// 25 MiB (hello-ok policy.maxPayload).
const maxFrame = 32 << 20

// Dial connects to the Gateway at wsURL ("ws://127.0.0.1:PORT") as an
// operator with OperatorScopes, authenticating with the shared token and the
// device identity, and returns once hello-ok has arrived. A Gateway still
// starting answers connect with a retryable UNAVAILABLE error (an *RPCError
// with Retryable set): Gateway.Dial retries.
func Dial(ctx context.Context, wsURL, token string, id *Identity) (*Client, error) {
	d := &websocket.Dialer{HandshakeTimeout: 10 * time.Second} // no Proxy: loopback only
	conn, resp, err := d.DialContext(ctx, wsURL, nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", wsURL, err)
	}
	conn.SetReadLimit(maxFrame)
	c := &Client{
		conn:    conn,
		pending: map[string]chan Frame{},
		changed: make(chan struct{}),
		done:    make(chan struct{}),
	}
	go c.readLoop()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	if err := c.handshake(ctx, token, id); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// handshake waits for connect.challenge, then sends connect and waits for
// hello-ok.
func (c *Client) handshake(ctx context.Context, token string, id *Identity) error {
	ev, err := c.WaitEvent(ctx, 0, func(e Event) bool { return e.Name == "connect.challenge" })
	if err != nil {
		return fmt.Errorf("wait for connect.challenge: %w", err)
	}
	var ch struct {
		Nonce string `json:"nonce"`
		TS    int64  `json:"ts"`
	}
	if err := ev.Decode(&ch); err != nil || ch.Nonce == "" {
		return fmt.Errorf("connect.challenge %s: %v", ev.Payload, err)
	}
	params := map[string]any{
		"minProtocol": Protocol,
		"maxProtocol": Protocol,
		"client": map[string]any{
			"id": clientID, "displayName": clientDisplayName, "version": "0.0.0",
			"platform": clientPlatform, "mode": clientMode,
		},
		"role":   "operator",
		"scopes": OperatorScopes,
		"caps":   []string{"tool-events"},
		"auth":   map[string]any{"token": token},
		"device": id.deviceProof(token, ch.Nonce, ch.TS),
	}
	var hello json.RawMessage
	if err := c.Call(ctx, "connect", params, &hello); err != nil {
		var rpc *RPCError
		if errors.As(err, &rpc) {
			return fmt.Errorf("connect: %w", err)
		}
		return err
	}
	c.Hello = hello
	return nil
}

// readLoop reads frames until the connection ends, routing responses to
// their callers and appending events to the log.
func (c *Client) readLoop() {
	var err error
	for {
		var data []byte
		if _, data, err = c.conn.ReadMessage(); err != nil {
			break
		}
		now := time.Now()
		var f Frame
		if jerr := json.Unmarshal(data, &f); jerr != nil {
			err = fmt.Errorf("decode frame: %w: %.200s", jerr, data)
			break
		}
		c.mu.Lock()
		c.frames = append(c.frames, RecordedFrame{Dir: "in", T: now.UnixMilli(), Frame: json.RawMessage(data)})
		switch f.Type {
		case "res":
			if ch, ok := c.pending[f.ID]; ok {
				select {
				case ch <- f:
				default: // the caller's buffer holds the latest; it only reads one final
				}
			}
		case "event":
			c.events = append(c.events, Event{Name: f.Event, Payload: f.Payload, Seq: f.Seq, At: now})
			close(c.changed)
			c.changed = make(chan struct{})
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	c.err = err
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	close(c.done)
}

// Call sends a request and decodes the payload of its response into out
// (nil discards it). A response with status "accepted" (the Gateway's first
// answer to agent) is skipped: Call returns the final one. A failed
// response is an *RPCError. ctx bounds the wait.
func (c *Client) Call(ctx context.Context, method string, params, out any) error {
	err := c.call(ctx, method, params, out)
	var rpc *RPCError
	if err == nil || errors.As(err, &rpc) {
		return err
	}
	return fmt.Errorf("%s: %w", method, err)
}

// call is Call without the method in its errors, apart from an *RPCError.
func (c *Client) call(ctx context.Context, method string, params, out any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("marshal params: %w", err)
	}
	ch := make(chan Frame, 4)
	c.mu.Lock()
	c.nextID++
	id := "r" + strconv.Itoa(c.nextID)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	req, err := json.Marshal(Frame{Type: "req", ID: id, Method: method, Params: p})
	if err != nil {
		return fmt.Errorf("marshal request: %w", err)
	}
	if err := c.write(req); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	for {
		var f Frame
		select {
		case f = <-ch:
		case <-c.done:
			select {
			case f = <-ch: // answered just before the connection closed
			default:
				return fmt.Errorf("connection closed: %v", c.Err())
			}
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if f.OK == nil || !*f.OK {
			if f.Error == nil {
				return fmt.Errorf("failed response without error: %.300s", f.Payload)
			}
			return f.Error
		}
		var status struct {
			Status string `json:"status"`
		}
		if json.Unmarshal(f.Payload, &status) == nil && status.Status == "accepted" && method == "agent" {
			continue
		}
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(f.Payload, out); err != nil {
			return fmt.Errorf("decode result: %w: %.300s", err, f.Payload)
		}
		return nil
	}
}

// write sends one text frame and logs it.
func (c *Client) write(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	c.frames = append(c.frames, RecordedFrame{Dir: "out", T: time.Now().UnixMilli(), Frame: json.RawMessage(data)})
	c.mu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.conn.WriteMessage(websocket.TextMessage, data)
}

// Events returns a copy of the events received so far, in order.
func (c *Client) Events() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Event(nil), c.events...)
}

// Frames returns a copy of the frame log, both directions, in order.
func (c *Client) Frames() []RecordedFrame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]RecordedFrame(nil), c.frames...)
}

// WaitEvent returns the first event at index from or later of the event log
// (see Events) that match accepts, with its index, waiting for it until ctx
// ends or the connection closes.
func (c *Client) WaitEvent(ctx context.Context, from int, match func(Event) bool) (Event, error) {
	for {
		c.mu.Lock()
		for i := from; i < len(c.events); i++ {
			if match(c.events[i]) {
				e := c.events[i]
				c.mu.Unlock()
				return e, nil
			}
		}
		from = len(c.events)
		changed, done := c.changed, c.done
		c.mu.Unlock()
		select {
		case <-changed:
		case <-done:
			// Check once more: the last events may have arrived with the close.
			c.mu.Lock()
			n := len(c.events)
			c.mu.Unlock()
			if from == n {
				return Event{}, fmt.Errorf("connection closed: %v", c.Err())
			}
		case <-ctx.Done():
			return Event{}, context.Cause(ctx)
		}
	}
}

// Err returns why the connection ended, or nil while it is open.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection and waits for the read loop. Safe to call
// twice.
func (c *Client) Close() {
	c.wmu.Lock()
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	c.wmu.Unlock()
	_ = c.conn.Close()
	<-c.done
}
