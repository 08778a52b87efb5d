package claudecode_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
)

func TestParseSubagentMeta_Fixtures(t *testing.T) {
	want := map[string]adapters.SubagentMeta{
		"agent-a02df2ef9ee472336": {AgentType: "general-purpose", Description: "child one", ToolUseID: "toolu_2af3e4b1742744f7", SpawnDepth: 1},
		"agent-a73685d8901dc53f2": {AgentType: "Explore", Description: "child two", ToolUseID: "toolu_6fbd338f1bd04240", SpawnDepth: 1},
		"agent-a1ba2876fa63b44e9": {AgentType: "general-purpose", Description: "child research task", ToolUseID: "toolu_0374fe1f93f44481", SpawnDepth: 1},
	}
	paths := MustGlob(t, "testdata/transcripts/*/subagents/*.meta.json")
	if len(paths) != len(want) {
		t.Fatalf("%d meta files, want %d", len(paths), len(want))
	}
	for _, p := range paths {
		got, err := claudecode.Adapter{}.ParseSubagentMeta(mustReadFile(t, p))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if w := want[strings.TrimSuffix(filepath.Base(p), ".meta.json")]; got != w {
			t.Errorf("%s: got %+v, want %+v", p, got, w)
		}
	}
}

func TestParseSubagentMeta_Malformed(t *testing.T) {
	for _, body := range []string{"", "not json", "[]", "null", "1", `{"agentType":"Explore"`, `{"spawnDepth":"one"}`, `{"toolUseId":7}`} {
		if _, err := (claudecode.Adapter{}).ParseSubagentMeta([]byte(body)); !errors.Is(err, adapters.ErrMalformed) {
			t.Errorf("ParseSubagentMeta(%q) err = %v, want ErrMalformed", body, err)
		}
	}
	got, err := claudecode.Adapter{}.ParseSubagentMeta([]byte(`{"agentType":"Explore","extra":{"a":1}}`))
	if err != nil || got != (adapters.SubagentMeta{AgentType: "Explore"}) {
		t.Errorf("unknown fields: got %+v, %v", got, err)
	}
}

func TestSubagentMetaPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/p/s/subagents/agent-a1.jsonl", "/p/s/subagents/agent-a1.meta.json"},
		{"agent-a1.jsonl", "agent-a1.meta.json"},
		{"/p/s/subagents/agent-a1.json", ""},
		{"/p/s/subagents/agent-a1", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := (claudecode.Adapter{}).SubagentMetaPath(tt.in); got != tt.want {
			t.Errorf("SubagentMetaPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSubagentTranscriptPath(t *testing.T) {
	t.Run("Fixtures", func(t *testing.T) {
		// The path derived from the session's transcript and agent_id is the one SubagentStop
		// reports later, and the files are there.
		for _, path := range hookStreams {
			for _, c := range MustReadHookStream(t, path) {
				ev, err := claudecode.Adapter{}.Decode(c.Payload)
				if err != nil {
					t.Fatal(err)
				}
				if ev.Kind != adapters.KindSubagentStop {
					continue
				}
				if got := claudecode.SubagentTranscriptPath(ev.TranscriptPath, ev.AgentID); got != ev.AgentTranscriptPath {
					t.Errorf("%s seq %d: SubagentTranscriptPath = %q, want %q", path, c.Seq, got, ev.AgentTranscriptPath)
				}
			}
		}
		for _, p := range MustGlob(t, "testdata/transcripts/*.jsonl") {
			dir := filepath.Join(strings.TrimSuffix(p, ".jsonl"), "subagents")
			for _, sub := range MustGlob(t, filepath.Join(dir, "agent-*.jsonl")) {
				id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(sub), "agent-"), ".jsonl")
				got := claudecode.SubagentTranscriptPath(p, id)
				if got != sub {
					t.Errorf("SubagentTranscriptPath(%q, %q) = %q, want %q", p, id, got, sub)
				}
				if _, err := os.Stat(claudecode.Adapter{}.SubagentMetaPath(got)); err != nil {
					t.Errorf("meta of %s: %v", got, err)
				}
			}
		}
	})
	bad := []struct{ transcript, agent string }{
		{"/p/s.jsonl", ""},
		{"/p/s.jsonl", "../x"},
		{"/p/s.jsonl", `a\b`},
		{"/p/s.jsonl", "a\x00"},
		{"/p/s.json", "a1"},
		{"/p/.jsonl", "a1"},
		{"/p/s.jsonl/", "a1"},
		{"", "a1"},
	}
	for _, tt := range bad {
		if got := claudecode.SubagentTranscriptPath(tt.transcript, tt.agent); got != "" {
			t.Errorf("SubagentTranscriptPath(%q, %q) = %q, want empty", tt.transcript, tt.agent, got)
		}
	}
}
