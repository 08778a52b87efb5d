package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/claude"
	"github.com/heirloom-dev/heirloom/e2e/messagesapi"
	"github.com/heirloom-dev/heirloom/inject"
)

// TestLiveSubagentResultAfterCompact runs the real Claude Code with the real heirloom: a
// session delegates a survey to a sub-agent, which returns a marked result; the session has a
// second turn, is compacted (`claude -p --resume ID "/compact"`), and resumed. The first model
// request after the compaction must carry, in "[Objective Reinforcement]", the finished child's
// cast result: "[Subagent Result: <description>]", its status and condensation level, the
// result, and the footer naming `heirloom runs show <run id>`. The compaction's summary never
// repeats the marker and replaces the history, so the marker there comes from heirloom. The run
// is then read back through the API and `heirloom runs show`.
func TestLiveSubagentResultAfterCompact(t *testing.T) {
	live := newLiveSetup(t)
	m := newMarker(t)
	first := "FIRST-" + m + ": port the parser; have a helper survey the call sites first."
	task := "CHILD-TASK-" + m + ": list every call site of pricing.Round."
	result := "CHILD-RESULT-" + m + ": three call sites, all through pricing.Round, so one fix covers them."
	runID := "toolu_e2eresult" + strings.ToLower(m)
	next := "NEXT-" + m

	api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
		switch {
		case r.IsSideRequest():
			return messagesapi.Text("side")
		case r.IsCompaction():
			return messagesapi.Text("<analysis>The user asked for some work.</analysis>\n<summary>1. Primary Request and Intent: a port was requested; a helper was used.</summary>")
		case r.IsSubagent() && strings.Contains(r.FirstUserText(), "CHILD-TASK-"+m):
			return messagesapi.Text(result)
		case r.IsSubagent():
			return messagesapi.Text("unexpected sub-agent")
		case strings.Contains(r.LastUserText(), "FIRST-"+m) && len(r.ToolResults()) == 0:
			return spawn(runID, "survey the call sites", task)
		default:
			return messagesapi.Text("done")
		}
	})

	run := func(step, resume, prompt string) claude.Result {
		t.Helper()
		return live.step(t, api, step, resume, prompt)
	}
	res := run("first prompt, the child runs", "", first)
	id := res.SessionID
	if id == "" {
		t.Fatalf("no session id in the first run's output: %s", res.Stdout)
	}
	run("second prompt", id, "SECOND-"+m+": now the lexer.")
	if compacted := run("compact", id, "/compact"); strings.Contains(compacted.Stdout+compacted.Text, "Not enough messages") {
		t.Fatalf("claude refused to compact: %s", compacted.Stdout)
	}
	run("prompt after compaction", id, next)
	assertOffline(t, api)

	reqs := agentTurns(api.Requests())
	if !slices.ContainsFunc(reqs, func(r messagesapi.Request) bool {
		return r.IsSubagent() && strings.Contains(r.FirstUserText(), "CHILD-TASK-"+m)
	}) {
		t.Fatalf("the child never reached the model: no sub-agent request holds CHILD-TASK-%s", m)
	}
	i := slices.IndexFunc(reqs, func(r messagesapi.Request) bool {
		return !r.IsCompaction() && strings.Contains(r.LastUserText(), next)
	})
	if i < 0 {
		t.Fatalf("no model request holds %s", next)
	}
	if i == 0 || !reqs[i-1].IsCompaction() {
		t.Errorf("the request holding %s does not directly follow the compaction request", next)
	}
	block := blockFrom(reqs[i], inject.ObjectiveHeading, inject.RecoveredHeading)
	if block == "" {
		t.Fatalf("the first request after compaction has no %q; its text:\n%s\nheirloom:\n%s", inject.ObjectiveHeading, reqs[i].AllText(), live.Serve.Logs())
	}
	t.Logf("reinforcement that reached the model:\n%s", block)
	for _, want := range []string{
		"[Subagent Result: survey the call sites]",
		"\nStatus: completed\nCondensation: Level 1 (passthrough)\n" + result + "\n---\n",
		"Full result: shown whole above (also: heirloom runs show " + runID + ")",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("the reinforcement lacks %q", want)
		}
	}

	// The record behind it: the end reason, the turns (read from the sub-agent's transcript,
	// which Claude Code finishes writing after its hooks), the cast on the API and the CLI.
	var reply struct {
		Run struct {
			EndReason string `json:"end_reason"`
			Status    string `json:"status"`
			ChildID   string `json:"child_id"`
			Turns     int    `json:"turns"`
			Result    string `json:"result"`
		} `json:"run"`
		Cast string `json:"cast"`
	}
	resp, err := http.Get(live.Serve.URL + "/api/runs/" + runID)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/runs/%s: %d, %v", runID, resp.StatusCode, err)
	}
	resp.Body.Close()
	if r := reply.Run; r.Status != "completed" || r.EndReason != "completed" || r.ChildID == "" || r.Turns == 0 || r.Result != result {
		t.Errorf("the run as stored: %+v; want completed, end reason completed, a child, its turns, the result", r)
		if resp, err := http.Get(live.Serve.URL + "/api/sessions/" + r.ChildID); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Logf("the child as stored: %s\nheirloom:\n%s", b, live.Serve.Logs())
		}
	}
	cmd := exec.Command(heirloomBin(t), "runs", "show", runID)
	cmd.Env = []string{"HEIRLOOM_URL=" + live.Serve.URL, "HOME=" + live.Home}
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), "[Subagent Result: survey the call sites]\n") || !strings.Contains(string(out), result) {
		t.Errorf("heirloom runs show %s: %v\n%s", runID, err, out)
	}
}
