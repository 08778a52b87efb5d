// Package chatapi is a loopback stand-in for an OpenAI-compatible
// chat-completions API, for live tests of harness binaries (OpenCode, with a
// custom provider built on @ai-sdk/openai-compatible) that must never reach
// a real model.
//
// A Server answers POST /v1/chat/completions, streamed (server-sent events:
// "data: {chunk}" frames whose choices[0].delta carries content or
// tool_calls, then a finish chunk, a usage chunk when asked for, and
// "data: [DONE]") or not, with the Reply that a test's script function
// returns, and keeps a log of every request. It also answers GET /v1/models,
// and answers 404 to anything else; both land in the Calls log so a test can
// see what else the harness asked for, including proxy CONNECTs when the
// harness is told to use the stand-in as its HTTP(S) proxy.
//
// The script sees every model request, side requests (title generation,
// which offers no tools: Request.IsSideRequest) included; OpenCode names the
// session of each request in its headers (Request.SessionID,
// Request.ParentSessionID).
//
// The server itself (lifecycle, logs, routing) is package standin's; this
// package holds the chat-completions wire format.
package chatapi

import (
	"cmp"
	"fmt"
	"net/http"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/internal/standin"
)

// server is the shared stand-in server, embedded in Server for its methods.
type server = standin.Server[Request, Reply]

// Server is the stand-in. Build it with New, then Start; Close stops it.
// The zero value is not usable.
//
// Its methods come from the shared stand-in server: Start listens on a free
// loopback port and serves in the background (an error on a started or
// closed Server); URL returns "http://127.0.0.1:PORT" ("" before Start);
// Close ends streams in flight and stops serving, without waiting for a
// script call still running, and is safe to call twice and without Start;
// Requests returns a copy of the log of POST /v1/chat/completions requests
// and Calls of every other request, in arrival order, both readable after
// Close.
type Server struct {
	*server

	// Models lists the model ids GET /v1/models reports; New sets {"m"}.
	// Change it before Start. Chat requests are answered whatever model
	// they name.
	Models []string
}

// Call is a request the stand-in got outside POST /v1/chat/completions:
// GET /v1/models (Status 200), a body that did not decode (400), or
// anything else (Status 404) — an unknown path, or a proxy CONNECT to
// another host.
type Call = standin.Call

// New returns an unstarted Server whose model answers each POST
// /v1/chat/completions with script(request). script is called from the
// request's goroutine, once per request, side requests included; it must be
// safe for concurrent use (parent and child sessions, and title generation,
// run at once). A nil script answers Text("ok") to everything.
func New(script func(Request) Reply) *Server {
	if script == nil {
		script = func(Request) Reply { return Text("ok") }
	}
	s := &Server{Models: []string{"m"}}
	routes := map[string]standin.Route{"GET /v1/models": s.serveModels}
	s.server = standin.New("/v1/chat/completions", routes, format{}, script)
	return s
}

// BaseURL returns the API base URL a provider is configured with,
// "http://127.0.0.1:PORT/v1"; "" before Start.
func (s *Server) BaseURL() string {
	if u := s.URL(); u != "" {
		return u + "/v1"
	}
	return ""
}

// serveModels answers GET /v1/models.
func (s *Server) serveModels(w http.ResponseWriter, _ []byte) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range s.Models {
		list.Data = append(list.Data, model{ID: id, Object: "model", OwnedBy: "standin"})
	}
	standin.WriteJSON(w, http.StatusOK, list)
}

// format is the chat-completions wire format.
type format struct{}

func (format) Failure(r Reply) *Error { return r.Error }

// ErrorBody returns {"error":{"message","type","code":null}}, type
// "server_error" when e has none.
func (format) ErrorBody(e Error) any {
	return map[string]any{"error": map[string]any{"message": e.Message, "type": cmp.Or(e.Type, "server_error"), "code": nil}}
}

// Write answers one model request with reply: a chat.completion object, or
// its chunks as server-sent events.
func (format) Write(w http.ResponseWriter, r *http.Request, req Request, reply Reply) error {
	call, err := wireCall(reply, fmt.Sprintf("call_standin%08d", req.Seq))
	if err != nil {
		return err
	}
	c := completion{
		ID:      fmt.Sprintf("chatcmpl-standin%08d", req.Seq),
		Created: time.Now().Unix(),
		Model:   req.Model,
		Text:    reply.Text,
		Call:    call,
		Finish:  finishReason(reply),
		Usage:   newUsage(len(req.Raw), len(reply.Text)),
	}
	if call != nil {
		c.Usage = newUsage(len(req.Raw), len(reply.Text)+len(call.Function.Arguments))
	}
	if !req.Stream {
		standin.WriteJSON(w, http.StatusOK, c.message())
		return nil
	}
	c.stream(standin.NewStream(r.Context(), w), req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
	return nil
}
