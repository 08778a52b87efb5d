// Package responsesapi is a loopback stand-in for OpenAI's Responses API, for
// live tests of Codex CLI (which speaks only this API to a custom provider:
// wire_api = "responses") that must never reach a real model.
//
// A Server answers POST /v1/responses with the Reply a test's script returns,
// streamed as server-sent events (response.created, the output items as
// added, text deltas and done, then response.completed with usage), and keeps
// a log of every request. GET /v1/models answers the configured model list;
// anything else is answered 404 and lands in the Calls log.
//
// The server itself (lifecycle, logs, routing) is package standin's; this
// package holds the Responses wire format.
package responsesapi

import (
	"cmp"
	"fmt"
	"net/http"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/internal/standin"
)

type server = standin.Server[Request, Reply]

// Server is the stand-in. Build it with New, then Start; Close stops it. Its
// methods come from the shared stand-in server (see chatapi.Server for the
// lifecycle): Requests returns the log of POST /v1/responses requests, Calls
// every other request.
type Server struct {
	*server
	// Models lists the model ids GET /v1/models reports; New sets {"test-model"}.
	Models []string
	// InputTokens, when set, gives the input token count a reply reports for a request (Codex
	// compacts a thread once its reported usage passes model_auto_compact_token_limit); by
	// default it is estimated from the request's size. Set it before Start.
	InputTokens func(Request) int
}

// Call is a request the stand-in got outside POST /v1/responses.
type Call = standin.Call

// New returns an unstarted Server whose model answers each POST /v1/responses
// with script(request). script is called from the request's goroutine and
// must be safe for concurrent use (Codex runs sub-agents in parallel). A nil
// script answers Text("ok") to everything.
func New(script func(Request) Reply) *Server {
	if script == nil {
		script = func(Request) Reply { return Text("ok") }
	}
	s := &Server{Models: []string{"test-model"}}
	routes := map[string]standin.Route{"GET /v1/models": s.serveModels}
	s.server = standin.New("/v1/responses", routes, format{s}, script)
	return s
}

// BaseURL returns the provider base URL, "http://127.0.0.1:PORT/v1"; "" before Start.
func (s *Server) BaseURL() string {
	if u := s.URL(); u != "" {
		return u + "/v1"
	}
	return ""
}

func (s *Server) serveModels(w http.ResponseWriter, _ []byte) {
	type model struct {
		ID     string `json:"id"`
		Object string `json:"object"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range s.Models {
		list.Data = append(list.Data, model{ID: id, Object: "model"})
	}
	standin.WriteJSON(w, http.StatusOK, list)
}

type format struct{ s *Server }

func (format) Failure(r Reply) *Error { return r.Error }

// ErrorBody returns {"error":{"message","type","code":null}}.
func (format) ErrorBody(e Error) any {
	return map[string]any{"error": map[string]any{"message": e.Message, "type": cmp.Or(e.Type, "server_error"), "code": nil}}
}

// Write answers one request with reply, always streamed (Codex asks for a
// stream; a request that does not is answered the same way).
func (f format) Write(w http.ResponseWriter, r *http.Request, req Request, reply Reply) error {
	items, err := outputItems(reply, req.Seq)
	if err != nil {
		return err
	}
	id := fmt.Sprintf("resp_standin%08d", req.Seq)
	st := standin.NewStream(r.Context(), w)
	send := func(event string, data map[string]any) bool {
		data["type"] = event
		return st.Send(event, data)
	}
	created := map[string]any{"id": id, "object": "response", "created_at": time.Now().Unix(),
		"status": "in_progress", "model": req.Model, "output": []any{}}
	if !send("response.created", map[string]any{"response": created}) {
		return nil
	}
	out := 0
	for i, it := range items {
		if !send("response.output_item.added", map[string]any{"output_index": i, "item": it.added()}) {
			return nil
		}
		if it.Type == "message" {
			for _, p := range standin.Chunks(it.Text) {
				if !send("response.output_text.delta", map[string]any{"output_index": i, "item_id": it.ID,
					"content_index": 0, "delta": p}) {
					return nil
				}
			}
		}
		out += len(it.Text) + len(it.Arguments)
		if !send("response.output_item.done", map[string]any{"output_index": i, "item": it.done()}) {
			return nil
		}
	}
	in := standin.Tokens(len(req.Raw))
	if f.s.InputTokens != nil {
		in = f.s.InputTokens(req)
	}
	done := created
	done["status"] = "completed"
	done["output"] = []any{}
	done["usage"] = map[string]any{
		"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": standin.Tokens(out), "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": in + standin.Tokens(out),
	}
	send("response.completed", map[string]any{"response": done})
	return nil
}
