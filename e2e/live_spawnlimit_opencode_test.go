package e2e

import (
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
	"github.com/heirloom-dev/heirloom/kv"
)

// TestLiveOpenCodeSpawnDepth runs the real `opencode serve` 1.18.33 with heirloom's real plugin
// and a real `heirloom serve` started with HEIRLOOM_SPAWN__MAX_DEPTH=1. OpenCode's general
// sub-agent is given the task tool (agent.general.permission.task: allow), so the child a
// parent spawns asks for a grandchild, at depth 2: the plugin's spawn check is refused, the
// MODEL reads heirloom's reason as the task call's result, no grandchild session is made and no
// request of one reaches the model, and heirloom records the refused run under the call's id.
func TestLiveOpenCodeSpawnDepth(t *testing.T) {
	const grandTask = "GRAND-TASK: dig deeper."
	l := newOCLive(t, ocSetup{
		ServeEnv: []string{"HEIRLOOM_SPAWN__MAX_DEPTH=1"},
		Config:   map[string]any{"agent": map[string]any{"general": map[string]any{"permission": map[string]any{"task": "allow"}}}},
		Script: func(r chatapi.Request) (chatapi.Reply, bool) {
			switch {
			case r.IsSideRequest():
				return chatapi.Reply{}, false
			case strings.Contains(r.FirstUserText(), grandTask):
				return chatapi.Text("GRAND-RESULT"), true
			case r.ParentSessionID() != "" && len(r.ToolResults()) == 0:
				return chatapi.SpawnTask("grandchild task", grandTask, "general"), true
			case r.ParentSessionID() != "":
				return chatapi.Text(ocChildResult(r.SessionID())), true
			}
			return chatapi.Reply{}, false
		},
	})
	parent := l.newParent(t, "spawn depth")
	sp := l.spawn(t, parent, newMarker(t))

	l.checkLinked(t, sp) // the child's run completed: the stream is past the refused call

	const reason = "heirloom refused this sub-agent: depth 2 exceeds spawn.max_depth 1"
	var refusedCall string
	for _, r := range l.API.Requests() {
		if strings.Contains(r.FirstUserText(), grandTask) {
			t.Errorf("request %d: the refused grandchild reached the model", r.Seq)
		}
		if r.SessionID() != sp.Child {
			continue
		}
		for _, m := range r.ToolResults() {
			if m.Content.Text() == reason {
				refusedCall = m.ToolCallID
			}
		}
	}
	if refusedCall == "" {
		t.Fatalf("no request of the child %s carried a task result reading %q; requests:%s", sp.Child, reason, ocRequestSummary(l.API.Requests()))
	}
	if kids := l.OC.Children(t, t.Context(), sp.Child); len(kids) != 0 {
		t.Errorf("the child %s has children %v; the refused spawn made a session", sp.Child, kids)
	}
	ocAssertOffline(t, l.API)

	st := readState(t, l.H.Store(t), nil)
	r, ok := st.run(refusedCall)
	if !ok {
		t.Fatalf("refused call %s: no run stored", refusedCall)
	}
	if r.Status != kv.RunRefused || r.Reason != "depth 2 exceeds spawn.max_depth 1" || r.Depth != 2 || r.ParentID != sp.Child ||
		r.RootID != sp.Parent || r.ChildID != "" || r.Prompt != grandTask || r.Description != "grandchild task" || r.Type != "general" {
		t.Errorf("refused run: got %+v", r)
	}
	if len(st.Runs) != 2 {
		t.Errorf("got %d runs, want the child's and the refused one", len(st.Runs))
	}
}
