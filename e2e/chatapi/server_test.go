package chatapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
)

// mustStart starts a stand-in closed at the end of the test.
func mustStart(tb testing.TB, script func(chatapi.Request) chatapi.Reply) *chatapi.Server {
	tb.Helper()
	s := chatapi.New(script)
	if err := s.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// do sends a request to the stand-in and returns the response, body read.
func do(tb testing.TB, method, url, body string, header map[string]string) (*http.Response, string) {
	tb.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, string(b)
}

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
	var out []chunk
	done := false
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
		case line == "data: [DONE]":
			done = true
		case strings.HasPrefix(line, "data: ") && !done:
			var c chunk
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c); err != nil {
				tb.Fatalf("data line %q: %v", line, err)
			}
			out = append(out, c)
		default:
			tb.Fatalf("unexpected SSE line %q", line)
		}
	}
	if !done {
		tb.Fatal("stream does not end with data: [DONE]")
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
	s := mustStart(t, func(chatapi.Request) chatapi.Reply { return chatapi.Text(text) })
	resp, b := do(t, http.MethodPost, s.BaseURL()+"/chat/completions", body(true), map[string]string{"X-Session-Id": "ses_1"})
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
	s := mustStart(t, func(chatapi.Request) chatapi.Reply {
		return chatapi.SpawnTask("child task", "do the thing", "general")
	})
	_, b := do(t, http.MethodPost, s.URL()+"/v1/chat/completions", body(true), nil)
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
	s := mustStart(t, func(r chatapi.Request) chatapi.Reply {
		return chatapi.Reply{Text: "calling", Tool: &chatapi.ToolCall{ID: "call_x", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}}
	})
	resp, b := do(t, http.MethodPost, s.BaseURL()+"/chat/completions", body(false), nil)
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
	s := mustStart(t, func(chatapi.Request) chatapi.Reply {
		return chatapi.Reply{Error: &chatapi.Error{Status: 400, Type: "invalid_request_error", Message: "no"}}
	})
	resp, b := do(t, http.MethodPost, s.BaseURL()+"/chat/completions", body(true), nil)
	if resp.StatusCode != 400 || !strings.Contains(b, `"message":"no"`) || !strings.Contains(b, `"type":"invalid_request_error"`) {
		t.Errorf("status %d, body %s", resp.StatusCode, b)
	}
}

func TestServer_OtherCalls(t *testing.T) {
	s := mustStart(t, nil)
	resp, b := do(t, http.MethodGet, s.BaseURL()+"/models", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(b, `"id":"m"`) {
		t.Errorf("GET /v1/models: %d %s", resp.StatusCode, b)
	}
	if resp, _ := do(t, http.MethodGet, s.URL()+"/elsewhere?x=1", "", nil); resp.StatusCode != 404 {
		t.Errorf("unknown path: status %d, want 404", resp.StatusCode)
	}
	if resp, _ := do(t, http.MethodPost, s.BaseURL()+"/chat/completions", "{not json", nil); resp.StatusCode != 400 {
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

func TestServer_Concurrent(t *testing.T) {
	s := mustStart(t, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { do(t, http.MethodPost, s.BaseURL()+"/chat/completions", body(true), nil) })
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, r := range s.Requests() {
		seen[r.Seq] = true
	}
	if len(seen) != 8 || !seen[1] || !seen[8] {
		t.Errorf("sequence numbers %v, want 1..8", seen)
	}
}

func TestServer_Lifecycle(t *testing.T) {
	t.Run("CloseWithoutStart", func(t *testing.T) {
		s := chatapi.New(nil)
		s.Close()
		s.Close()
		if err := s.Start(); err == nil {
			t.Error("Start after Close succeeded")
		}
	})
	t.Run("StartTwice", func(t *testing.T) {
		s := mustStart(t, nil)
		if err := s.Start(); err == nil {
			t.Error("second Start succeeded")
		}
		s.Close()
		s.Close()
		if s.URL() == "" {
			t.Error("URL cleared by Close")
		}
	})
	t.Run("CloseEndsStreams", func(t *testing.T) {
		release := make(chan struct{})
		s := mustStart(t, func(chatapi.Request) chatapi.Reply { <-release; return chatapi.Text("late") })
		done := make(chan struct{})
		go func() {
			defer close(done)
			resp, err := http.Post(s.BaseURL()+"/chat/completions", "application/json", strings.NewReader(body(true)))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		for len(s.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		closed := make(chan struct{})
		go func() { s.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("Close waited for a script still running")
		}
		close(release)
		<-done
	})
}
