package messagesapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// message is an assistant message as the API sends it.
type message struct {
	ID         string
	Model      string
	Content    []block
	StopReason string
	Usage      usage
}

type usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// wire returns the message object: the whole reply for stream:false, and the
// message_start payload (empty content, null stop_reason) when streaming.
func (m message) wire() map[string]any {
	var stop any
	if m.StopReason != "" {
		stop = m.StopReason
	}
	content := m.Content
	if content == nil {
		content = []block{}
	}
	return map[string]any{
		"id":            m.ID,
		"type":          "message",
		"role":          "assistant",
		"model":         m.Model,
		"content":       content,
		"stop_reason":   stop,
		"stop_sequence": nil,
		"usage": map[string]int{
			"input_tokens":                m.Usage.InputTokens,
			"output_tokens":               m.Usage.OutputTokens,
			"cache_creation_input_tokens": 0,
			"cache_read_input_tokens":     0,
		},
	}
}

// chunkSize is the most bytes of text or tool JSON sent in one delta, so a
// reply arrives in several deltas as it does from the real API.
const chunkSize = 16

// stream writes msg with its content as server-sent events, flushing after
// each event, and stops early when ctx ends (client gone or server closing).
func stream(ctx context.Context, w http.ResponseWriter, msg message, content []block) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	send := func(event string, data any) bool {
		if ctx.Err() != nil {
			return false
		}
		b, err := json.Marshal(data)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}

	start := msg
	start.StopReason = ""
	start.Usage.OutputTokens = 1
	if !send("message_start", map[string]any{"type": "message_start", "message": start.wire()}) ||
		!send("ping", map[string]string{"type": "ping"}) {
		return
	}
	for i, b := range content {
		var first map[string]any
		var pieces []string
		var deltaType, field string
		switch b.Type {
		case "text":
			first = map[string]any{"type": "text", "text": ""}
			pieces, deltaType, field = chunks(*b.Text), "text_delta", "text"
		case "tool_use":
			first = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
			pieces, deltaType, field = chunks(string(b.Input)), "input_json_delta", "partial_json"
		}
		if !send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": first}) {
			return
		}
		for _, p := range pieces {
			delta := map[string]any{"type": deltaType, field: p}
			if !send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta}) {
				return
			}
		}
		if !send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}) {
			return
		}
	}
	if !send("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": msg.StopReason, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": msg.Usage.OutputTokens},
	}) {
		return
	}
	send("message_stop", map[string]string{"type": "message_stop"})
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
