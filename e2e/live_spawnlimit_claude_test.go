package e2e

import (
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/claude"
	"github.com/heirloom-dev/heirloom/e2e/messagesapi"
	"github.com/heirloom-dev/heirloom/kv"
)

// refusedResult returns the tool_result of request r answering tool call id, and whether there
// is one.
func refusedResult(r messagesapi.Request, id string) (messagesapi.Block, bool) {
	for _, b := range r.ToolResults() {
		if b.ToolUseID == id {
			return b, true
		}
	}
	return messagesapi.Block{}, false
}

// TestLiveSpawnLimits runs the real Claude Code against a real `heirloom serve` started with
// HEIRLOOM_SPAWN__MAX_DEPTH=1 and HEIRLOOM_SPAWN__MAX_CHILDREN=1. The parent asks for two
// sub-agents in one reply (parallel tool use): heirloom lets one through and refuses the other
// while the first is active; the sub-agent that runs asks for one of its own, at depth 2, which
// is refused. Each refusal must reach the MODEL as the tool call's error (a tool_result with
// is_error and heirloom's reason naming the limit), no refused sub-agent may reach the model,
// and the store must hold the refused runs.
func TestLiveSpawnLimits(t *testing.T) {
	live := newLiveSetup(t, "HEIRLOOM_SPAWN__MAX_DEPTH=1", "HEIRLOOM_SPAWN__MAX_CHILDREN=1")
	m := newMarker(t)
	lower := strings.ToLower(m)
	runA, runB, runG := "toolu_e2elima"+lower, "toolu_e2elimb"+lower, "toolu_e2elimg"+lower
	taskA, taskB, taskG := "TASK-A-"+m+": look here.", "TASK-B-"+m+": look there.", "GRAND-TASK-"+m+": dig deeper."

	api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
		first := r.FirstUserText()
		switch {
		case r.IsSideRequest():
			return messagesapi.Text("side")
		case r.IsSubagent() && strings.Contains(first, "GRAND-TASK-"+m):
			return messagesapi.Text("GRAND-RESULT-" + m)
		case r.IsSubagent() && (strings.Contains(first, "TASK-A-"+m) || strings.Contains(first, "TASK-B-"+m)):
			if len(r.ToolResults()) == 0 {
				return spawn(runG, "grandchild task", taskG)
			}
			return messagesapi.Text("CHILD-RESULT-" + m)
		case r.IsSubagent():
			return messagesapi.Text("unexpected sub-agent")
		case len(r.ToolResults()) == 0:
			reply := spawn(runA, "child A", taskA)
			reply.More = []messagesapi.ToolCall{*spawn(runB, "child B", taskB).Tool}
			return reply
		default:
			return messagesapi.Text("PARENT-DONE-" + m)
		}
	})

	res := claude.Run(t, t.Context(), live.options(api, "fan out "+m))
	if res.ExitCode != 0 || res.Text != "PARENT-DONE-"+m {
		t.Fatalf("exit %d, result %q, want 0 and PARENT-DONE-%s\nstdout: %s\nstderr: %s\nheirloom:\n%s", res.ExitCode, res.Text, m, res.Stdout, res.Stderr, live.Serve.Logs())
	}
	assertOffline(t, api)
	reqs := agentTurns(api.Requests())
	var parentAfter, childAfter *messagesapi.Request
	ran := map[string]bool{}
	for i, r := range reqs {
		first := r.FirstUserText()
		switch {
		case !r.IsSubagent() && len(r.ToolResults()) > 0:
			parentAfter = &reqs[i]
		case r.IsSubagent() && strings.Contains(first, "GRAND-TASK-"+m):
			t.Errorf("request %d: the refused grandchild reached the model", r.Seq)
		case r.IsSubagent() && len(r.ToolResults()) > 0:
			childAfter = &reqs[i]
		}
		for _, task := range []string{"TASK-A-" + m, "TASK-B-" + m} {
			if r.IsSubagent() && strings.Contains(first, task) {
				ran[task] = true
			}
		}
	}
	if len(ran) != 1 {
		t.Fatalf("sub-agents that reached the model: %v; want exactly one of the two (max_children 1)", ran)
	}
	allowed, refused := runA, runB
	if ran["TASK-B-"+m] {
		allowed, refused = runB, runA
	}

	// The children refusal, as the parent's model reads it.
	const childrenReason = "heirloom refused this sub-agent: parent already has 1 active sub-agents (spawn.max_children 1)"
	if parentAfter == nil {
		t.Fatal("no parent request carried the spawns' results")
	}
	if b, ok := refusedResult(*parentAfter, refused); !ok || !b.IsError || b.Content.Text() != childrenReason {
		t.Errorf("parent's result for the refused spawn %s: %+v (found %v), want is_error with %q", refused, b, ok, childrenReason)
	}
	if b, ok := refusedResult(*parentAfter, allowed); !ok || b.IsError || !strings.Contains(b.Content.Text(), "CHILD-RESULT-"+m) {
		t.Errorf("parent's result for the allowed spawn %s: %+v (found %v), want the child's result", allowed, b, ok)
	}

	// The depth refusal, as the child's model reads it.
	const depthReason = "heirloom refused this sub-agent: depth 2 exceeds spawn.max_depth 1"
	if childAfter == nil {
		t.Fatal("no request of the child carried its spawn's result")
	}
	if b, ok := refusedResult(*childAfter, runG); !ok || !b.IsError || b.Content.Text() != depthReason {
		t.Errorf("child's result for its spawn: %+v (found %v), want is_error with %q", b, ok, depthReason)
	}

	t.Run("Store", func(t *testing.T) {
		root := res.SessionID
		childID := root + ":" + metaAgents(t, res)[allowed]
		st := readState(t, live.Serve.Store(t), nil)
		checkRun(t, st, allowed, root, root, childID, "CHILD-RESULT-"+m)
		for _, want := range []struct {
			id, parent, reason string
			depth              int
		}{
			{refused, root, "parent already has 1 active sub-agents (spawn.max_children 1)", 1},
			{runG, childID, "depth 2 exceeds spawn.max_depth 1", 2},
		} {
			r, ok := st.run(want.id)
			if !ok {
				t.Errorf("refused run %s: not stored", want.id)
				continue
			}
			if r.Status != kv.RunRefused || r.Reason != want.reason || r.Depth != want.depth || r.ParentID != want.parent || r.RootID != root || r.ChildID != "" || r.Prompt == "" {
				t.Errorf("refused run %s: got %+v, want refused by %q at depth %d under %s, no child", want.id, r, want.reason, want.depth, want.parent)
			}
		}
		if len(st.Sessions) != 2 || len(st.Runs) != 3 {
			t.Errorf("got sessions %q and %d runs, want 2 sessions and 3 runs", st.sessionIDs(), len(st.Runs))
		}
	})
}
