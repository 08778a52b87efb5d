package inject_test

import (
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// A passage from a turn the transcript section shows only summed up (a tool turn: its files,
// or the start of its output) is kept; one from a turn shown whole is not; and at most
// RelevantMax are listed.
func TestInheritedBlock_RelevantAgainstTail(t *testing.T) {
	in := inject.Inherited{
		Parent: kv.Session{ID: "p", Harness: "claude-code", Objective: "Fix the watermark"},
		Tail: []kv.Turn{
			{Seq: 5, Role: "tool", Tool: "Bash", Text: strings.Repeat("ok TestSomething 0.01s\n", 40) + "--- FAIL: TestWatermark: went backwards"},
			{Seq: 6, Role: "tool", Tool: "Read", Text: "func watermark() {}", Files: []string{"ledger/watermark.go"}},
			{Seq: 7, Role: "assistant", Text: "The watermark goes backwards on an empty index."},
		},
		Relevant: []inject.Passage{
			{Session: "p", From: "parent", Turn: 5, Role: "tool", Text: "--- FAIL: TestWatermark: went backwards"},
			{Session: "p", From: "parent", Turn: 6, Role: "tool", Text: "func watermark() {}"},
			{Session: "p", From: "parent", Turn: 7, Role: "assistant", Text: "The watermark goes backwards on an empty index."},
			{Session: "p:c", From: "sub-agent", Turn: 7, Role: "assistant", Text: "A sibling's turn 7 is not the parent's."},
		},
	}
	block := inject.InheritedBlock(in, inject.Budget{})
	for _, want := range []string{"[parent, turn 5, tool]", "[parent, turn 6, tool]", "[sub-agent, turn 7, assistant]"} {
		if !strings.Contains(block, want) {
			t.Errorf("the block lacks the passage %s:\n%s", want, block)
		}
	}
	if strings.Contains(block, "[parent, turn 7, assistant]") {
		t.Errorf("a passage the transcript shows whole is repeated:\n%s", block)
	}
	in.RelevantMax = 1
	if block := inject.InheritedBlock(in, inject.Budget{}); strings.Count(block, "- [parent, turn") != 1 {
		t.Errorf("RelevantMax 1:\n%s", block)
	}
}
