package e2e

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
	"github.com/heirloom-dev/heirloom/e2e/opencode"
	"github.com/heirloom-dev/heirloom/proxy"
)

// The live continuity test for OpenCode: the real `opencode serve` with heirloom's real plugin
// and a real `heirloom serve` following it, as in live_opencode_test.go, but with a stand-in
// that answers every request with text (no task calls, so no child sessions). A top-level
// session states an objective and a constraint, is compacted through OpenCode's own
// /session/{id}/summarize, and its next model request carries heirloom's objective
// reinforcement; a new top-level session in the same project starts with the checkpoint
// recovered from the first. Assertions read what reached the MODEL.

// The headings of heirloom's two continuity blocks, spelled out: the test checks what the model
// reads, not what the inject package calls it.
const (
	contObjectiveHeading = "[Objective Reinforcement]"
	contRecoveredHeading = "## Recovered Session Checkpoint"
)

// contSummary is the stand-in's answer to OpenCode's compaction request (and to any other side
// request): it names no marker, so a marker after the compaction can only come from heirloom.
const contSummary = "SUMMARY: the user asked for some work."

// contKeep starts what heirloom answers the plugin's purpose=compacting call with.
const contKeep = "Objective of this session (keep it in the summary): "

// newContinuityOCLive is newOCLive with a stand-in that only ever answers text: a turn's
// request gets "OK <session>", a side request (compaction summary, title) contSummary.
func newContinuityOCLive(t *testing.T) *ocLive {
	t.Helper()
	opencode.Bin(t)
	heirloomBin(t) // build before the clocks start
	l := &ocLive{hAddr: freeAddr(t), hData: filepath.Join(t.TempDir(), "data"), hHome: t.TempDir(), hLogs: &syncBuffer{}}
	l.API = chatapi.New(func(r chatapi.Request) chatapi.Reply {
		if r.IsSideRequest() {
			return chatapi.Text(contSummary)
		}
		return chatapi.Text("OK " + r.SessionID())
	})
	if err := l.API.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.API.Close)
	plugin, err := filepath.Abs(filepath.Join("..", "adapters", "opencode", "plugin", "heirloom.ts"))
	if err != nil {
		t.Fatal(err)
	}
	l.OCOpts = opencode.Options{
		ProviderURL: l.API.BaseURL(),
		Plugins:     []string{plugin},
		Env:         map[string]string{"HEIRLOOM_URL": "http://" + l.hAddr},
	}
	l.OC = opencode.Serve(t, t.Context(), l.OCOpts)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("heirloom's state:%s", l.stateSummary())
		}
		for _, p := range l.hProcs {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("heirloom serve output (%s, %d starts):\n%s", l.hAddr, len(l.hProcs), l.hLogs)
			t.Logf("model requests:%s", contRequestSummary(l.API.Requests()))
		}
	})
	l.startHeirloom(t)
	return l
}

// contBlock returns the block under heading in a request's system prompt: from the heading to
// the end of the system message holding it; "" when there is none.
func contBlock(r chatapi.Request, heading string) string {
	for _, m := range r.Messages {
		if m.Role != "system" {
			continue
		}
		text := m.Content.Text()
		if i := strings.Index(text, heading); i >= 0 {
			return text[i:]
		}
	}
	return ""
}

// contPrompt prompts session id with text and checks the turn ended with the stand-in's answer.
func contPrompt(t *testing.T, l *ocLive, id, text string) {
	t.Helper()
	start := time.Now()
	msg := l.OC.Prompt(t, t.Context(), id, text)
	t.Logf("timing: prompt %.40q of %s %v", text, id, time.Since(start).Round(time.Millisecond))
	if got, want := msg.Text(), "OK "+id; got != want {
		t.Fatalf("session %s answered %q, want %q", id, got, want)
	}
}

// contTurnWith returns the first of session id's turn requests whose last user text holds
// marker, failing t when none reached the model.
func contTurnWith(t *testing.T, l *ocLive, id, marker string) chatapi.Request {
	t.Helper()
	for _, r := range ocTurns(l.API.Requests())[id] {
		if strings.Contains(r.LastUserText(), marker) {
			return r
		}
	}
	t.Fatalf("no model request of session %s has %s in its last user message", id, marker)
	return chatapi.Request{}
}

// contTranscriptHas reports whether heirloom's transcript of session id has a turn holding text.
func contTranscriptHas(t *testing.T, l *ocLive, id, text string) bool {
	var tr proxy.TranscriptReply
	if _, err := l.api().Get(t.Context(), "/api/sessions/"+url.PathEscape(id)+"/transcript", url.Values{"limit": {"1000"}}, &tr); err != nil {
		return false
	}
	for _, turn := range tr.Turns {
		if strings.Contains(turn.Text, text) {
			return true
		}
	}
	return false
}

// contRequestSummary renders the stand-in's request log for a failure message: one line a
// request, with its session, which continuity blocks it carried, and its last user text.
func contRequestSummary(reqs []chatapi.Request) string {
	var b strings.Builder
	for _, r := range reqs {
		kind := "turn"
		if r.IsSideRequest() {
			kind = "side"
		}
		fmt.Fprintf(&b, "\n  #%d %s session=%s objective=%v recovered=%v last_user=%.80q",
			r.Seq, kind, r.SessionID(), contBlock(r, contObjectiveHeading) != "", contBlock(r, contRecoveredHeading) != "", r.LastUserText())
	}
	return b.String()
}

