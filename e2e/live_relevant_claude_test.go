package e2e

import (
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/claude"
	"github.com/heirloom-dev/heirloom/e2e/messagesapi"
)

// TestLiveRelevantPassages runs the real Claude Code with the real heirloom: the first prompt's
// reply opens with a finding and goes on for several kilobytes about something else, so the
// recent transcript a child inherits shows only that reply's end; a second prompt (resumed)
// makes the model delegate a task about the finding. The child's first model request must
// carry the finding under "### Relevant to your task", attributed to the parent's reply, while
// the task itself never names the finding's marker.
func TestLiveRelevantPassages(t *testing.T) {
	live := newLiveSetup(t)
	m := newMarker(t)
	first := "FIRST-" + m + ": look into the flaky ledger tests."
	finding := "FINDING-" + m + ": the ledger watermark goes backwards after a compaction when the segment index is empty."
	filler := strings.Repeat("Meanwhile the CLI flags and their help text were tidied, one flag at a time. ", 160) // ~12 KB: more than a whole block
	second := "SECOND-" + m + ": have a helper write the regression test."
	task := "CHILD-TASK-" + m + ": write a regression test for the ledger watermark going backwards after compaction."
	runID := "toolu_e2erelevant" + strings.ToLower(m)

	api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
		switch {
		case r.IsSideRequest():
			return messagesapi.Text("side")
		case r.IsSubagent() && strings.Contains(r.FirstUserText(), "CHILD-TASK-"+m):
			return messagesapi.Text("CHILD-DONE-" + m)
		case r.IsSubagent():
			return messagesapi.Text("unexpected sub-agent")
		case strings.Contains(r.LastUserText(), "FIRST-"+m):
			return messagesapi.Text(finding + "\n\n" + filler)
		case strings.Contains(r.LastUserText(), "SECOND-"+m) && len(r.ToolResults()) == 0:
			return spawn(runID, "regression test", task)
		default:
			return messagesapi.Text("PARENT-DONE-" + m)
		}
	})
	run := func(step, resume, prompt string) claude.Result {
		t.Helper()
		return live.step(t, api, step, resume, prompt)
	}
	res := run("the finding", "", first)
	if res.SessionID == "" {
		t.Fatalf("no session id in the first run's output: %s", res.Stdout)
	}
	run("the delegation", res.SessionID, second)
	assertOffline(t, api)

	child := firstRequest(agentTurns(api.Requests()), "CHILD-TASK-"+m)
	if child == nil {
		t.Fatalf("the child never reached the model")
	}
	if strings.Contains(child.FirstUserText(), "FINDING-"+m) {
		t.Fatalf("the child's task itself holds the finding's marker; the test proves nothing")
	}
	block := inheritedBlock(child.AllText())
	if block == "" {
		t.Fatalf("the child's first request has no %q; its text:\n%s\nheirloom:\n%s", inheritedHeading, child.AllText(), live.Serve.Logs())
	}
	checkRelevantFinding(t, block, m)
}

// checkRelevantFinding checks the block a child's first model request carried: the parent's
// finding (marker m) under "Relevant to your task", attributed to the parent's reply, not in
// the recent transcript (else the test proves nothing), and neither the task nor the parent's
// objective repeated as a passage.
func checkRelevantFinding(t *testing.T, block, m string) {
	t.Helper()
	t.Logf("the block that reached the child:\n%s", block)
	relevant := section(block, "### Relevant to your task")
	if !strings.Contains(relevant, "FINDING-"+m+": the ledger watermark goes backwards") {
		t.Errorf("the finding is not under \"Relevant to your task\":\n%s", block)
	}
	if strings.Contains(relevant, "CHILD-TASK") || strings.Contains(relevant, "FIRST-"+m) {
		t.Errorf("a passage repeats the task (the spawning call) or the objective:\n%s", relevant)
	}
	if !strings.Contains(relevant, "[parent, turn ") || !strings.Contains(relevant, ", assistant] ") {
		t.Errorf("the passage is not attributed to the parent's reply:\n%s", relevant)
	}
	if strings.Contains(section(block, "### Recent transcript"), "FINDING-"+m) {
		t.Errorf("the recent transcript shows the finding: the reply was meant to push it out, the test proves nothing:\n%s", block)
	}
}
