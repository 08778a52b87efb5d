package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
	"github.com/heirloom-dev/heirloom/e2e/openclaw"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

// TestLiveOpenClawCrossAgent runs the real Gateway with two configured agents, main and ops,
// main allowed to spawn under ops (subagents.allowAgents). A parent under main calls
// sessions_spawn with agentId ops: the child's key is agent:ops:subagent:<uuid>, so it lives in
// heirloom's scope ops while its parent lives in scope main. Asserted on what reached the model:
// the child's FIRST request carries the inherited block with the parent's marker. Then
// heirloom's records: the child in scope ops naming its parent's scope, the run in scope main
// naming the child's, finished with the child's result, and nothing stored in the wrong scope.
func TestLiveOpenClawCrossAgent(t *testing.T) {
	openclaw.Bin(t) // skip at once, saying why, when OpenClaw is absent
	m := ocMarker(t)
	parentKey := "agent:main:live-x-" + strings.ToLower(m)
	parentMark := "PARENT-MARK-" + m
	childTask := "OPS-TASK-" + m + ": check the deploy pipeline and report."

	api := chatapi.New(func(r chatapi.Request) chatapi.Reply {
		if task, ok := openclaw.SubagentTask(r); ok {
			if !strings.HasPrefix(task, "OPS-TASK-"+m) {
				return chatapi.Text("UNEXPECTED-" + m)
			}
			return chatapi.Text("OPS-RESULT-" + m)
		}
		prompt := openclaw.Prompt(r)
		switch {
		case openclaw.IsCompletion(r) && openclaw.SessionKey(r) == parentKey:
			return chatapi.Text("PARENT-DONE-" + m)
		case strings.Contains(prompt, parentMark) && len(r.ToolResults()) == 0:
			return openclaw.SpawnUnder(r, childTask, "ops-check", "ops")
		case strings.Contains(prompt, parentMark):
			return chatapi.Text("PARENT-WAITING-" + m)
		}
		return chatapi.Text("UNEXPECTED-" + m)
	})
	if err := api.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)

	stack := startClawStack(t, api, map[string]any{
		"agents": map[string]any{"entries": map[string]any{
			"main": map[string]any{"subagents": map[string]any{"allowAgents": []string{"ops"}}},
			"ops":  map[string]any{},
		}},
	})
	hl, rec, op := stack.HL, stack.Rec, stack.Op
	ctx := t.Context()
	if _, err := op.Agent(ctx, parentKey, parentMark+": delegate the deploy check to the ops agent"); err != nil {
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
	if len(child) != 1 || !strings.HasPrefix(child[0].Key, "agent:ops:subagent:") {
		t.Fatalf("sessions spawned by %s: %+v, want one under agent ops", parentKey, child)
	}
	childKey := child[0].Key

	turns := clawSmokeTurnsOf(api.Requests(), childKey)
	if len(turns) == 0 {
		t.Fatalf("no model request of %s\nrequests:\n%s", childKey, clawSmokeRequests(api.Requests()))
	}
	system := clawSystemText(turns[0])
	switch block, ok := clawInheritedBlock(system); {
	case !ok:
		t.Errorf("%s's FIRST request has no inherited block in its system prompt:\n%.2000s", childKey, system)
	case !strings.Contains(block, parentMark):
		t.Errorf("%s's inherited block lacks its parent's marker %s:\n%s", childKey, parentMark, block)
	case !strings.Contains(block, `"session": "`+parentKey+`", "scope": "main"`):
		t.Errorf("%s's block does not say where to search its parent (scope main):\n%s", childKey, block)
	}
	if task, _ := openclaw.SubagentTask(turns[0]); task != childTask {
		t.Errorf("%s's task: got %q, want %q", childKey, task, childTask)
	}
	// The API finds the child's run (its parent's, in scope main) from the child's own scope.
	waitFor(t, "the cross-agent run to finish", func() bool {
		reply, ok := clawScopedSessionReply(hl.URL, "ops", childKey)
		return ok && reply.Run != nil && reply.Run.Status == kv.RunCompleted
	})

	// The parent's lineage, read in its own scope, lists the child from the other.
	var lin proxy.LineageReply
	resp, err := http.Get(hl.URL + "/api/sessions/" + url.PathEscape(parentKey) + "/lineage?scope=main")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&lin)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the parent's lineage: %d, %v", resp.StatusCode, err)
	}
	if len(lin.Descendants) != 1 || lin.Descendants[0].Session.ID != childKey || lin.Descendants[0].Session.Scope != "ops" {
		t.Errorf("the parent's lineage: %+v; want the child, in scope ops", lin.Descendants)
	}

	hl.Stop(t)
	st := hl.Store(t)
	c, err := st.GetSession(ctx, "ops", childKey)
	if err != nil {
		t.Fatal(err)
	}
	if c.ParentID != parentKey || c.ParentScope != clawScope || c.Depth != 1 {
		t.Errorf("child %s: parent %q in scope %q, depth %d; want %q in %q, 1", childKey, c.ParentID, c.ParentScope, c.Depth, parentKey, clawScope)
	}
	r, err := st.GetRun(ctx, clawScope, childKey)
	if err != nil || r.ChildScope != "ops" || r.Status != kv.RunCompleted || !strings.Contains(r.Result, "OPS-RESULT-"+m) {
		t.Errorf("run %s: %+v, %v; want in scope main, child scope ops, completed with OPS-RESULT", childKey, r, err)
	}
	for _, wrong := range []struct{ scope, key string }{{clawScope, childKey}, {"ops", parentKey}} {
		if _, err := st.GetSession(ctx, wrong.scope, wrong.key); !errors.Is(err, kv.ErrNotFound) {
			t.Errorf("session %s stored in scope %s: %v; want it only in the scope its key names", wrong.key, wrong.scope, err)
		}
	}
}
