package adapters_test

import (
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
)

func TestOwnTraffic(t *testing.T) {
	for _, tt := range []struct {
		turn adapters.Turn
		want bool
	}{
		{adapters.Turn{Role: "tool", Tool: "mcp__heirloom__session_search", Text: `{"query": "x"}`}, true}, // Claude Code's name
		{adapters.Turn{Role: "tool", Tool: "heirloom_session_transcript"}, true},                           // OpenCode's, OpenClaw's
		{adapters.Turn{Role: "tool", Tool: "heirloom_subagent_runs"}, true},
		{adapters.Turn{Role: "tool", Text: "[heirloom session_search] 3 turns match \"x\""}, true}, // a result without its tool's name
		{adapters.Turn{Role: "tool", Text: "  \n[heirloom session_digest] Checkpoint 1 written"}, true},
		{adapters.Turn{Role: "assistant", Tool: "mcp__heirloom__session_search", Text: "Let me search."}, false}, // the model's own words
		{adapters.Turn{Role: "user", Text: "[heirloom session_search] pasted by a user"}, false},
		{adapters.Turn{Role: "tool", Tool: "heirloom_other"}, false},
		{adapters.Turn{Role: "tool", Tool: "mcp__heirloomx__session_search"}, false},
		{adapters.Turn{Role: "tool", Tool: "mcp__github__search", Text: "heirloom session_search"}, false},
		{adapters.Turn{Role: "tool", Tool: "Bash", Text: "go test ./..."}, false},
	} {
		if got := adapters.OwnTraffic(tt.turn); got != tt.want {
			t.Errorf("OwnTraffic(%+v) = %v, want %v", tt.turn, got, tt.want)
		}
	}
}
