package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/claude"
	"github.com/heirloom-dev/heirloom/e2e/messagesapi"
)

// proxyUpstreamScript is an existing command hook, the kind heirloom's proxy mode wraps: it reads
// the hook JSON on stdin, logs the event name to calls.log beside itself, and replies with
// additionalContext "UPSTREAM-<marker>-<event>" for SubagentStart and UserPromptSubmit, "{}" for
// the rest. Run as `hook.sh MARKER block` it blocks UserPromptSubmit instead: a reason on stderr
// and exit code 2. Plain sh, tr and sed: it needs no jq or node.
const proxyUpstreamScript = `#!/bin/sh
in=$(cat)
event=$(printf '%s' "$in" | tr -d '\n' | sed -n 's/.*"hook_event_name" *: *"\([A-Za-z]*\)".*/\1/p')
printf '%s\n' "${event:-?}" >> "$(dirname "$0")/calls.log"
case "$event" in
UserPromptSubmit|SubagentStart)
	if [ "$2" = block ] && [ "$event" = UserPromptSubmit ]; then
		printf 'UPSTREAM-BLOCKED-%s: prompts are closed today\n' "$1" >&2
		exit 2
	fi
	printf '{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"UPSTREAM-%s-%s"}}\n' "$event" "$1" "$event"
	;;
*)
	printf '{}\n'
	;;
esac
`

// proxyUpstream is proxyUpstreamScript written to a temp dir.
type proxyUpstream struct{ dir string }

func newProxyUpstream(t *testing.T) *proxyUpstream {
	t.Helper()
	u := &proxyUpstream{dir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(u.dir, "hook.sh"), []byte(proxyUpstreamScript), 0o755); err != nil {
		t.Fatal(err)
	}
	return u
}

// settings returns a settings.json object whose hook for every live event is heirloom's shim
// wrapping the upstream script: `heirloom hook claude-code -- …/hook.sh ARGS`.
func (u *proxyUpstream) settings(t *testing.T, args ...string) map[string]any {
	t.Helper()
	command := shimCommand(t) + " -- " + proxyShellQuote(filepath.Join(u.dir, "hook.sh"))
	for _, a := range args {
		command += " " + proxyShellQuote(a)
	}
	commands := map[string]string{}
	for _, e := range liveHookEvents {
		commands[e] = command
	}
	return map[string]any{"hooks": claude.CommandHooks(commands)}
}

