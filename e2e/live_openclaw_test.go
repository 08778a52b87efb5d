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

// TestLiveOpenClaw runs the real OpenClaw Gateway with heirloom's plugin installed by
// `heirloom install openclaw` and a real `heirloom serve` following the Gateway, against the Go
// chat-completions stand-in. A parent's prompt makes the model call sessions_spawn; the child
// spawns a grandchild. Asserted on what reached the model: each sub-agent's FIRST request carries
// `## Inherited from Parent Session` in its system prompt with its own parent's marker. Then
// heirloom's records: lineage in scope main, both runs finished, and one compaction epoch for one
// sessions.compact, though the Gateway and the plugin both report it.
func TestLiveOpenClaw(t *testing.T) {
	openclaw.Bin(t) // skip at once, saying why, when OpenClaw is absent
	m := ocMarker(t)
	parentKey := "agent:main:live-" + strings.ToLower(m)
	parentMark := "PARENT-MARK-" + m
	childTask := "CHILD-TASK-" + m + ": find the answer and report it."
	grandchildTask := "GRANDCHILD-TASK-" + m + ": dig one level deeper."

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
			case openclaw.IsCompletion(r):
				return chatapi.Text("CHILD-RESULT-" + m)
			case len(r.ToolResults()) == 0:
				return openclaw.Spawn(r, grandchildTask, "grandchild")
			default:
				return chatapi.Text("CHILD-WAITING-" + m)
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

	stack := startClawStack(t, api, nil)
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
	grandchild := clawSmokeSpawned(sessions, child[0].Key)
	if len(grandchild) != 1 {
		t.Fatalf("sessions spawned by %s: %+v, want one", child[0].Key, grandchild)
	}
	childKey, grandchildKey := child[0].Key, grandchild[0].Key

	t.Run("FirstRequestsCarryTheirParentsContext", func(t *testing.T) {
		reqs := api.Requests()
		for _, want := range []struct{ key, mark, task string }{
			{childKey, parentMark, childTask},
			{grandchildKey, "CHILD-TASK-" + m, grandchildTask},
		} {
			turns := clawSmokeTurnsOf(reqs, want.key)
			if len(turns) == 0 {
				t.Fatalf("no model request of %s\nrequests:\n%s", want.key, clawSmokeRequests(reqs))
			}
			system := clawSystemText(turns[0])
			block, ok := clawInheritedBlock(system)
			switch {
			case !ok:
				t.Errorf("%s's FIRST request has no inherited block in its system prompt:\n%.2000s", want.key, system)
			case !strings.Contains(block, want.mark):
				t.Errorf("%s's inherited block lacks its parent's marker %s:\n%s", want.key, want.mark, block)
			}
			if task, _ := openclaw.SubagentTask(turns[0]); task != want.task {
				t.Errorf("%s's task: got %q, want %q", want.key, task, want.task)
			}
			if strings.Contains(clawSystemText(turns[0]), "PARENT-DONE-"+m) {
				t.Errorf("%s's block holds what its parent did after the spawn", want.key)
			}
		}
		// The parent is top level: nothing inherited, on any of its turns.
		for _, r := range clawSmokeTurnsOf(reqs, parentKey) {
			if _, ok := clawInheritedBlock(clawSystemText(r)); ok {
				t.Errorf("parent request %d carries an inherited block", r.Seq)
			}
		}
	})

	t.Run("RunsFinish", func(t *testing.T) {
		waitFor(t, "both runs to finish", func() bool {
			return clawRunDone(hl.URL, childKey) && clawRunDone(hl.URL, grandchildKey)
		})
	})

	t.Run("OneEpochPerCompaction", func(t *testing.T) {
		if _, err := op.Compact(ctx, parentKey); err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := rec.WaitEvent(wctx, 0, clawSmokeOperation(parentKey, "end"))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "heirloom to see the compaction", func() bool { return clawCompactions(hl.URL, parentKey) > 0 })
		time.Sleep(time.Second) // let the other reports of the same compaction arrive: they must not count
	})

	// The store, read after heirloom stopped.
	hl.Stop(t)
	st := hl.Store(t)
	for _, want := range []struct {
		key, parent string
		depth       int
	}{{parentKey, "", 0}, {childKey, parentKey, 1}, {grandchildKey, childKey, 2}} {
		sess, err := st.GetSession(ctx, clawScope, want.key)
		if err != nil {
			t.Errorf("session %s: %v", want.key, err)
			continue
		}
		if sess.Harness != "openclaw" || sess.ParentID != want.parent || sess.Depth != want.depth {
			t.Errorf("session %s: harness %q parent %q depth %d, want openclaw, %q, %d", want.key, sess.Harness, sess.ParentID, sess.Depth, want.parent, want.depth)
		}
	}
	for key, result := range map[string]string{childKey: "CHILD-RESULT-" + m, grandchildKey: "GRANDCHILD-RESULT-" + m} {
		r, err := st.GetRun(ctx, clawScope, key)
		if err != nil || r.Status != kv.RunCompleted || !strings.Contains(r.Result, result) {
			t.Errorf("run %s: %+v, %v; want completed with %s", key, r, err, result)
		}
	}
	if p, err := st.GetSession(ctx, clawScope, parentKey); err != nil || p.Compactions != 1 {
		t.Errorf("parent's compactions: got %d (%v), want 1", p.Compactions, err)
	}
	if _, err := st.GetSession(ctx, scope, childKey); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("child in the configured scope: got %v, want only in scope main", err)
	}
}

// clawSystemText returns the text of a request's system and developer messages.
func clawSystemText(r chatapi.Request) string {
	var out []string
	for _, msg := range r.Messages {
		if msg.Role == "system" || msg.Role == "developer" {
			out = append(out, msg.Content.Text())
		}
	}
	return strings.Join(out, "\n")
}

// clawInheritedBlock returns heirloom's inherited block from a system prompt, from its heading
// to the end of the prompt, and whether it is there.
func clawInheritedBlock(system string) (string, bool) {
	i := strings.Index(system, "## Inherited from Parent Session")
	if i < 0 {
		return "", false
	}
	return system[i:], true
}

// clawSessionReply asks heirloom's API about an OpenClaw session (scope main); ok=false while
// heirloom does not know it.
func clawSessionReply(base, key string) (proxy.SessionReply, bool) {
	return clawScopedSessionReply(base, clawScope, key)
}

// clawScopedSessionReply is clawSessionReply in scope: another agent's for a sub-agent spawned
// under its id.
func clawScopedSessionReply(base, scope, key string) (proxy.SessionReply, bool) {
	var reply proxy.SessionReply
	resp, err := http.Get(base + "/api/sessions/" + url.PathEscape(key) + "?scope=" + url.QueryEscape(scope))
	if err != nil {
		return reply, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&reply) != nil {
		return reply, false
	}
	return reply, true
}

// clawRunDone reports whether the run that spawned session key has finished.
func clawRunDone(base, key string) bool {
	reply, ok := clawSessionReply(base, key)
	return ok && reply.Run != nil && reply.Run.Status == kv.RunCompleted
}

// clawCompactions returns the compaction epoch heirloom holds for session key.
func clawCompactions(base, key string) int {
	reply, _ := clawSessionReply(base, key)
	return reply.Session.Compactions
}
