package standin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// Reply is what a stand-in model answers to one request: optional text, then
// an optional tool call. When Error is set the stand-in answers with that API
// error instead and ignores the other fields.
type Reply struct {
	Text string
	Tool *ToolCall
	// More are further tool calls of the same reply, after Tool (parallel tool
	// use; the Messages API stand-in only). A zero ID gets Tool's generated id
	// with "_2", "_3", … appended. Ignored without Tool.
	More  []ToolCall
	Error *Error
}

// ToolCall is the tool call of a Reply. A zero ID gets an id generated in the
// API's form. Input is marshalled to JSON (a map, a struct or a
// json.RawMessage); nil sends an empty object.
type ToolCall struct {
	ID    string
	Name  string
	Input any
}

// Stream writes server-sent events to a response, flushing after each, until
// its context ends (the client went, or the Server is closing) or a write
// fails.
type Stream struct {
	ctx context.Context
	w   http.ResponseWriter
	rc  *http.ResponseController
}

// NewStream writes the headers of an event stream with status 200 and
// returns a Stream for its events, which ends with ctx.
func NewStream(ctx context.Context, w http.ResponseWriter) *Stream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &Stream{ctx: ctx, w: w, rc: http.NewResponseController(w)}
}

// Send writes one event, "event: NAME" first unless event is "", then
// "data: " and data as JSON (a []byte is written as it is), and flushes.
// It returns false once the stream has ended: the caller stops sending.
func (s *Stream) Send(event string, data any) bool {
	if s.ctx.Err() != nil {
		return false
	}
	b, ok := data.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(data); err != nil {
			return false
		}
	}
	if event != "" {
		if _, err := fmt.Fprintf(s.w, "event: %s\n", event); err != nil {
			return false
		}
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", b); err != nil {
		return false
	}
	return s.rc.Flush() == nil
}

// ChunkSize is the most bytes of text or tool input sent in one delta, so
// that a reply arrives in several deltas as it does from a real API.
const ChunkSize = 16

// Chunks splits s into pieces of at most ChunkSize bytes at rune
// boundaries; "" gives none.
func Chunks(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(ChunkSize, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// Tokens turns a byte count into a plausible token count: about four bytes
// a token, at least one.
func Tokens(bytes int) int { return bytes/4 + 1 }

// ToolUse is a reply's tool call made ready for the wire.
type ToolUse struct {
	ID, Name string
	// Input is the call's input (OpenAI: arguments) as JSON.
	Input json.RawMessage
}

// NewToolUse returns the tool call named name with input (a map, a struct
// or a json.RawMessage; nil gives an empty object) and id, or defaultID
// when id is "". It fails when input does not marshal.
func NewToolUse(id, defaultID, name string, input any) (ToolUse, error) {
	t := ToolUse{ID: cmp.Or(id, defaultID), Name: name, Input: json.RawMessage("{}")}
	if input != nil {
		b, err := json.Marshal(input)
		if err != nil {
			return ToolUse{}, fmt.Errorf("marshal input of tool %s: %w", name, err)
		}
		t.Input = b
	}
	return t, nil
}

// SpawnInput returns the input of a sub-agent tool call with the given
// description, task prompt and agent type: Claude Code's Agent tool and
// OpenCode's task tool take the same three fields.
func SpawnInput(description, prompt, agentType string) map[string]string {
	return map[string]string{
		"description":   description,
		"prompt":        prompt,
		"subagent_type": agentType,
	}
}
