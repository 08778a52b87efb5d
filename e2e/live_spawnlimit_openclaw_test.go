package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
	"github.com/heirloom-dev/heirloom/e2e/openclaw"
	"github.com/heirloom-dev/heirloom/kv"
)

// TestLiveOpenClawSpawnDepth runs the real OpenClaw Gateway with heirloom's plugin installed by
// `heirloom install openclaw` and a real `heirloom serve` following the Gateway, started with
// HEIRLOOM_SPAWN__MAX_DEPTH=1. The parent's sub-agent asks for one of its own, at depth 2 (well
// within OpenClaw's own maxSpawnDepth, 5 by default): the plugin's before_tool_call refuses
// sessions_spawn, the child's MODEL reads heirloom's reason as the call's result, no grandchild
// session is made, and heirloom records the refused run.
func TestLiveOpenClawSpawnDepth(t *testing.T) {
	openclaw.Bin(t)
	m := ocMarker(t)
	parentKey := "agent:main:limit-" + strings.ToLower(m)
	parentMark := "PARENT-MARK-" + m
	childTask := "CHILD-TASK-" + m + ": find the answer and report it."
	grandchildTask := "GRANDCHILD-TASK-" + m + ": dig one level deeper."
	const reason = "heirloom refused this sub-agent: depth 2 exceeds spawn.max_depth 1"

	api := chatapi.New(func(r chatapi.Request) chatapi.Reply {
		if openclaw.IsCompaction(r) {
			return chatapi.Text(openclaw.Summary("SUMMARY-" + m))
		}
		if task, ok := openclaw.SubagentTask(r); ok {
			switch {
			case strings.HasPrefix(task, "GRANDCHILD-TASK-"+m):
				return chatapi.Text("GRANDCHILD-RESULT-" + m)
			case !strings.HasPrefix(task, "CHILD-TASK-"+m):
				return chatapi.Text("UNEXPECTED-" + m)
			case len(r.ToolResults()) == 0:
				return openclaw.Spawn(r, grandchildTask, "grandchild")
			default:
				return chatapi.Text("CHILD-RESULT-" + m)
			}
		}
		prompt := openclaw.Prompt(r)
		switch {
		case openclaw.IsCompletion(r) && openclaw.SessionKey(r) == parentKey:
			return chatapi.Text("PARENT-DONE-" + m)
		case strings.Contains(prompt, parentMark) && len(r.ToolResults()) == 0:
			return openclaw.Spawn(r, childTask, "child-research")
		case strings.Contains(prompt, parentMark):
			return chatapi.Text("PARENT-WAITING-" + m)
		}
		return chatapi.Text("UNEXPECTED-" + m)
	})
	if err := api.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)

	stack := startClawStack(t, api, nil, "HEIRLOOM_SPAWN__MAX_DEPTH=1")
	hl, rec, op := stack.HL, stack.Rec, stack.Op
	ctx := t.Context()
	if _, err := op.Agent(ctx, parentKey, parentMark+": delegate the research to a sub-agent"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	_, err := rec.WaitChat(wctx, 0, parentKey, "PARENT-DONE-"+m)
	cancel()
	if err != nil {
		t.Fatalf("%v\nrequests:\n%s", err, clawSmokeRequests(api.Requests()))
	}
	sessions, err := op.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	child := clawSmokeSpawned(sessions, parentKey)
	if len(child) != 1 {
		t.Fatalf("sessions spawned by %s: %+v, want one", parentKey, child)
	}
	childKey := child[0].Key
	if grand := clawSmokeSpawned(sessions, childKey); len(grand) != 0 {
		t.Errorf("sessions spawned by %s: %+v, want none: heirloom refused the spawn", childKey, grand)
	}

	reqs := api.Requests()
	var refusedCall string
	for _, r := range reqs {
		if task, ok := openclaw.SubagentTask(r); ok && strings.HasPrefix(task, "GRANDCHILD-TASK-"+m) {
			t.Errorf("request %d: the refused grandchild reached the model", r.Seq)
		}
		if openclaw.SessionKey(r) != childKey {
			continue
		}
		for _, msg := range r.ToolResults() {
			if strings.Contains(msg.Content.Text(), reason) {
				refusedCall = msg.ToolCallID
			}
		}
	}
	if refusedCall == "" {
		t.Fatalf("no request of the child %s carried a tool result reading %q\nrequests:\n%s", childKey, reason, clawSmokeRequests(reqs))
	}

	hl.Stop(t)
	st := hl.Store(t)
	runs, err := st.ListRuns(ctx, clawScope, kv.RunFilter{ParentID: childKey})
	if err != nil {
		t.Fatal(err)
	}
	// The run's id is the call's id as OpenClaw's hook names it ("call_x"), which OpenClaw
	// sends the model without its underscores ("callx").
	if len(runs) != 1 || runs[0].Status != kv.RunRefused || runs[0].Reason != "depth 2 exceeds spawn.max_depth 1" || runs[0].Depth != 2 ||
		strings.ReplaceAll(runs[0].ID, "_", "") != refusedCall || runs[0].RootID != parentKey || runs[0].Prompt != grandchildTask || runs[0].Description != "grandchild" {
		t.Errorf("runs the child asked for: %+v; want one refused run %s at depth 2 with the grandchild's task", runs, refusedCall)
	}
	if r, err := st.GetRun(ctx, clawScope, childKey); err != nil || r.Status != kv.RunCompleted || !strings.Contains(r.Result, "CHILD-RESULT-"+m) {
		t.Errorf("the child's run: %+v, %v; want completed with its result", r, err)
	}
	// The allowed spawn is the one run OpenClaw's events name by the child: no second one
	// under its call's id.
	if runs, err := st.ListRuns(ctx, clawScope, kv.RunFilter{ParentID: parentKey}); err != nil || len(runs) != 1 {
		t.Errorf("runs the parent asked for: %+v, %v; want only the child's", runs, err)
	}
}
