package proxy

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
)

// Error codes: the "code" field of every JSON error reply.
const (
	ECodeBadJSON          = "bad_json"           // the body is not the JSON the endpoint takes
	ECodeInvalid          = "invalid"            // a parameter is missing or out of range
	ECodeTooLarge         = "too_large"          // the body is over the configured limit
	ECodeMethodNotAllowed = "method_not_allowed" // the route exists but not for this method
	ECodeNotFound         = "not_found"          // no such route or record
	ECodeUnauthorized     = "unauthorized"       // a token is configured and the request lacks it
	ECodeForbidden        = "forbidden"          // wrong Host or a cross-origin browser request
	ECodeUnavailable      = "unavailable"        // the store cannot take requests now
	ECodeInternal         = "internal"           // anything else; details are logged, not returned
)

// Error is an application error: a code from the list above and a message safe to show a client.
type Error struct {
	Code    string
	Message string
}

// Error implements error.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error with the given code.
func Errorf(code, message string) *Error { return &Error{Code: code, Message: message} }

// codeStatus maps each code to its HTTP status. It is the only such table.
var codeStatus = map[string]int{
	ECodeBadJSON:          http.StatusBadRequest,
	ECodeInvalid:          http.StatusBadRequest,
	ECodeTooLarge:         http.StatusRequestEntityTooLarge,
	ECodeMethodNotAllowed: http.StatusMethodNotAllowed,
	ECodeNotFound:         http.StatusNotFound,
	ECodeUnauthorized:     http.StatusUnauthorized,
	ECodeForbidden:        http.StatusForbidden,
	ECodeUnavailable:      http.StatusServiceUnavailable,
	ECodeInternal:         http.StatusInternalServerError,
}

// classify turns any error into a code and a client-safe message. Unknown errors are internal.
func classify(err error) (code, message string) {
	var appErr *Error
	var tooBig *http.MaxBytesError
	var invalid *engine.InvalidError
	switch {
	case errors.As(err, &appErr):
		return appErr.Code, appErr.Message
	case errors.As(err, &invalid):
		return ECodeInvalid, invalid.Message
	case errors.As(err, &tooBig):
		return ECodeTooLarge, "request body over the limit"
	case errors.Is(err, adapters.ErrMalformed):
		return ECodeBadJSON, err.Error()
	case errors.Is(err, kv.ErrNotFound):
		return ECodeNotFound, "not found"
	case errors.Is(err, kv.ErrClosed):
		return ECodeUnavailable, "store closed"
	case errors.Is(err, kv.ErrDiskFull):
		// Said once a minute by the store, not per request; the message says how much is free.
		return ECodeUnavailable, "disk full: heirloom stores nothing until space returns (GET /readyz says how much is free)"
	default:
		return ECodeInternal, "internal error"
	}
}

// writeError writes err as {"error","code"} with the matching status. Internal errors are logged in
// full and hidden from the client.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code, message := classify(err)
	if code == ECodeInternal {
		s.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	if code == ECodeUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="heirloom"`)
	}
	writeJSON(w, codeStatus[code], map[string]string{"error": message, "code": code})
}

// writeJSON writes v as a JSON reply with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
