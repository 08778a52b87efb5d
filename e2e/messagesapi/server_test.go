package messagesapi_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/internal/standin/standintest"
	"github.com/heirloom-dev/heirloom/e2e/messagesapi"
)

// event is one server-sent event, its data decoded.
type event struct {
	Name string
	Data map[string]any
}

// parseSSE splits a server-sent event stream into events, failing tb on any
// line that is not "event:", "data:" or blank, and on data whose type is
// not the event's name.
func parseSSE(tb testing.TB, body string) []event {
	tb.Helper()
	var out []event
	for _, e := range standintest.Events(tb, body) {
		ev := event{Name: e.Name}
		if err := json.Unmarshal([]byte(e.Data), &ev.Data); err != nil {
			tb.Fatalf("data line %q: %v", e.Data, err)
		}
		if ev.Data["type"] != ev.Name {
			tb.Errorf("event %s carries data type %v", ev.Name, ev.Data["type"])
		}
		out = append(out, ev)
	}
	return out
}

const chatBody = `{"model":"m","max_tokens":10,"stream":%s,
	"system":[{"type":"text","text":"sys one"},{"type":"text","text":"sys two"}],
	"tools":[{"name":"Agent","input_schema":{}}],
	"messages":[{"role":"user","content":"hello"}]}`

func body(stream bool) string {
	return strings.Replace(chatBody, "%s", map[bool]string{true: "true", false: "false"}[stream], 1)
}

func TestServer_Stream(t *testing.T) {
	t.Run("Text", func(t *testing.T) {
		text := "héllo wörld, this reply is long enough to span several deltas ✓"
		s := standintest.Start(t, messagesapi.New(func(messagesapi.Request) messagesapi.Reply { return messagesapi.Text(text) }))
		resp, b := standintest.Post(t, s.URL()+"/v1/messages?beta=true", body(true))
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("content type %q, want text/event-stream", ct)
		}
		events := parseSSE(t, b)
		var names []string
		var got strings.Builder
		for _, e := range events {
			names = append(names, e.Name)
			if e.Name == "content_block_delta" {
				d := e.Data["delta"].(map[string]any)
				if d["type"] != "text_delta" {
					t.Errorf("delta type %v, want text_delta", d["type"])
				}
				got.WriteString(d["text"].(string))
			}
		}
		names = slices.Compact(names)
		want := []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
		if !slices.Equal(names, want) {
			t.Errorf("events %v, want %v", names, want)
		}
		if got.String() != text {
			t.Errorf("streamed text %q, want %q", got.String(), text)
		}
		start := events[0].Data["message"].(map[string]any)
		if start["stop_reason"] != nil || start["role"] != "assistant" || start["model"] != "m" {
			t.Errorf("message_start message %v, want role assistant, model m, stop_reason null", start)
		}
		md := events[len(events)-2].Data["delta"].(map[string]any)
		if md["stop_reason"] != "end_turn" {
			t.Errorf("stop_reason %v, want end_turn", md["stop_reason"])
		}
	})

	t.Run("ToolUse", func(t *testing.T) {
		s := standintest.Start(t, messagesapi.New(func(messagesapi.Request) messagesapi.Reply {
			r := messagesapi.SpawnAgent("desc", "a prompt long enough to be split", "general-purpose")
			r.Text = "spawning"
			return r
		}))
		_, b := standintest.Post(t, s.URL()+"/v1/messages", body(true))
		var starts []map[string]any
		partial := map[float64]string{}
		var stop any
		for _, e := range parseSSE(t, b) {
			switch e.Name {
			case "content_block_start":
				starts = append(starts, e.Data["content_block"].(map[string]any))
			case "content_block_delta":
				d := e.Data["delta"].(map[string]any)
				if d["type"] == "input_json_delta" {
					partial[e.Data["index"].(float64)] += d["partial_json"].(string)
				}
			case "message_delta":
				stop = e.Data["delta"].(map[string]any)["stop_reason"]
			}
		}
		if len(starts) != 2 || starts[0]["type"] != "text" || starts[1]["type"] != "tool_use" || starts[1]["name"] != "Agent" {
			t.Fatalf("content blocks %v, want text then tool_use Agent", starts)
		}
		if id, _ := starts[1]["id"].(string); !strings.HasPrefix(id, "toolu_") {
			t.Errorf("tool id %q, want toolu_ prefix", id)
		}
		var input map[string]string
		if err := json.Unmarshal([]byte(partial[1]), &input); err != nil {
			t.Fatalf("assembled tool input %q: %v", partial[1], err)
		}
		if input["subagent_type"] != "general-purpose" || input["prompt"] != "a prompt long enough to be split" {
			t.Errorf("tool input %v", input)
		}
		if stop != "tool_use" {
			t.Errorf("stop_reason %v, want tool_use", stop)
		}
	})
}

