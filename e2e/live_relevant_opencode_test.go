package e2e

import (
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
)

// TestLiveOpenCodeRelevantPassages runs the real `opencode serve` with heirloom's real plugin
// and a real `heirloom serve` following it: the parent's first reply opens with a finding and
// goes on for several kilobytes about something else, so the recent transcript shows only its
// end; the parent's second prompt delegates a task about the finding through OpenCode's task
// tool. The child's FIRST model request must carry the finding under "### Relevant to your
// task", attributed to the parent's reply, while its task never names the finding's marker.
func TestLiveOpenCodeRelevantPassages(t *testing.T) {
	m := ocMarker(t)
	finding := "FINDING-" + m + ": the ledger watermark goes backwards after a compaction when the segment index is empty."
	filler := strings.Repeat("Meanwhile the CLI flags and their help text were tidied, one flag at a time. ", 160) // ~12 KB: more than a whole block
	task := "CHILD-TASK: write a regression test for the ledger watermark going backwards after compaction."
	l := newOCLive(t, ocSetup{Script: func(r chatapi.Request) (chatapi.Reply, bool) {
		switch {
		case r.IsSideRequest() || r.ParentSessionID() != "":
			return chatapi.Reply{}, false
		case strings.Contains(r.LastUserText(), "FIRST-"+m):
			return chatapi.Text(finding + "\n\n" + filler), true
		case strings.Contains(r.LastUserText(), "SECOND-"+m) && len(r.ToolResults()) == 0:
			return chatapi.SpawnTask("regression test", task, "general"), true
		}
		return chatapi.Reply{}, false
	}})
	parent := l.newParent(t, "relevant passages")
	if got := l.OC.Prompt(t, t.Context(), parent.ID, "FIRST-"+m+": look into the flaky ledger tests.").Text(); !strings.HasPrefix(got, "FINDING-"+m) {
		t.Fatalf("the first reply is %.80q, want the finding", got)
	}
	if got := l.OC.Prompt(t, t.Context(), parent.ID, "SECOND-"+m+": have a helper write the regression test.").Text(); got != "PARENT-DONE" {
		t.Fatalf("the second turn answered %q, want PARENT-DONE", got)
	}
	sp := l.spawnOf(t, parent.ID, "FINDING-"+m)
	first := l.firstRequest(t, sp) // fails when the task itself holds the marker
	block := ocInheritedBlock(first)
	if block == "" {
		t.Fatalf("the child's first request has no inherited block; requests:%s", ocRequestSummary(l.API.Requests()))
	}
	checkRelevantFinding(t, block, m)
	ocAssertOffline(t, l.API)
}
