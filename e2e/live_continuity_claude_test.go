package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/claude"
	"github.com/heirloom-dev/heirloom/e2e/messagesapi"
	"github.com/heirloom-dev/heirloom/inject"
)

// continuityRunTimeout bounds each `claude -p` run of TestLiveContinuityClaude.
const continuityRunTimeout = 60 * time.Second

// step runs one `claude -p` of a multi-step test (resuming session resume unless it is ""),
// logs it, and fails t unless it exits cleanly.
func (live *liveSetup) step(t *testing.T, api *messagesapi.Server, name, resume, prompt string) claude.Result {
	t.Helper()
	o := live.options(api, prompt)
	o.Resume, o.Timeout = resume, continuityRunTimeout
	begin := time.Now()
	res := claude.Run(t, t.Context(), o)
	t.Logf("%s: exit %d in %s, result %q", name, res.ExitCode, res.Duration.Round(time.Millisecond), res.Text)
	if res.ExitCode != 0 || res.IsError {
		t.Fatalf("%s: exit %d, is_error %v, result %q after %s\nstdout: %s\nstderr: %s\nheirloom:\n%s", name, res.ExitCode, res.IsError, res.Text, time.Since(begin), res.Stdout, res.Stderr, live.Serve.Logs())
	}
	return res
}

// TestLiveContinuityClaude runs the real Claude Code with the real heirloom through a
// compaction and a new session in the same project, and asserts on what reached the MODEL:
//
//  1. A session states an objective and a constraint in its first prompt and has a second turn,
//     so that it can be compacted.
//  2. `claude -p --resume ID "/compact"` (PreCompact writes a pre_compaction checkpoint;
//     SessionStart(compact) answers with the reinforcement), then `--resume ID "NEXT-<m>"`: the
//     first model request after the compaction, the one holding NEXT-<m>, carries
//     "[Objective Reinforcement]" with the objective and the constraint.
//  3. A new session (no --resume) in the same project: its first model request carries
//     "## Recovered Session Checkpoint" with the first session's objective.
//
// The stand-in's compaction summary and replies never repeat the markers, and after the
// compaction the request holds the summary instead of the earlier prompts, so a marker there
// comes from heirloom. Each block is read on its own (blockFrom): the `--resume` run also gets
// this session's own "## Recovered Session Checkpoint" (SessionStart resume), which holds the
// same objective and must not stand in for the reinforcement.
func TestLiveContinuityClaude(t *testing.T) {
	live := newLiveSetup(t)
	m, mn := newMarker(t), newMarker(t)
	objective := "OBJ-" + m + ": port the parser to Go."
	constraint := "CONSTRAINT-" + m
	first := objective + " You must never touch vendor/ (" + constraint + ")."
	second := "SECOND-" + m + ": start with the lexer."
	next := "NEXT-" + m
	fresh := "FRESH-" + mn + ": carry on with the port."

	api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
		switch {
		case r.IsSideRequest():
			return messagesapi.Text("side")
		case r.IsCompaction():
			return messagesapi.Text("<analysis>The user asked for some work.</analysis>\n<summary>1. Primary Request and Intent: some work was requested; details were discussed.</summary>")
		default:
			return messagesapi.Text("done")
		}
	})

	start := time.Now()
	run := func(step, resume, prompt string) claude.Result {
		t.Helper()
		return live.step(t, api, step, resume, prompt)
	}

	res := run("first prompt", "", first)
	id := res.SessionID
	if id == "" {
		t.Fatalf("no session id in the first run's output: %s", res.Stdout)
	}
	run("second prompt", id, second)
	compacted := run("compact", id, "/compact")
	if strings.Contains(compacted.Stdout+compacted.Text, "Not enough messages") {
		t.Fatalf("claude refused to compact: %s", compacted.Stdout)
	}
	run("prompt after compaction", id, next)
	newRes := run("new session", "", fresh)
	if newRes.SessionID == "" || newRes.SessionID == id {
		t.Fatalf("the new session's id is %q; want a new one (first session %s)", newRes.SessionID, id)
	}
	t.Logf("five runs in %s", time.Since(start).Round(time.Millisecond))
	assertOffline(t, api)

	reqs := agentTurns(api.Requests())
	compactions := 0
	for _, r := range reqs {
		if r.IsCompaction() {
			compactions++
		}
	}
	if compactions == 0 {
		t.Fatalf("no compaction request reached the model (%d agent requests); /compact did not summarise", len(reqs))
	}

	// 2. The first request after compaction: the one whose last user message holds NEXT-<m>.
	t.Run("Reinforcement", func(t *testing.T) {
		i := slices.IndexFunc(reqs, func(r messagesapi.Request) bool {
			return !r.IsCompaction() && strings.Contains(r.LastUserText(), next)
		})
		if i < 0 {
			t.Fatalf("no model request holds %s", next)
		}
		if i == 0 || !reqs[i-1].IsCompaction() {
			t.Errorf("the request holding %s (seq %d) does not directly follow the compaction request", next, reqs[i].Seq)
		}
		r := reqs[i]
		block := blockFrom(r, inject.ObjectiveHeading, inject.RecoveredHeading)
		if block == "" {
			t.Fatalf("the first request after compaction has no %q; its text:\n%s\nheirloom:\n%s", inject.ObjectiveHeading, r.AllText(), live.Serve.Logs())
		}
		t.Logf("reinforcement that reached the model:\n%s", block)
		if obj := blockLine(block, "Objective: "); !strings.Contains(obj, "OBJ-"+m) {
			t.Errorf("the reinforcement's objective is %q, want OBJ-%s:\n%s", obj, m, block)
		}
		// The objective (the first prompt) holds the constraint too: look for it in the
		// checkpoint digest, the lines after the objective.
		if _, digest, _ := strings.Cut(block, "\nObjective: "+first+"\n"); !strings.Contains(digest, constraint) {
			t.Errorf("the reinforcement's checkpoint lacks the constraint %s:\n%s", constraint, block)
		}
	})

	// 3. The new session's first request carries the checkpoint of the first one.
	t.Run("Recovery", func(t *testing.T) {
		r := firstWith(reqs, func(r messagesapi.Request) bool { return strings.Contains(r.LastUserText(), "FRESH-"+mn) })
		if r == nil {
			t.Fatalf("no model request holds FRESH-%s", mn)
		}
		if !strings.Contains(r.FirstUserText(), "FRESH-"+mn) {
			t.Errorf("the first request holding FRESH-%s is not the new session's first turn", mn)
		}
		block := blockFrom(*r, inject.RecoveredHeading, inject.ObjectiveHeading)
		if block == "" {
			t.Fatalf("the new session's first request has no %q; its text:\n%s\nheirloom:\n%s", inject.RecoveredHeading, r.AllText(), live.Serve.Logs())
		}
		t.Logf("recovered checkpoint that reached the model:\n%s", block)
		if obj := blockLine(block, "Objective: "); !strings.Contains(obj, "OBJ-"+m) {
			t.Errorf("the recovered checkpoint's objective is %q, want the first session's OBJ-%s:\n%s", obj, m, block)
		}
		if !strings.Contains(block, id) {
			t.Errorf("the recovered checkpoint does not name the first session %s:\n%s", id, block)
		}
	})
}

