package chatapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
	"github.com/heirloom-dev/heirloom/e2e/internal/standin/standintest"
)

func TestRequest_Text(t *testing.T) {
	r := standintest.Decode[chatapi.Request](t, `{"model":"m","stream":true,"stream_options":{"include_usage":true},
		"messages":[
			{"role":"system","content":"provider prompt"},
			{"role":"system","content":[{"type":"text","text":"plugin context"}]},
			{"role":"user","content":[{"type":"text","text":"first"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"prompt"}]},
			{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"task","arguments":"{\"prompt\":\"TOOL-ARGS\"}"}}]},
			{"role":"tool","tool_call_id":"c1","content":"child said"},
			{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"second result"}]}],
		"tools":[{"type":"function","function":{"name":"task","parameters":{}}}]}`)

	standintest.CheckTexts(t, r, standintest.Texts{
		System:    "provider prompt\nplugin context",
		FirstUser: "first\nprompt",
		LastUser:  "first\nprompt",
		// Tool arguments are not text.
		All: "provider prompt\nplugin context\nfirst\nprompt\nchild said\nsecond result",
	})
	if got := r.ToolResults(); len(got) != 2 || got[0].ToolCallID != "c1" || got[1].Content.Text() != "second result" {
		t.Errorf("ToolResults: got %+v", got)
	}
	if got := r.Messages[3].ToolCalls; len(got) != 1 || got[0].Function.Name != "task" || got[0].Function.Arguments != `{"prompt":"TOOL-ARGS"}` {
		t.Errorf("ToolCalls: got %+v", got)
	}
	if !r.HasTool("task") || r.HasTool("bash") || r.IsSideRequest() {
		t.Errorf("HasTool/IsSideRequest wrong for tools %+v", r.Tools)
	}
	if r.StreamOptions == nil || !r.StreamOptions.IncludeUsage {
		t.Errorf("StreamOptions: got %+v", r.StreamOptions)
	}
}

func TestRequest_Empty(t *testing.T) {
	r := standintest.Decode[chatapi.Request](t, `{"messages":[{"role":"assistant","content":"a"}]}`)
	if r.SystemText() != "" || r.LastUserText() != "" || r.FirstUserText() != "" || len(r.ToolResults()) != 0 {
		t.Errorf("got %q %q %q %v", r.SystemText(), r.LastUserText(), r.FirstUserText(), r.ToolResults())
	}
	if !r.IsSideRequest() {
		t.Error("a request without tools is a side request")
	}
}

func TestRequest_Sessions(t *testing.T) {
	var r chatapi.Request
	r.Header = http.Header{}
	r.Header.Set("X-Session-Id", "ses_child")
	r.Header.Set("X-Parent-Session-Id", "ses_parent")
	if r.SessionID() != "ses_child" || r.ParentSessionID() != "ses_parent" {
		t.Errorf("got %q, %q", r.SessionID(), r.ParentSessionID())
	}
	if (chatapi.Request{}).SessionID() != "" {
		t.Error("SessionID without headers")
	}
}

func FuzzRequestDecode(f *testing.F) {
	f.Add(`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}`)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"tool","content":null}]}`)
	f.Add(`{"messages":[{"role":"assistant","tool_calls":[{"function":{"arguments":"{}"}}]}],"tools":[{}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		var r chatapi.Request
		if json.Unmarshal([]byte(body), &r) != nil {
			return
		}
		_ = r.SystemText() + r.LastUserText() + r.FirstUserText() + r.AllText()
		_ = r.ToolResults()
		_ = r.HasTool("task")
	})
}
