package messagesapi

import (
	"encoding/json"
	"fmt"

	"github.com/heirloom-dev/heirloom/e2e/internal/standin"
)

// stopReason returns the stop_reason r is sent with.
func stopReason(r Reply) string {
	if r.Tool != nil {
		return "tool_use"
	}
	return "end_turn"
}

// block is a content block of a reply, as the API writes it.
type block struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

// replyBlocks returns r's content blocks with tool input marshalled: its text,
// then Tool and the More calls after it.
// A reply with neither text nor tool gets one empty text block.
func replyBlocks(r Reply, toolID string) ([]block, error) {
	var out []block
	if r.Text != "" || r.Tool == nil {
		t := r.Text
		out = append(out, block{Type: "text", Text: &t})
	}
	if r.Tool != nil {
		t, err := standin.NewToolUse(r.Tool.ID, toolID, r.Tool.Name, r.Tool.Input)
		if err != nil {
			return nil, err
		}
		out = append(out, block{Type: "tool_use", ID: t.ID, Name: t.Name, Input: t.Input})
		for i, more := range r.More {
			t, err := standin.NewToolUse(more.ID, fmt.Sprintf("%s_%d", toolID, i+2), more.Name, more.Input)
			if err != nil {
				return nil, err
			}
			out = append(out, block{Type: "tool_use", ID: t.ID, Name: t.Name, Input: t.Input})
		}
	}
	return out, nil
}

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

// stream writes msg with its content as events to st, stopping early when
// st ends.
func stream(st *standin.Stream, msg message, content []block) {
	send := func(event string, data any) bool { return st.Send(event, data) }
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
			pieces, deltaType, field = standin.Chunks(*b.Text), "text_delta", "text"
		case "tool_use":
			first = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
			pieces, deltaType, field = standin.Chunks(string(b.Input)), "input_json_delta", "partial_json"
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
