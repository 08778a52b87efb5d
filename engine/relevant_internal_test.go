package engine

import "testing"

func TestRestates(t *testing.T) {
	task := tokens("CHILD-TASK: write a regression test for the ledger watermark going backwards after compaction.")
	tests := []struct {
		passage string
		want    bool
	}{
		// The spawning call's input, as OpenCode's stream records the task tool's call.
		{`task regression test {"description":"regression test","prompt":"CHILD-TASK: write a regression test for the ledger watermark going backwards after compaction.","subagent_type":"general"}`, true},
		{"Write a regression test for the ledger watermark going backwards", true},
		{"FINDING: the ledger watermark goes backwards after a compaction when the segment index is empty.", false},
		{"the ledger", false},
	}
	for _, tt := range tests {
		if got := restates(tokens(tt.passage), task); got != tt.want {
			t.Errorf("restates(%q) = %v, want %v", tt.passage, got, tt.want)
		}
	}
}
