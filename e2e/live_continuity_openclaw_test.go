package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
	"github.com/heirloom-dev/heirloom/e2e/openclaw"
)

// TestLiveContinuityOpenClaw runs session continuity through the real OpenClaw Gateway with
// heirloom's plugin installed by `heirloom install openclaw` and a real `heirloom serve` following
// the Gateway, against the Go chat-completions stand-in. A top-level session states an objective
// and a constraint, is compacted with sessions.compact, and its next model request carries
// `[Objective Reinforcement]` with both in its system prompt. Then a new top-level session of the
// same workspace (so the same project) gets `## Recovered Session Checkpoint` with the objective
// on its first model request. Asserted on what reached the model.
func TestLiveContinuityOpenClaw(t *testing.T) {
	openclaw.Bin(t) // skip at once, saying why, when OpenClaw is absent
	m := ocMarker(t)
	contKey := "agent:main:cont-" + strings.ToLower(m)
	freshKey := "agent:main:fresh-" + strings.ToLower(m)
	objective := "OBJ-" + m
	constraint := "CONSTRAINT-" + m
	next := "NEXT-" + m

	api := chatapi.New(func(r chatapi.Request) chatapi.Reply {
		if openclaw.IsCompaction(r) {
			return chatapi.Text(openclaw.Summary("SUMMARY-" + m))
		}
		switch key := openclaw.SessionKey(r); key {
		case contKey, freshKey:
			return chatapi.Text("ACK-" + m)
		}
		return chatapi.Text("UNEXPECTED-" + m)
	})
	if err := api.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)

	stack := startClawStack(t, api, nil)
	hl := stack.HL
	op := stack.Op
	ctx := t.Context()
	// diag says what heirloom holds of a session, for failure messages.
	diag := func(key string) string {
		reply, ok := clawSessionReply(hl.URL, key)
		if !ok {
			return key + ": unknown to heirloom"
		}
		s := reply.Session
		row := "(no Gateway row)"
		if list, err := op.Sessions(ctx); err == nil {
			for _, r := range list {
				if r.Key == key {
					row = string(r.Raw)
				}
			}
		}
		return fmt.Sprintf("%s: project %q project_norm %q objective %q compactions %d; Gateway row %s", key, s.Project, s.ProjectNorm, s.Objective, s.Compactions, row)
	}

	for _, prompt := range []string{
		objective + ": port the parser to Go. You must never touch vendor/ (" + constraint + ").",
		"SECOND-" + m + ": start with the lexer.",
	} {
		if _, err := op.Agent(ctx, contKey, prompt); err != nil {
			t.Fatalf("%v\nrequests:\n%s", err, clawSmokeRequests(api.Requests()))
		}
	}
	if _, err := op.Compact(ctx, contKey); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "heirloom to see the compaction", func() bool { return clawCompactions(hl.URL, contKey) > 0 })
	if _, err := op.Agent(ctx, contKey, next+": go on."); err != nil {
		t.Fatal(err)
	}

	t.Run("ReinforcementAfterCompaction", func(t *testing.T) {
		reqs := api.Requests()
		var after []chatapi.Request
		for _, r := range clawSmokeTurnsOf(reqs, contKey) {
			if strings.Contains(openclaw.Prompt(r), next) {
				after = append(after, r)
			}
		}
		if len(after) == 0 {
			t.Fatalf("no model request of %s with %s\nrequests:\n%s", contKey, next, clawSmokeRequests(reqs))
		}
		for _, r := range after {
			system := clawSystemText(r)
			block, ok := clawBlockFrom(system, "[Objective Reinforcement]")
			if !ok {
				t.Errorf("request %d (%s) has no [Objective Reinforcement] in its system prompt; %s\n%.3000s", r.Seq, next, diag(contKey), system)
				continue
			}
			for _, want := range []string{objective, constraint} {
				if !strings.Contains(block, want) {
					t.Errorf("request %d's reinforcement lacks %s:\n%s", r.Seq, want, block)
				}
			}
		}
	})

	t.Run("RecoveredInNewSession", func(t *testing.T) {
		if _, err := op.Agent(ctx, freshKey, "FRESH-"+m+": what were we doing?"); err != nil {
			t.Fatal(err)
		}
		reqs := api.Requests()
		turns := clawSmokeTurnsOf(reqs, freshKey)
		if len(turns) == 0 {
			t.Fatalf("no model request of %s\nrequests:\n%s", freshKey, clawSmokeRequests(reqs))
		}
		system := clawSystemText(turns[0])
		block, ok := clawBlockFrom(system, "## Recovered Session Checkpoint")
		switch {
		case !ok:
			t.Errorf("%s's FIRST request has no recovered checkpoint in its system prompt\n%s\n%s\n%.3000s", freshKey, diag(contKey), diag(freshKey), system)
		case !strings.Contains(block, objective):
			t.Errorf("%s's recovered checkpoint lacks %s:\n%s", freshKey, objective, block)
		}
	})

	// /reset starts a new conversation under the key: its next prompt is the objective, and the
	// old conversation's objective and checkpoint no longer come back after it.
	t.Run("Reset", func(t *testing.T) {
		var out map[string]any
		if err := op.Call(ctx, "sessions.reset", map[string]any{"key": contKey, "reason": "reset"}, &out); err != nil {
			t.Fatalf("sessions.reset: %v", err)
		}
		waitFor(t, "heirloom to see the reset", func() bool {
			reply, ok := clawSessionReply(hl.URL, contKey)
			return ok && reply.Session.Objective == ""
		})
		fresh := "RESET-" + m + ": write the release notes."
		if _, err := op.Agent(ctx, contKey, fresh); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the new conversation's objective", func() bool {
			reply, ok := clawSessionReply(hl.URL, contKey)
			return ok && reply.Session.Objective == fresh
		})
		for _, r := range clawSmokeTurnsOf(api.Requests(), contKey) {
			if strings.Contains(openclaw.Prompt(r), "RESET-"+m) && strings.Contains(clawSystemText(r), objective) {
				t.Errorf("request %d after the reset still carries the old objective %s:\n%.2000s", r.Seq, objective, clawSystemText(r))
			}
		}
	})

	if !t.Failed() {
		return
	}
	// On failure, what heirloom's store holds, read after heirloom stopped: the checkpoints of the
	// compacted session, and whether heirloom knew the new session when its first call asked.
	hl.Stop(t)
	st := hl.Store(t)
	cps, err := st.Checkpoints(ctx, clawScope, contKey, 20)
	t.Logf("checkpoints of %s (%v):", contKey, err)
	for _, c := range cps {
		t.Logf("  %s trigger %s epoch %d project_norm %q objective %q", c.ID, c.Trigger, c.Epoch, c.ProjectNorm, c.Digest.Objective)
	}
	fresh, err := st.GetSession(ctx, clawScope, freshKey)
	t.Logf("%s: first_inject_done %v project_norm %q (%v)", freshKey, fresh.FirstInjectDone, fresh.ProjectNorm, err)
}

// clawBlockFrom returns a system prompt from heading on, and whether heading is there.
func clawBlockFrom(system, heading string) (string, bool) {
	i := strings.Index(system, heading)
	if i < 0 {
		return "", false
	}
	return system[i:], true
}