// firstWith returns the first request in reqs for which ok holds, or nil.
func firstWith(reqs []messagesapi.Request, ok func(messagesapi.Request) bool) *messagesapi.Request {
	for i := range reqs {
		if ok(reqs[i]) {
			return &reqs[i]
		}
	}
	return nil
}

// claudeTrailers are texts Claude Code 2.1.197 appends, after a blank line, to the system-role
// message that carries a SessionStart hook's context.
var claudeTrailers = []string{"\n\nAvailable agent types for the Agent tool:", "\n\nThe following skills are available"}

// blockFrom returns heirloom's block that opens with heading in r's system prompt or messages:
// the text from heading to the end of the text block holding it, cut before stop (Claude Code
// joins the contexts of one event's hooks into one block) and before Claude Code's own
// trailers; "" when no text block holds heading.
func blockFrom(r messagesapi.Request, heading, stop string) string {
	all := []messagesapi.Blocks{r.System}
	for _, msg := range r.Messages {
		all = append(all, msg.Content)
	}
	for _, blocks := range all {
		for _, b := range blocks {
			if b.Type != "text" {
				continue
			}
			_, after, ok := strings.Cut(b.Text, heading)
			if !ok {
				continue
			}
			for _, end := range append([]string{stop}, claudeTrailers...) {
				if i := strings.Index(after, end); i >= 0 {
					after = after[:i]
				}
			}
			return heading + after
		}
	}
	return ""
}
