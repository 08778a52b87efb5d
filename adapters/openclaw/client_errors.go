package openclaw

import (
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"
)

// Why a connection ends, besides a close frame from the Gateway (*CloseError).
var (
	errIdle      = errors.New("nothing received for twice the tick interval")
	errOversized = errors.New("a frame over MaxFrameBytes was dropped; raise it")
	errOverflow  = errors.New("the Sink fell QueueBytes behind; events were dropped")
	errClosing   = errors.New("client closing")
)

// Close codes the client sends (RFC 6455 7.4; 4000 is OpenClaw's own client's tick timeout).
const (
	closeNormal      = websocket.CloseNormalClosure // our Close, and any drop of our own
	closeTickTimeout = 4000                         // nothing arrived for twice the tick interval
)

// CloseError is a connection the Gateway closed with a close frame: its code and reason. OpenClaw
// closes with 1008 on an auth or policy failure, 1002 on a protocol mismatch, 1012 when it
// restarts, 1013 while it starts up, 4001 when its auth configuration changed.
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("closed by the Gateway: %d %s", e.Code, e.Reason)
}

// refusal reports whether the Gateway closed for a reason that reconnecting at once will not
// fix: a protocol error, a policy violation (auth, pairing, origin) or an application code.
func (e *CloseError) refusal() bool {
	switch {
	case e.Code == websocket.CloseProtocolError, e.Code == websocket.CloseUnsupportedData,
		e.Code == websocket.CloseInvalidFramePayloadData, e.Code == websocket.ClosePolicyViolation,
		e.Code == websocket.CloseMandatoryExtension:
		return true
	case e.Code >= 4000 && e.Code <= 4999:
		return true
	}
	return false
}

// RequestError is a request the Gateway answered with ok:false.
type RequestError struct {
	Method  string // the request's method
	Code    string // error.code: "INVALID_REQUEST", "FORBIDDEN", "UNAVAILABLE", …
	Detail  string // error.details.code: "AUTH_TOKEN_MISMATCH", "PROTOCOL_MISMATCH", "MISSING_SCOPE", …; "" when absent
	Message string // error.message, for people
	// RetryAfter is how long the Gateway asked to wait before trying again; 0 when it did not say.
	RetryAfter time.Duration
	Retryable  bool // error.retryable
}

func (e *RequestError) Error() string {
	code := e.Code
	if e.Detail != "" {
		code += " (" + e.Detail + ")"
	}
	return fmt.Sprintf("%s: %s: %s", e.Method, code, e.Message)
}

// refusal reports whether a failed connect means the Gateway will not take this client as it
// is, so that retrying soon is pointless: anything but a retryable or UNAVAILABLE answer.
func (e *RequestError) refusal() bool {
	return !e.Retryable && e.Code != "UNAVAILABLE" && e.Detail != "AUTH_RATE_LIMITED"
}

// refusalHint says what to do about a refusal, as far as it can tell; "" when it cannot.
func refusalHint(err error) string {
	var re *RequestError
	if !errors.As(err, &re) {
		return ""
	}
	switch re.Detail {
	case "AUTH_TOKEN_MISSING", "AUTH_TOKEN_MISMATCH", "AUTH_TOKEN_NOT_CONFIGURED", "AUTH_UNAUTHORIZED", "AUTH_REQUIRED":
		return "give heirloom the Gateway's token, gateway.auth.token in openclaw.json: adapters.openclaw.token in heirloom's config, or OPENCLAW_GATEWAY_TOKEN in heirloom serve's environment"
	case "PROTOCOL_MISMATCH":
		return fmt.Sprintf("heirloom speaks Gateway protocols %d–%d", MinProtocol, MaxProtocol)
	case "PAIRING_REQUIRED", "DEVICE_IDENTITY_REQUIRED":
		return "heirloom connects without a device identity, which OpenClaw allows only over loopback"
	}
	return ""
}
