package e2e

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/claude"
	"github.com/heirloom-dev/heirloom/e2e/messagesapi"
)

// TestClaudeSmoke proves the live technique against the real Claude Code
// binary: it runs offline against the loopback stand-in, a scripted Agent
// tool call spawns a real sub-agent, and a SubagentStart hook's
// additionalContext reaches that sub-agent's first model request.
func TestClaudeSmoke(t *testing.T) {
	claude.Bin(t) // skip the whole test at once when claude is absent

	t.Run("Prompt", func(t *testing.T) {
		marker := newMarker(t)
		api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
			return messagesapi.Text("REPLY-" + marker)
		})

		res := claude.Run(t, t.Context(), claude.Options{BaseURL: api.URL(), Prompt: "say hi " + marker})

		if res.ExitCode != 0 {
			t.Fatalf("exit code %d, want 0\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		if !strings.Contains(res.Stdout, "REPLY-"+marker) || res.Text != "REPLY-"+marker {
			t.Errorf("stdout %q (result %q), want the stand-in's reply REPLY-%s", res.Stdout, res.Text, marker)
		}
		reqs := agentTurns(api.Requests())
		if len(reqs) != 1 {
			t.Fatalf("got %d agent requests, want 1", len(reqs))
		}
		if got := reqs[0].LastUserText(); !strings.Contains(got, marker) {
			t.Errorf("last user text %q, want it to contain %s", got, marker)
		}
		if !reqs[0].Stream {
			t.Error("request not streamed, want stream:true")
		}
		if reqs[0].IsSubagent() {
			t.Error("top-level request reports IsSubagent")
		}
		if _, err := os.Stat(res.Transcript); err != nil {
			t.Errorf("transcript: %v", err)
		}
		assertOffline(t, api)
	})

	t.Run("SubagentStartContext", func(t *testing.T) {
		marker := newMarker(t)
		inherit := "INHERIT-" + marker
		hooks := claude.NewHookRecorder(t, map[string]string{
			"SubagentStart": fmt.Sprintf(`{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":%q}}`, inherit),
		})
		events := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "SubagentStart", "SubagentStop", "PostToolUse", "Stop", "SessionEnd"}
		api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
			switch {
			case r.IsSideRequest():
				return messagesapi.Text("side")
			case r.IsSubagent():
				return messagesapi.Text("CHILD-RESULT-" + marker)
			case len(r.ToolResults()) == 0:
				return messagesapi.SpawnAgent("child task", "CHILD-TASK-"+marker+": find the answer.", "general-purpose")
			default:
				return messagesapi.Text("PARENT-DONE-" + marker)
			}
		})

		res := claude.Run(t, t.Context(), claude.Options{
			BaseURL:  api.URL(),
			Prompt:   "delegate this " + marker,
			Settings: hooks.Settings(events...),
		})

		if res.ExitCode != 0 || res.Text != "PARENT-DONE-"+marker {
			t.Fatalf("exit %d, result %q, want 0 and PARENT-DONE-%s\nstdout: %s\nstderr: %s", res.ExitCode, res.Text, marker, res.Stdout, res.Stderr)
		}

		// What reached the model.
		var child, parent []messagesapi.Request
		for _, r := range agentTurns(api.Requests()) {
			if r.IsSubagent() {
				child = append(child, r)
			} else {
				parent = append(parent, r)
			}
		}
		if len(child) != 1 || len(parent) != 2 {
			t.Fatalf("got %d sub-agent and %d parent requests, want 1 and 2", len(child), len(parent))
		}
		if got := child[0].AllText(); !strings.Contains(got, inherit) {
			t.Errorf("sub-agent's first request lacks %s; its text:\n%s", inherit, got)
		}
		if got := child[0].FirstUserText(); !strings.Contains(got, "CHILD-TASK-"+marker) {
			t.Errorf("sub-agent's first user text %q, want the task prompt", got)
		}
		for _, r := range parent {
			if strings.Contains(r.AllText(), inherit) {
				t.Errorf("parent request %d carries %s, want it only in the sub-agent's", r.Seq, inherit)
			}
		}
		if got := parent[1].ToolResults(); len(got) != 1 || !strings.Contains(got[0].Content.Text(), "CHILD-RESULT-"+marker) {
			t.Errorf("parent follow-up tool results %+v, want the sub-agent's result", got)
		}

		// What the hooks saw.
		calls := hooks.Calls(t)
		got := claude.Events(calls)
		t.Logf("hook order: %s", strings.Join(got, " → "))
		if !slices.Equal(got, events) {
			t.Errorf("hook order\n got %v\nwant %v", got, events)
		}
		i := slices.IndexFunc(calls, func(c claude.HookCall) bool { return c.Event == "SubagentStart" })
		if i < 0 {
			t.Fatal("no SubagentStart call recorded")
		}
		start := calls[i]
		if s := start.Field("session_id"); s != res.SessionID {
			t.Errorf("SubagentStart session_id %q, want the parent's %q", s, res.SessionID)
		}
		if s := start.Field("agent_type"); s != "general-purpose" {
			t.Errorf("SubagentStart agent_type %q, want general-purpose", s)
		}
		agentID := start.Field("agent_id")
		if agentID == "" {
			t.Errorf("SubagentStart payload has no agent_id: %s", start.Payload)
		}
		if _, err := os.Stat(filepath.Join(res.SubagentsDir(), "agent-"+agentID+".jsonl")); err != nil {
			t.Errorf("sub-agent transcript: %v", err)
		}
		assertOffline(t, api)
	})
}

// startStandin starts a Messages API stand-in closed at the end of the test.
func startStandin(tb testing.TB, script func(messagesapi.Request) messagesapi.Reply) *messagesapi.Server {
	tb.Helper()
	s := messagesapi.New(script)
	if err := s.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// agentTurns drops Claude Code's side requests (title generation and the
// like), keeping the requests of the agents themselves.
func agentTurns(reqs []messagesapi.Request) []messagesapi.Request {
	return slices.DeleteFunc(reqs, messagesapi.Request.IsSideRequest)
}

// assertOffline fails tb when Claude Code tried to reach a host other than
// the stand-in: with the proxy variables claude.Env sets, such an attempt
// lands in the stand-in's log as a CONNECT (or an absolute-URL request).
func assertOffline(tb testing.TB, api *messagesapi.Server) {
	tb.Helper()
	for _, c := range api.Calls() {
		tb.Logf("stand-in also got: %s %s %s?%s → %d", c.Method, c.Host, c.Path, c.RawQuery, c.Status)
		if c.Method == http.MethodConnect || !strings.HasPrefix(c.Host, "127.0.0.1:") {
			tb.Errorf("claude tried to reach %s (%s %s): it must stay on loopback", c.Host, c.Method, c.Path)
		}
	}
}

// newMarker returns a random token that tells this test's text apart.
func newMarker(tb testing.TB) string {
	tb.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	return strings.ToUpper(fmt.Sprintf("M%x", b))
}