// calls returns the events the upstream script was run for, in order.
func (u *proxyUpstream) calls(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(u.dir, "calls.log"))
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// proxyShellQuote quotes s for /bin/sh.
func proxyShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TestLiveProxy runs the real Claude Code with every hook set to heirloom's shim wrapping an
// existing command hook (proxy mode) and a real `heirloom serve`. What reaches the MODEL must
// carry both: the sub-agent's first request heirloom's inherited block and then the upstream's
// SubagentStart context, the parent's turn the upstream's UserPromptSubmit context. A wrapped
// hook that blocks the prompt (exit 2) must block it: the model never sees the prompt.
func TestLiveProxy(t *testing.T) {
	live := newLiveSetup(t)

	t.Run("Merge", func(t *testing.T) {
		up := newProxyUpstream(t)
		m, mc := newMarker(t), newMarker(t)
		parentPrompt := "delegate this " + m
		childTask := "CHILD-TASK-" + mc + ": find the answer."
		api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
			switch {
			case r.IsSideRequest():
				return messagesapi.Text("side")
			case r.IsSubagent():
				return messagesapi.Text("CHILD-RESULT-" + mc)
			case len(r.ToolResults()) == 0:
				return spawn("toolu_e2eproxy"+strings.ToLower(mc), "child task", childTask)
			default:
				return messagesapi.Text("PARENT-DONE-" + m)
			}
		})
		opts := live.options(api, parentPrompt)
		opts.Settings = up.settings(t, m)
		res := claude.Run(t, t.Context(), opts)
		if res.ExitCode != 0 || res.Text != "PARENT-DONE-"+m {
			t.Fatalf("exit %d, result %q, want 0 and PARENT-DONE-%s\nstdout: %s\nstderr: %s\nheirloom:\n%s", res.ExitCode, res.Text, m, res.Stdout, res.Stderr, live.Serve.Logs())
		}
		assertOffline(t, api)

		// The wrapped hook ran for every event, as it would have without heirloom in front.
		want := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "SubagentStart", "SubagentStop", "PostToolUse", "Stop", "SessionEnd"}
		if got := up.calls(t); !slices.Equal(got, want) {
			t.Errorf("the wrapped hook ran for\n %v\nwant\n %v", got, want)
		}

		reqs := agentTurns(api.Requests())
		upPrompt, upStart := "UPSTREAM-"+m+"-UserPromptSubmit", "UPSTREAM-"+m+"-SubagentStart"

		t.Run("SubagentStart", func(t *testing.T) {
			child := firstRequest(reqs, "CHILD-TASK-"+mc)
			if child == nil {
				t.Fatal("no request of the sub-agent reached the model")
			}
			if strings.Contains(child.FirstUserText(), m) {
				t.Fatalf("the child's task prompt itself holds the parent's marker; the test proves nothing")
			}
			all := child.AllText()
			block := inheritedBlock(all)
			switch {
			case block == "" && strings.Contains(all, inheritedHeading):
				t.Fatalf("heirloom's %q does not open the SubagentStart hook context; its text:\n%s", inheritedHeading, all)
			case block == "":
				t.Fatalf("the sub-agent's first request has no %q; its text:\n%s", inheritedHeading, all)
			}
			if !strings.Contains(block, m) {
				t.Errorf("the inherited block lacks the parent's marker %s:\n%s", m, block)
			}
			// One hook reply, one context: heirloom's block, a blank line, the upstream's text.
			if n := strings.Count(all, upStart); n != 1 {
				t.Errorf("the sub-agent's first request carries the upstream's %s %d times, want once; its text:\n%s", upStart, n, all)
			} else if !strings.Contains(all, subagentStartContext+block+"\n\n"+upStart) {
				t.Errorf("want %q, heirloom's block, a blank line, then %s; its text:\n%s", subagentStartContext, upStart, all)
			}
			if strings.Contains(all, upPrompt) {
				t.Errorf("the sub-agent's first request carries the parent's UserPromptSubmit context %s", upPrompt)
			}
		})

		t.Run("UserPromptSubmit", func(t *testing.T) {
			var parent []messagesapi.Request
			for _, r := range reqs {
				if !r.IsSubagent() {
					parent = append(parent, r)
				}
			}
			if len(parent) != 2 {
				t.Fatalf("got %d parent requests, want 2 (spawn, then the final reply)", len(parent))
			}
			all := parent[0].AllText()
			// heirloom adds nothing at UserPromptSubmit here, so the upstream's reply passes
			// through as it was.
			if !strings.Contains(all, userPromptSubmitContext+upPrompt) {
				t.Errorf("the parent's first request lacks %q; its text:\n%s", userPromptSubmitContext+upPrompt, all)
			}
			if n := strings.Count(all, upPrompt); n != 1 {
				t.Errorf("the parent's first request carries %s %d times, want once", upPrompt, n)
			}
			for _, r := range parent {
				if strings.Contains(r.AllText(), upStart) || strings.Contains(r.AllText(), inheritedHeading) {
					t.Errorf("parent request %d carries the sub-agent's SubagentStart context", r.Seq)
				}
			}
		})
	})

	// A wrapped hook that exits 2 on UserPromptSubmit blocks the prompt. Claude Code 2.1.197 then
	// sends no model request, fires no Stop, and reports the block as a successful result
	// (exit 0, is_error false, num_turns 0) whose text is "UserPromptSubmit operation blocked by
	// hook:\n[<command line>]: <stderr>", then the original prompt.
	t.Run("Block", func(t *testing.T) {
		up := newProxyUpstream(t)
		m := newMarker(t)
		api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
			return messagesapi.Text("ANSWERED-" + m)
		})
		opts := live.options(api, "never answer this "+m)
		opts.Settings = up.settings(t, m, "block")
		res := claude.Run(t, t.Context(), opts)
		t.Logf("blocked run: exit %d, is_error %v, num_turns %d, result %q", res.ExitCode, res.IsError, res.NumTurns, res.Text)
		assertOffline(t, api)

		for _, r := range api.Requests() {
			t.Errorf("request %d reached the model after the prompt was blocked:\n%s", r.Seq, r.AllText())
		}
		if strings.Contains(res.Stdout, "ANSWERED-"+m) || res.NumTurns != 0 {
			t.Errorf("the blocked prompt got an answer (num_turns %d): %s", res.NumTurns, res.Stdout)
		}
		reason := "UPSTREAM-BLOCKED-" + m + ": prompts are closed today"
		if !strings.HasPrefix(res.Text, "UserPromptSubmit operation blocked by hook") || !strings.Contains(res.Text, reason) {
			t.Errorf("result %q, want Claude Code's block report with the wrapped hook's reason %q\nstdout: %s\nstderr: %s", res.Text, reason, res.Stdout, res.Stderr)
		}
		if strings.Contains(res.Text, "heirloom: ") {
			t.Errorf("the block's stderr carries a warning from heirloom's shim: %q", res.Text)
		}
		want := []string{"SessionStart", "UserPromptSubmit", "SessionEnd"}
		if got := up.calls(t); !slices.Equal(got, want) {
			t.Errorf("the wrapped hook ran for %v, want %v", got, want)
		}
	})
}

// userPromptSubmitContext is how Claude Code 2.1.197 introduces a UserPromptSubmit hook's
// additionalContext in the system-role message after the prompt.
const userPromptSubmitContext = "UserPromptSubmit hook additional context: "
