package openclaw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"time"
)

// attempt is how one connection attempt went.
type attempt struct {
	helloed    bool          // the handshake completed
	up         time.Duration // from hello-ok to the end
	window     time.Duration // the liveness window the Gateway's tick interval set
	refused    bool          // the Gateway refused the client: wait BackoffMax
	retryAfter time.Duration // the Gateway asked to wait this long first
	err        error         // why it ended; never nil
}

// attempt makes one connection: dial, handshake, subscribe, resync, then hand events to the
// Sink until the connection ends or ctx does.
func (c *Client) attempt(ctx context.Context) attempt {
	res := attempt{window: 2 * DefaultTickInterval}
	hctx, cancel := context.WithTimeout(ctx, c.handshakeWait)
	defer cancel()
	// Liveness is measured in bytes: every read that brings any extends the deadline, so a
	// multi-MiB frame that takes a while to arrive keeps the connection alive as a tick would.
	var lc *liveConn
	d := *c.dialer
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		lc = &liveConn{Conn: nc}
		lc.window.Store(int64(c.handshakeWait))
		return lc, nil
	}
	ws, resp, err := d.DialContext(hctx, c.URL, nil)
	if err != nil {
		if resp != nil {
			err = fmt.Errorf("%w (HTTP %s)", err, resp.Status)
		}
		res.err = fmt.Errorf("dial: %w", err)
		return res
	}
	cn := newConn(c, ws, lc)
	cn.start()

	hello, err := cn.handshake(hctx)
	cancel()
	if err != nil {
		res.err = err
		var re *RequestError
		var ce *CloseError
		switch {
		case errors.As(err, &re):
			res.refused = re.refusal()
			res.retryAfter = re.RetryAfter
			// OpenClaw closes a refused connection itself, right after its answer: let it,
			// and echo its close frame, rather than cross it with one of ours.
			t := time.NewTimer(closeGrace)
			select {
			case <-cn.readerDone:
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		case errors.As(err, &ce):
			res.refused = ce.refusal()
		}
		reason := "connect failed"
		if ctx.Err() != nil {
			reason = "client closing"
		}
		cn.finish(closeNormal, reason)
		return res
	}

	tick := DefaultTickInterval
	if hello.Policy.TickIntervalMs > 0 {
		tick = time.Duration(hello.Policy.TickIntervalMs) * time.Millisecond
	}
	res.window = 2 * tick
	res.helloed = true
	cn.established(res.window)
	connectedAt := time.Now()
	c.refusalLogged = ""
	c.stats.protocol.Store(int64(hello.Protocol))
	c.stats.Connect()
	c.live.Store(cn)
	c.log.Info("connected to OpenClaw", "version", hello.Server.Version, "protocol", hello.Protocol, "tick", tick)
	if hello.Protocol != testedProtocol {
		c.log.Warn("the Gateway speaks a protocol heirloom was not verified with", "protocol", hello.Protocol, "verified", testedProtocol)
	}
	if !slices.Contains(hello.Auth.Scopes, ReadScope) && !c.scopeLogged {
		c.scopeLogged = true
		c.log.Error("the Gateway granted no "+ReadScope+" scope: it will send no session events", "scopes", hello.Auth.Scopes)
	}

	err = c.follow(ctx, cn)
	if cause := cn.ended(); cause != nil && ctx.Err() == nil {
		err = cause // the connection's own end says more than the request it cut short
	}

	c.live.CompareAndSwap(cn, nil)
	c.stats.Connected.Store(false)
	c.stats.disconnects.Add(1)
	code, reason := closeNormal, "client closing"
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case errors.Is(err, errIdle):
		code, reason = closeTickTimeout, "tick timeout"
	case errors.Is(err, errOverflow):
		reason = "client fell behind; reconnecting"
	case err != nil:
		reason = "reconnecting"
	}
	cn.finish(code, reason)
	res.up = time.Since(connectedAt)
	var re *RequestError
	var ce *CloseError
	switch {
	case errors.As(err, &re):
		res.refused = re.refusal()
	case errors.As(err, &ce):
		res.refused = ce.refusal()
	}
	res.err = err
	return res
}

// helloOK is what the client reads of the hello-ok payload.
type helloOK struct {
	Type     string `json:"type"`
	Protocol int    `json:"protocol"`
	Server   struct {
		Version string `json:"version"`
		ConnID  string `json:"connId"`
	} `json:"server"`
	Auth struct {
		Role   string   `json:"role"`
		Scopes []string `json:"scopes"`
	} `json:"auth"`
	Policy struct {
		MaxPayload     int64 `json:"maxPayload"`
		TickIntervalMs int64 `json:"tickIntervalMs"`
	} `json:"policy"`
}

// connectParams are connect's params (ConnectParamsSchema, a closed object: nothing else may
// be sent).
type connectParams struct {
	MinProtocol int           `json:"minProtocol"`
	MaxProtocol int           `json:"maxProtocol"`
	Client      connectClient `json:"client"`
	Role        string        `json:"role"`
	Scopes      []string      `json:"scopes"`
	Caps        []string      `json:"caps"`
	Auth        *connectAuth  `json:"auth,omitempty"`
	UserAgent   string        `json:"userAgent"`
}

type connectClient struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
	Version     string `json:"version"`
	Platform    string `json:"platform"`
	Mode        string `json:"mode"`
}

type connectAuth struct {
	Token string `json:"token"`
}

// handshake waits for connect.challenge, sends connect and returns the hello-ok.
func (cn *conn) handshake(ctx context.Context) (helloOK, error) {
	var hello helloOK
	select {
	case <-cn.challenge:
	case <-cn.done:
		return hello, fmt.Errorf("handshake: %w", cn.ended())
	case <-ctx.Done():
		return hello, errors.New("handshake: no connect.challenge within HandshakeTimeout")
	}
	c := cn.c
	version := c.Version
	if version == "" {
		version = "dev"
	}
	params := connectParams{
		MinProtocol: MinProtocol,
		MaxProtocol: MaxProtocol,
		Client: connectClient{
			ID:          ClientID,
			DisplayName: "heirloom",
			Version:     version,
			Platform:    runtime.GOOS,
			Mode:        ClientMode,
		},
		Role:      "operator",
		Scopes:    []string{ReadScope},
		Caps:      []string{},
		UserAgent: "heirloom/" + version,
	}
	if c.Token != "" {
		params.Auth = &connectAuth{Token: c.Token}
	}
	payload, err := cn.request(ctx, "connect", params)
	if err != nil {
		var re *RequestError
		if errors.As(err, &re) {
			return hello, err // "connect: CODE (DETAIL): message"
		}
		if cause := cn.ended(); cause != nil {
			// The Gateway closed the connection: its close frame says why.
			return hello, fmt.Errorf("connect: %w", cause)
		}
		if ctx.Err() != nil {
			return hello, errors.New("connect: no hello-ok within HandshakeTimeout")
		}
		return hello, err
	}
	if err := json.Unmarshal(payload, &hello); err != nil || hello.Type != "hello-ok" {
		if err == nil {
			err = fmt.Errorf("payload type %q", hello.Type)
		}
		c.malformed("hello-ok", err)
		return hello, fmt.Errorf("connect: malformed hello-ok: %w", err)
	}
	return hello, nil
}
