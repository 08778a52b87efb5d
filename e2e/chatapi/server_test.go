package chatapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
	"github.com/heirloom-dev/heirloom/e2e/internal/standin/standintest"
)

// chunk is one decoded streamed chunk.
type chunk struct {
	Choices []struct {
		Delta struct {
			Role      string `json:"role"`
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
}

// parseStream splits an SSE body into chunks, failing tb on any line that is
// not "data: ..." or blank, and on a stream that does not end with [DONE].
func parseStream(tb testing.TB, body string) []chunk {
	tb.Helper()
	events := standintest.Events(tb, body)
	if len(events) == 0 || events[len(events)-1].Data != "[DONE]" {
		tb.Fatal("stream does not end with data: [DONE]")
	}
	var out []chunk
	for _, e := range events[:len(events)-1] {
		var c chunk
		if e.Name != "" {
			tb.Fatalf("unexpected SSE line \"event: %s\"", e.Name)
		}
		if err := json.Unmarshal([]byte(e.Data), &c); err != nil {
			tb.Fatalf("data line %q: %v", e.Data, err)
		}
		out = append(out, c)
	}
	return out
}

const chatBody = `{"model":"m","stream":%s,"stream_options":{"include_usage":true},
	"messages":[{"role":"system","content":"sys"},{"role":"user","content":"hello"}],
	"tools":[{"type":"function","function":{"name":"task","parameters":{"type":"object"}}}]}`

func body(stream bool) string {
	return strings.Replace(chatBody, "%s", map[bool]string{true: "true", false: "false"}[stream], 1)
}

func TestServer_StreamText(t *testing.T) {
	text := strings.Repeat("héllo wörld ", 5)
	s := standintest.Start(t, chatapi.New(func(chatapi.Request) chatapi.Reply { return chatapi.Text(text) }))
	resp, b := standintest.Do(t, http.MethodPost, s.BaseURL()+"/chat/completions", body(true), map[string]string{"X-Session-Id": "ses_1"})
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q", ct)
	}
	chunks := parseStream(t, b)
	var got strings.Builder
	var finish []string
	usage := 0
	for _, c := range chunks {
		if c.Usage != nil {
			usage++
			if len(c.Choices) != 0 {
				t.Error("usage chunk carries choices")
			}
			continue
		}
		got.WriteString(c.Choices[0].Delta.Content)
		if f := c.Choices[0].FinishReason; f != nil {
			finish = append(finish, *f)
		}
	}
	if chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("first delta role %q, want assistant", chunks[0].Choices[0].Delta.Role)
	}
	if got.String() != text {
		t.Errorf("streamed text %q, want %q", got.String(), text)
	}
	if len(chunks) < 5 {
		t.Errorf("got %d chunks, want the text split over several", len(chunks))
	}
	if len(finish) != 1 || finish[0] != "stop" || usage != 1 {
		t.Errorf("finish reasons %v and %d usage chunks, want [stop] and 1", finish, usage)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Seq != 1 || reqs[0].SessionID() != "ses_1" || reqs[0].LastUserText() != "hello" || !reqs[0].Stream {
		t.Errorf("request log %+v", reqs)
	}
}

func TestServer_StreamToolCall(t *testing.T) {
	s := standintest.Start(t, chatapi.New(func(chatapi.Request) chatapi.Reply {
		return chatapi.SpawnTask("child task", "do the thing", "general")
	}))
	_, b := standintest.Do(t, http.MethodPost, s.URL()+"/v1/chat/completions", body(true), nil)
	var id, name, args string
	var finish string
	for _, c := range parseStream(t, b) {
		if len(c.Choices) == 0 {
			continue
		}
		for _, tc := range c.Choices[0].Delta.ToolCalls {
			if tc.Index != 0 {
				t.Errorf("tool call index %d", tc.Index)
			}
			if tc.ID != "" {
				id, name = tc.ID, tc.Function.Name
			}
			args += tc.Function.Arguments
		}
		if f := c.Choices[0].FinishReason; f != nil {
			finish = *f
		}
	}
	var input map[string]string
	if err := json.Unmarshal([]byte(args), &input); err != nil {
		t.Fatalf("arguments %q: %v", args, err)
	}
	if !strings.HasPrefix(id, "call_") || name != chatapi.TaskTool || finish != "tool_calls" {
		t.Errorf("id %q, name %q, finish %q", id, name, finish)
	}
	if input["description"] != "child task" || input["prompt"] != "do the thing" || input["subagent_type"] != "general" {
		t.Errorf("arguments %v", input)
	}
}

func TestServer_NonStreaming(t *testing.T) {
	s := standintest.Start(t, chatapi.New(func(r chatapi.Request) chatapi.Reply {
		return chatapi.Reply{Text: "calling", Tool: &chatapi.ToolCall{ID: "call_x", Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)}}
	}))
	resp, b := standintest.Do(t, http.MethodPost, s.BaseURL()+"/chat/completions", body(false), nil)
	var got struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role      string                 `json:"role"`
				Content   string                 `json:"content"`
				ToolCalls []chatapi.ToolCallWire `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(b), &got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, body %s: %v", resp.StatusCode, b, err)
	}
	m := got.Choices[0].Message
	if got.Object != "chat.completion" || m.Role != "assistant" || m.Content != "calling" || got.Choices[0].FinishReason != "tool_calls" || got.Usage.TotalTokens == 0 {
		t.Errorf("got %s", b)
	}
	if len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "call_x" || m.ToolCalls[0].Function.Arguments != `{"command":"ls"}` {
		t.Errorf("tool calls %+v", m.ToolCalls)
	}
}

func TestServer_Error(t *testing.T) {
	s := standintest.Start(t, chatapi.New(func(chatapi.Request) chatapi.Reply {
		return chatapi.Reply{Error: &chatapi.Error{Status: 400, Type: "invalid_request_error", Message: "no"}}
	}))
	resp, b := standintest.Do(t, http.MethodPost, s.BaseURL()+"/chat/completions", body(true), nil)
	if resp.StatusCode != 400 || !strings.Contains(b, `"message":"no"`) || !strings.Contains(b, `"type":"invalid_request_error"`) {
		t.Errorf("status %d, body %s", resp.StatusCode, b)
	}
}

func TestServer_OtherCalls(t *testing.T) {
	s := standintest.Start(t, chatapi.New(nil))
	resp, b := standintest.Do(t, http.MethodGet, s.BaseURL()+"/models", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(b, `"id":"m"`) {
		t.Errorf("GET /v1/models: %d %s", resp.StatusCode, b)
	}
	if resp, _ := standintest.Do(t, http.MethodGet, s.URL()+"/elsewhere?x=1", "", nil); resp.StatusCode != 404 {
		t.Errorf("unknown path: status %d, want 404", resp.StatusCode)
	}
	if resp, _ := standintest.Do(t, http.MethodPost, s.BaseURL()+"/chat/completions", "{not json", nil); resp.StatusCode != 400 {
		t.Errorf("bad body: status %d, want 400", resp.StatusCode)
	}
	calls := s.Calls()
	if len(calls) != 3 || calls[0].Path != "/v1/models" || calls[0].Status != 200 ||
		calls[1].Path != "/elsewhere" || calls[1].RawQuery != "x=1" || calls[1].Status != 404 || calls[2].Status != 400 {
		t.Errorf("calls %+v", calls)
	}
	if len(s.Requests()) != 0 {
		t.Errorf("requests %+v, want none", s.Requests())
	}
}
