package chatapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// completion is one answer, before it is written whole or streamed.
type completion struct {
	ID      string
	Created int64
	Model   string
	Text    string
	Call    *ToolCallWire
	Finish  string
	Usage   usage
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// newUsage turns byte counts into plausible token counts (about four bytes
// a token, at least one each).
func newUsage(in, out int) usage {
	u := usage{PromptTokens: in/4 + 1, CompletionTokens: out/4 + 1}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// message returns the whole chat.completion object (stream:false).
func (c completion) message() map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil}
	if c.Text != "" || c.Call == nil {
		msg["content"] = c.Text
	}
	if c.Call != nil {
		msg["tool_calls"] = []*ToolCallWire{c.Call}
	}
	return map[string]any{
		"id":      c.ID,
		"object":  "chat.completion",
		"created": c.Created,
		"model":   c.Model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": c.Finish}},
		"usage":   c.Usage,
	}
}

// chunk returns a chat.completion.chunk object with one choice.
func (c completion) chunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{
		"id":      c.ID,
		"object":  "chat.completion.chunk",
		"created": c.Created,
		"model":   c.Model,
		"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}},
	}
}

// chunkSize is the most bytes of text or tool arguments sent in one delta,
// so a reply arrives in several deltas as it does from a real API.
const chunkSize = 16

// stream writes c as server-sent events, flushing after each, and stops
// early when ctx ends (client gone or server closing): a role delta, the
// text in pieces, the tool call (id and name first, then its arguments in
// pieces), a finish chunk, a usage chunk when withUsage, then [DONE].
func (c completion) stream(ctx context.Context, w http.ResponseWriter, withUsage bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	send := func(data any) bool {
		if ctx.Err() != nil {
			return false
		}
		b, ok := data.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(data); err != nil {
				return false
			}
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}

	if !send(c.chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	for _, p := range chunks(c.Text) {
		if !send(c.chunk(map[string]any{"content": p}, nil)) {
			return
		}
	}
	if c.Call != nil {
		first := map[string]any{"index": 0, "id": c.Call.ID, "type": "function",
			"function": map[string]any{"name": c.Call.Function.Name, "arguments": ""}}
		if !send(c.chunk(map[string]any{"tool_calls": []any{first}}, nil)) {
			return
		}
		for _, p := range chunks(c.Call.Function.Arguments) {
			piece := map[string]any{"index": 0, "function": map[string]any{"arguments": p}}
			if !send(c.chunk(map[string]any{"tool_calls": []any{piece}}, nil)) {
				return
			}
		}
	}
	if !send(c.chunk(map[string]any{}, c.Finish)) {
		return
	}
	if withUsage {
		u := map[string]any{"id": c.ID, "object": "chat.completion.chunk", "created": c.Created,
			"model": c.Model, "choices": []any{}, "usage": c.Usage}
		if !send(u) {
			return
		}
	}
	send([]byte("[DONE]"))
}

// chunks splits s into pieces of at most chunkSize bytes at rune boundaries.
func chunks(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(chunkSize, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}
