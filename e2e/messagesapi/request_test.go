package messagesapi_test

import (
	"encoding/json"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/internal/standin/standintest"
	"github.com/heirloom-dev/heirloom/e2e/messagesapi"
)

func TestRequest_Text(t *testing.T) {
	r := standintest.Decode[messagesapi.Request](t, `{"system":"plain system",
		"messages":[
			{"role":"user","content":[{"type":"text","text":"first"},{"type":"text","text":"prompt"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Agent","input":{"prompt":"TOOL-INPUT"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"child said"}]},
			                          {"type":"tool_result","tool_use_id":"t2","content":"string result"}]},
			{"role":"system","content":"hook context"}]}`)

	standintest.CheckTexts(t, r, standintest.Texts{
		System:    "plain system",
		FirstUser: "first\nprompt",
		// The system-role message is not the user's.
		LastUser: "child said\nstring result",
		All:      "plain system\nfirst\nprompt\nchild said\nstring result\nhook context",
	})
	if got := r.ToolResults(); len(got) != 2 || got[0].ToolUseID != "t1" {
		t.Errorf("ToolResults: got %+v", got)
	}
	if got := r.Messages[1].ToolUses(); len(got) != 1 || got[0].Name != "Agent" {
		t.Errorf("ToolUses: got %+v", got)
	}
}

func TestRequest_Kind(t *testing.T) {
	tests := []struct {
		name          string
		body          string
		side, subagnt bool
		compaction    bool
	}{
		{"Parent", `{"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.197.230; cc_entrypoint=sdk-cli;"}],"tools":[{"name":"Agent"}]}`, false, false, false},
		{"Subagent", `{"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.197.538; cc_entrypoint=sdk-cli; cc_is_subagent=true;"}],"tools":[{"name":"Agent"}]}`, false, true, false},
		{"Side", `{"system":"Generate a title","messages":[{"role":"user","content":"x"}]}`, true, false, false},
		{"Compaction", `{"system":"s","tools":[{"name":"Agent"}],"messages":[{"role":"user","content":[{"type":"text","text":"second turn\n"},{"type":"text","text":"CRITICAL: Respond with TEXT ONLY.\n\nYour task is to create a detailed summary of the conversation so far, paying close attention"}]}]}`, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := standintest.Decode[messagesapi.Request](t, tt.body)
			if got := r.IsSideRequest(); got != tt.side {
				t.Errorf("IsSideRequest: got %v, want %v", got, tt.side)
			}
			if got := r.IsSubagent(); got != tt.subagnt {
				t.Errorf("IsSubagent: got %v, want %v", got, tt.subagnt)
			}
			if got := r.IsCompaction(); got != tt.compaction {
				t.Errorf("IsCompaction: got %v, want %v", got, tt.compaction)
			}
		})
	}
}

func FuzzRequestDecode(f *testing.F) {
	f.Add(`{"system":"s","messages":[{"role":"user","content":"hi"}]}`)
	f.Add(`{"system":[{"type":"text","text":"a"}],"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"tool_result","content":"deep"}]}]}]}`)
	f.Add(`{"messages":[{"role":"user","content":null}],"tools":[{"name":"Agent"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		var r messagesapi.Request
		if json.Unmarshal([]byte(body), &r) != nil {
			return
		}
		_ = r.AllText()
		_ = r.LastUserText()
		_ = r.FirstUserText()
		_ = r.ToolResults()
		_ = r.IsSubagent()
	})
}