func TestServer_NoStream(t *testing.T) {
	s := standintest.Start(t, messagesapi.New(func(messagesapi.Request) messagesapi.Reply {
		return messagesapi.ToolUse("Bash", map[string]string{"command": "ls"})
	}))
	resp, b := standintest.Post(t, s.URL()+"/v1/messages", body(false))
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q, want application/json", ct)
	}
	var msg struct {
		Type       string `json:"type"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string            `json:"type"`
			Name  string            `json:"name"`
			Input map[string]string `json:"input"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(b), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || msg.StopReason != "tool_use" || len(msg.Content) != 1 || msg.Content[0].Input["command"] != "ls" {
		t.Errorf("got %s", b)
	}
}

func TestServer_Error(t *testing.T) {
	s := standintest.Start(t, messagesapi.New(func(messagesapi.Request) messagesapi.Reply {
		return messagesapi.Reply{Error: &messagesapi.Error{Status: 400, Type: "invalid_request_error", Message: "nope"}}
	}))
	resp, b := standintest.Post(t, s.URL()+"/v1/messages", body(true))
	if resp.StatusCode != 400 || !strings.Contains(b, `"invalid_request_error"`) {
		t.Errorf("got %d %s, want 400 invalid_request_error", resp.StatusCode, b)
	}
}

func TestServer_Logs(t *testing.T) {
	s := standintest.Start(t, messagesapi.New(nil))
	standintest.Post(t, s.URL()+"/v1/messages", body(false))
	resp, b := standintest.Post(t, s.URL()+"/v1/messages/count_tokens", body(false))
	if resp.StatusCode != 200 || !strings.Contains(b, `"input_tokens"`) {
		t.Errorf("count_tokens: got %d %s", resp.StatusCode, b)
	}
	if resp, _ := standintest.Post(t, s.URL()+"/v1/other", "{}"); resp.StatusCode != 404 {
		t.Errorf("unknown path: got %d, want 404", resp.StatusCode)
	}
	if resp, _ := standintest.Post(t, s.URL()+"/v1/messages", "not json"); resp.StatusCode != 400 {
		t.Errorf("bad body: got %d, want 400", resp.StatusCode)
	}

	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Seq != 1 || r.Model != "m" || r.SystemText() != "sys one\nsys two" || r.LastUserText() != "hello" || !r.HasTool("Agent") {
		t.Errorf("decoded request %+v", r)
	}
	var paths []string
	for _, c := range s.Calls() {
		paths = append(paths, c.Path)
	}
	if want := []string{"/v1/messages/count_tokens", "/v1/other", "/v1/messages"}; !slices.Equal(paths, want) {
		t.Errorf("calls %v, want %v", paths, want)
	}
}

// TestServer_ParallelTools: a reply's More calls follow its Tool in the same message, the
// ones without an id given one of their own.
func TestServer_ParallelTools(t *testing.T) {
	s := standintest.Start(t, messagesapi.New(func(messagesapi.Request) messagesapi.Reply {
		r := messagesapi.ToolUse("Bash", map[string]string{"command": "ls"})
		r.More = []messagesapi.ToolCall{{ID: "toolu_mine", Name: "Read"}, {Name: "Grep"}}
		return r
	}))
	_, b := standintest.Post(t, s.URL()+"/v1/messages", body(false))
	var msg struct {
		Content []struct{ Type, ID, Name string } `json:"content"`
	}
	if err := json.Unmarshal([]byte(b), &msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 3 || msg.Content[0].Name != "Bash" || msg.Content[1].ID != "toolu_mine" || msg.Content[1].Name != "Read" ||
		msg.Content[2].Name != "Grep" || msg.Content[2].ID != msg.Content[0].ID+"_3" {
		t.Errorf("got %s", b)
	}
}
