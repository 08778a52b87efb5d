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

// A finding the task quotes word for word, with more to say (the root cause, where, what else),
// is not the task said again.
func TestRestates_QuotedFinding(t *testing.T) {
	task := tokens("Write a regression test: the ledger watermark goes backwards after compaction when the segment index is empty.")
	finding := "Root cause found: the ledger watermark goes backwards after compaction when the segment index is empty, " +
		"because Compact in ledger/compact.go:212 resets hdr.Watermark before it reloads the index; " +
		"three callers depend on it: Replay, Snapshot and the repair tool, each of which reads the stale value once."
	if restates(tokens(finding), task) {
		t.Errorf("the finding the task quotes was taken for the task")
	}
	call := `{"description":"regression test","prompt":"Write a regression test: the ledger watermark goes backwards after compaction when the segment index is empty.","subagent_type":"general"}`
	if !restates(tokens(call), task) {
		t.Errorf("the spawning call's input was not taken for the task")
	}
}