// TestLiveContinuityOpenCode: a top-level session states an objective and a constraint, is
// compacted through /session/{id}/summarize, and the model request of its next prompt carries
// "[Objective Reinforcement]" with both in its system prompt; a new top-level session in the
// same project gets "## Recovered Session Checkpoint" with the objective in its first model
// request's system prompt.
func TestLiveContinuityOpenCode(t *testing.T) {
	l := newContinuityOCLive(t)
	m := ocMarker(t)
	obj, constraint := "OBJ-"+m, "CONSTRAINT-"+m
	second, next, fresh := "SECOND-"+m, "NEXT-"+m, "FRESH-"+m

	// 1. The objective and the constraint, then a second prompt.
	first := l.newParent(t, "continuity first")
	contPrompt(t, l, first.ID, obj+": port the parser to Go. You must never touch vendor/ ("+constraint+").")
	contPrompt(t, l, first.ID, second+": start with the lexer.")
	for _, r := range ocTurns(l.API.Requests())[first.ID] {
		if b := contBlock(r, contObjectiveHeading); b != "" {
			t.Errorf("request #%d of %s carries %q before any compaction:\n%s", r.Seq, first.ID, contObjectiveHeading, b)
		}
		if b := contBlock(r, contRecoveredHeading); b != "" {
			t.Errorf("request #%d of %s carries %q with no checkpoint in the project yet:\n%s", r.Seq, first.ID, contRecoveredHeading, b)
		}
	}
	// The pre-compaction checkpoint reads what heirloom stored from OpenCode's stream: wait for it.
	took := l.waitSession(t, first.ID, "objective and second prompt stored", func(r proxy.SessionReply) bool {
		return strings.Contains(r.Session.Objective, obj) && contTranscriptHas(t, l, first.ID, second)
	})
	t.Logf("timing: heirloom had the objective and both prompts %v after the second turn", took.Round(time.Millisecond))

	// 2. Compaction, then the next prompt.
	before := len(l.API.Requests())
	start := time.Now()
	l.OC.Summarize(t, t.Context(), first.ID)
	t.Logf("timing: summarize %v", time.Since(start).Round(time.Millisecond))
	// The compaction request: the plugin's experimental.session.compacting asked heirloom with
	// purpose=compacting (which also wrote the pre-compaction checkpoint) and added the objective.
	var summaries int
	for _, r := range l.API.Requests()[before:] {
		t.Logf("request #%d after summarize: session %s, %d tools, last user text %.100q", r.Seq, r.SessionID(), len(r.Tools), r.LastUserText())
		if r.SessionID() != first.ID {
			continue
		}
		summaries++
		if all := r.AllText(); !strings.Contains(all, contKeep+obj) {
			t.Errorf("compaction request #%d lacks heirloom's %q with %s", r.Seq, contKeep, obj)
		}
	}
	if summaries != 1 {
		t.Fatalf("summarize of %s sent %d model requests, want the one compaction request", first.ID, summaries)
	}
	took = l.waitSession(t, first.ID, "compaction counted (session.compacted from the stream)", func(r proxy.SessionReply) bool {
		return r.Session.Compactions >= 1
	})
	t.Logf("timing: heirloom counted the compaction %v after summarize returned", took.Round(time.Millisecond))

	contPrompt(t, l, first.ID, next+": go on.")
	after := contTurnWith(t, l, first.ID, next)
	block := contBlock(after, contObjectiveHeading)
	if block == "" {
		t.Errorf("the request carrying %s (#%d) has no %q in its system prompt; system:\n%s", next, after.Seq, contObjectiveHeading, tailText(after.SystemText()))
	}
	t.Logf("objective reinforcement of request #%d:\n%s", after.Seq, block)
	for _, want := range []string{obj, constraint} {
		if block != "" && !strings.Contains(block, want) {
			t.Errorf("the objective reinforcement of request #%d lacks %s:\n%s", after.Seq, want, block)
		}
	}

	// 3. A new top-level session in the same project.
	other := l.newParent(t, "continuity second")
	if other.Directory != first.Directory {
		t.Fatalf("OpenCode put the new session in %q, the first in %q", other.Directory, first.Directory)
	}
	contPrompt(t, l, other.ID, fresh+": hello.")
	reqs := ocTurns(l.API.Requests())[other.ID]
	if len(reqs) == 0 {
		t.Fatalf("session %s: no model request", other.ID)
	}
	firstReq := reqs[0]
	recovered := contBlock(firstReq, contRecoveredHeading)
	if recovered == "" {
		a, _, errA := l.session(t.Context(), first.ID)
		b, _, errB := l.session(t.Context(), other.ID)
		t.Errorf("the first request of new session %s (#%d) has no %q in its system prompt (project of %s: %q norm %q %v; of %s: %q norm %q %v); system:\n%s",
			other.ID, firstReq.Seq, contRecoveredHeading,
			first.ID, a.Session.Project, a.Session.ProjectNorm, errA, other.ID, b.Session.Project, b.Session.ProjectNorm, errB,
			tailText(firstReq.SystemText()))
	} else if t.Logf("recovered checkpoint of request #%d:\n%s", firstReq.Seq, recovered); !strings.Contains(recovered, obj) {
		t.Errorf("the recovered checkpoint of new session %s (#%d) lacks %s:\n%s", other.ID, firstReq.Seq, obj, recovered)
	}
	if b := contBlock(firstReq, contObjectiveHeading); b != "" {
		t.Errorf("the first request of new session %s (#%d) carries %q, yet it was never compacted:\n%s", other.ID, firstReq.Seq, contObjectiveHeading, b)
	}
	ocAssertOffline(t, l.API)
}
