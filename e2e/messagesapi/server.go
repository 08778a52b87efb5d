// Package messagesapi is a loopback stand-in for the Anthropic Messages API,
// for live tests of harness binaries (Claude Code) that must never reach a
// real model.
//
// A Server answers POST /v1/messages, streamed (server-sent events, as the
// real API: message_start, ping, content_block_start/delta/stop,
// message_delta, message_stop) or not, with the Reply that a test's script
// function returns, and keeps a log of every request. It also answers
// POST /v1/messages/count_tokens, and answers 404 to anything else; both
// land in the Calls log so a test can see what else the harness asked for.
//
// The script sees every model request Claude Code sends, and tells them
// apart with Request methods: side calls such as title generation offer no
// tools (IsSideRequest; none arrive in -p mode with non-essential traffic
// disabled), a sub-agent's turns carry a marker in the system prompt
// (IsSubagent), and a compaction asks for a summary (IsCompaction).
//
// The server itself (lifecycle, logs, routing) is package standin's; this
// package holds the Messages API wire format.
package messagesapi

import (
	"cmp"
	"fmt"
	"net/http"

	"github.com/heirloom-dev/heirloom/e2e/internal/standin"
)

// server is the shared stand-in server, embedded in Server for its methods.
type server = standin.Server[Request, Reply]

// Server is the stand-in. Build it with New, then Start; Close stops it.
// The zero value is not usable.
//
// Its methods come from the shared stand-in server: Start listens on a free
// loopback port and serves in the background (an error on a started or
// closed Server); URL returns the base URL, "http://127.0.0.1:PORT", to put
// in ANTHROPIC_BASE_URL ("" before Start); Close ends streams in flight and
// stops serving, without waiting for a script call still running, and is
// safe to call twice and without Start; Requests returns a copy of the log
// of POST /v1/messages requests and Calls of every other request
// (count_tokens, unknown paths, and proxy CONNECTs when the harness uses
// the stand-in as its HTTPS proxy), in arrival order, both readable after
// Close.
type Server struct {
	*server
}

// Call is a request the stand-in got outside POST /v1/messages:
// count_tokens (Status 200), a body that did not decode (400), or anything
// else (Status 404) — an unknown path, a HEAD / connection check, or a
// proxy CONNECT to another host.
type Call = standin.Call

// New returns an unstarted Server whose model answers each POST /v1/messages
// with script(request). script is called from the request's goroutine, once
// per request, side requests included; it must be safe for concurrent use
// (Claude Code runs parallel sub-agents and side calls at once). A nil script
// answers Text("ok") to everything.
func New(script func(Request) Reply) *Server {
	if script == nil {
		script = func(Request) Reply { return Text("ok") }
	}
	routes := map[string]standin.Route{"POST /v1/messages/count_tokens": countTokens}
	return &Server{standin.New("/v1/messages", routes, format{}, script)}
}

// countTokens answers POST /v1/messages/count_tokens.
func countTokens(w http.ResponseWriter, body []byte) {
	standin.WriteJSON(w, http.StatusOK, map[string]int{"input_tokens": standin.Tokens(len(body))})
}

// format is the Messages API wire format.
type format struct{}

func (format) Failure(r Reply) *Error { return r.Error }

// ErrorBody returns {"type":"error","error":{"type","message"}}, type
// "api_error" when e has none.
func (format) ErrorBody(e Error) any {
	return map[string]any{"type": "error", "error": map[string]string{"type": cmp.Or(e.Type, "api_error"), "message": e.Message}}
}

// Write answers one model request with reply: a message object, or its
// events as server-sent events.
func (format) Write(w http.ResponseWriter, r *http.Request, req Request, reply Reply) error {
	content, err := replyBlocks(reply, fmt.Sprintf("toolu_standin%08d", req.Seq))
	if err != nil {
		return err
	}
	out := 0
	for _, b := range content {
		if b.Text != nil {
			out += len(*b.Text)
		}
		out += len(b.Input)
	}
	msg := message{
		ID:         fmt.Sprintf("msg_standin%08d", req.Seq),
		Model:      req.Model,
		StopReason: stopReason(reply),
		Usage:      usage{InputTokens: standin.Tokens(len(req.Raw)), OutputTokens: standin.Tokens(out)},
	}
	w.Header().Set("Request-Id", fmt.Sprintf("req_standin%08d", req.Seq))
	if !req.Stream {
		msg.Content = content
		standin.WriteJSON(w, http.StatusOK, msg.wire())
		return nil
	}
	stream(standin.NewStream(r.Context(), w), msg, content)
	return nil
}
