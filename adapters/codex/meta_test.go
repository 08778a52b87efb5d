package codex_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/codex"
)

func TestParseSubagentMeta_Recordings(t *testing.T) {
	tests := []struct {
		scenario, id string
		want         adapters.SubagentMeta
	}{
		{nested, nestedChild, adapters.SubagentMeta{AgentType: "default", Description: "Volta", SpawnDepth: 1, ParentID: nestedRoot, ThreadID: nestedChild}},
		{nested, nestedGrandchild, adapters.SubagentMeta{AgentType: "default", Description: "Mencius", SpawnDepth: 2, ParentID: nestedChild, ThreadID: nestedGrandchild}},
		{parallel, parallelA, adapters.SubagentMeta{AgentType: "default", Description: "Ramanujan", SpawnDepth: 1, ParentID: parallelRoot, ThreadID: parallelA}},
		{parallel, parallelB, adapters.SubagentMeta{AgentType: "default", Description: "Lorentz", SpawnDepth: 1, ParentID: parallelRoot, ThreadID: parallelB}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+tt.id, func(t *testing.T) {
			raw := mustReadFile(t, rolloutOf(t, tt.scenario, tt.id))
			line := firstLine(raw)
			// The first line alone, with its newline, and the whole file read the same.
			for _, b := range [][]byte{line, raw[:len(line)+1], raw} {
				got, err := codex.Adapter{}.ParseSubagentMeta(b)
				if err != nil {
					t.Fatalf("ParseSubagentMeta(%d bytes): %v", len(b), err)
				}
				if got != tt.want {
					t.Fatalf("ParseSubagentMeta(%d bytes)\n got %+v\nwant %+v", len(b), got, tt.want)
				}
			}
		})
	}
}

// A root's rollout opens with session_meta too, naming no parent.
func TestParseSubagentMeta_Roots(t *testing.T) {
	for _, tt := range []struct{ scenario, id string }{{nested, nestedRoot}, {parallel, parallelRoot}, {compactResumed, compactRoot}} {
		got, err := codex.Adapter{}.ParseSubagentMeta(mustReadFile(t, rolloutOf(t, tt.scenario, tt.id)))
		if err != nil {
			t.Fatalf("%s root: %v", tt.scenario, err)
		}
		if got.ParentID != "" || got.SpawnDepth != 0 || got.ThreadID != tt.id {
			t.Errorf("%s root: %+v, want no parent, depth 0, thread %s", tt.scenario, got, tt.id)
		}
	}
}

func TestParseSubagentMeta_Malformed(t *testing.T) {
	raw := mustReadFile(t, rolloutOf(t, nested, nestedChild))
	line := firstLine(raw)
	tests := []struct {
		name string
		body []byte
	}{
		{"Empty", nil},
		{"NotJSON", []byte("not json")},
		{"Array", []byte(`[{"type":"session_meta"}]`)},
		{"Null", []byte("null")},
		{"CutShort", line[:len(line)/2]},
		{"CutBeforeLastBrace", line[:len(line)-1]},
		{"CutShortAndNewline", append(bytes.Clone(line[:len(line)/2]), '\n')},
		{"SecondRecord", raw[len(line)+1:]},
		{"BlankFirstLine", append([]byte("\n"), raw...)},
		{"OtherType", []byte(`{"type":"response_item","payload":{"id":"x"}}`)},
		{"NoType", []byte(`{"payload":{"id":"x","parent_thread_id":"p"}}`)},
		{"TypeNotString", []byte(`{"type":["session_meta"],"payload":{}}`)},
		{"ParentControl", []byte(`{"type":"session_meta","payload":{"source":{"subagent":{"thread_spawn":{"parent_thread_id":"p\u0000","depth":1}}}}}`)},
		{"ParentTooLong", []byte(`{"type":"session_meta","payload":{"parent_thread_id":"` + strings.Repeat("p", adapters.MaxIDBytes+1) + `"}}`)},
		{"ParentInvalidUTF8", []byte("{\"type\":\"session_meta\",\"payload\":{\"parent_thread_id\":\"p\xff\"}}")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := (codex.Adapter{}).ParseSubagentMeta(tt.body); !errors.Is(err, adapters.ErrMalformed) {
				t.Fatalf("ParseSubagentMeta(%.80q) = %+v, %v; want ErrMalformed", tt.body, got, err)
			}
		})
	}
}

func TestParseSubagentMeta_Fields(t *testing.T) {
	tests := []struct {
		name, body string
		want       adapters.SubagentMeta
	}{
		{"ThreadSpawnWins", `{"type":"session_meta","payload":{"id":"c","parent_thread_id":"old","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p","depth":3,"agent_nickname":"Volta","agent_role":"explorer"}}}}}`,
			adapters.SubagentMeta{AgentType: "explorer", Description: "Volta", SpawnDepth: 3, ParentID: "p", ThreadID: "c"}},
		{"TopLevelParent", `{"type":"session_meta","payload":{"id":"c","parent_thread_id":"p"}}`,
			adapters.SubagentMeta{AgentType: "default", ParentID: "p", ThreadID: "c"}},
		{"SourceString", `{"type":"session_meta","payload":{"id":"r","source":"exec"}}`,
			adapters.SubagentMeta{AgentType: "default", ThreadID: "r"}},
		{"PayloadNotObject", `{"type":"session_meta","payload":"x"}`, adapters.SubagentMeta{AgentType: "default"}},
		{"DepthNotNumber", `{"type":"session_meta","payload":{"id":"c","parent_thread_id":"p","source":{"subagent":{"thread_spawn":{"depth":"one"}}}}}`,
			adapters.SubagentMeta{AgentType: "default", ParentID: "p", ThreadID: "c"}},
		{"CRLF", "{\"type\":\"session_meta\",\"payload\":{\"id\":\"c\",\"parent_thread_id\":\"p\"}}\r\n{}",
			adapters.SubagentMeta{AgentType: "default", ParentID: "p", ThreadID: "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codex.Adapter{}.ParseSubagentMeta([]byte(tt.body))
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestSubagentMetaPath(t *testing.T) {
	for _, p := range []string{"/home/dev/.codex/sessions/2026/11/27/rollout-2026-11-27T16-59-51-" + nestedChild + ".jsonl", "rollout.jsonl", ""} {
		if got := (codex.Adapter{}).SubagentMetaPath(p); got != p {
			t.Errorf("SubagentMetaPath(%q) = %q, want it unchanged", p, got)
		}
	}
}

func TestSubagentTranscriptPath(t *testing.T) {
	root := "/home/dev/.codex/sessions/2026/11/27/rollout-2026-11-27T16-59-51-" + nestedRoot + ".jsonl"
	for _, tt := range [][2]string{{root, nestedChild}, {"", ""}, {root, ""}} {
		if got := (codex.Adapter{}).SubagentTranscriptPath(tt[0], tt[1]); got != "" {
			t.Errorf("SubagentTranscriptPath(%q, %q) = %q, want empty", tt[0], tt[1], got)
		}
	}
}
