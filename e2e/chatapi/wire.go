package chatapi

import "github.com/heirloom-dev/heirloom/e2e/internal/standin"

// finishReason returns the finish_reason r is sent with.
func finishReason(r Reply) string {
	if r.Tool != nil {
		return "tool_calls"
	}
	return "stop"
}

// wireCall returns r's tool call in wire form with its arguments
// marshalled, or nil when it has none. id is used when Tool.ID is zero.
func wireCall(r Reply, id string) (*ToolCallWire, error) {
	if r.Tool == nil {
		return nil, nil
	}
	t, err := standin.NewToolUse(r.Tool.ID, id, r.Tool.Name, r.Tool.Input)
	if err != nil {
		return nil, err
	}
	w := &ToolCallWire{ID: t.ID, Type: "function"}
	w.Function.Name, w.Function.Arguments = t.Name, string(t.Input)
	return w, nil
}

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

// newUsage turns byte counts into plausible token counts.
func newUsage(in, out int) usage {
	u := usage{PromptTokens: standin.Tokens(in), CompletionTokens: standin.Tokens(out)}
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

// stream writes c to st, stopping early when st ends: a role delta, the
// text in pieces, the tool call (id and name first, then its arguments in
// pieces), a finish chunk, a usage chunk when withUsage, then [DONE].
func (c completion) stream(st *standin.Stream, withUsage bool) {
	send := func(data any) bool { return st.Send("", data) }
	if !send(c.chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	for _, p := range standin.Chunks(c.Text) {
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
		for _, p := range standin.Chunks(c.Call.Function.Arguments) {
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
