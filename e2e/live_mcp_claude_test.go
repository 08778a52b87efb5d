package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/claude"
	"github.com/heirloom-dev/heirloom/e2e/messagesapi"
)

// mcpSearchTool is session_search as Claude Code names the tool of the MCP server heirloom's
// installer registers ("heirloom").
const mcpSearchTool = "mcp__heirloom__session_search"

// mcpWait bounds each wait of one session's model turn for the other's.
const mcpWait = 90 * time.Second

// TestLiveMCPClaude runs two real Claude Code sessions at once with heirloom's MCP server
// registered by the real `heirloom install claude-code`. Session A states a fact in its prompt
// and spawns a sub-agent, whose model turn is held open: A is still running. Session B's model
// then calls session_search for the fact; what must reach B's next model request is the hit, a
// snippet of A's prompt with the fact marked.
func TestLiveMCPClaude(t *testing.T) {
	live := newLiveSetup(t)
	install := exec.Command(heirloomBin(t), "install", "claude-code", "--settings", filepath.Join(t.TempDir(), "unused-settings.json"))
	install.Env = []string{"HOME=" + live.Home, "PATH=" + os.Getenv("PATH"), "HEIRLOOM_URL=" + live.Serve.URL}
	if out, err := install.CombinedOutput(); err != nil || !strings.Contains(string(out), "Registered heirloom's MCP server") {
		t.Fatalf("heirloom install claude-code: %v\n%s", err, out)
	}

	fact := newMarker(t)
	aPrompt := "SESSION-A: the rollout codename is " + fact + ". Ask a helper to check the rollout."
	aTask := "A-CHILD-TASK: check the rollout."
	aChildStarted, bSearched := make(chan struct{}), make(chan struct{})
	var childOnce, searchedOnce onceCloser

	api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
		first := r.FirstUserText()
		switch {
		case r.IsSideRequest():
			return messagesapi.Text("side")
		case r.IsSubagent() && strings.Contains(first, aTask):
			childOnce.close(aChildStarted)
			select { // A stays running until B has searched
			case <-bSearched:
			case <-time.After(mcpWait):
			}
			return messagesapi.Text("A-CHILD-RESULT")
		case strings.Contains(first, "SESSION-A"):
			if len(r.ToolResults()) == 0 {
				return spawn("toolu_mcpachild", "check the rollout", aTask)
			}
			return messagesapi.Text("A-DONE")
		case strings.Contains(first, "SESSION-B"):
			if len(r.ToolResults()) == 0 {
				select {
				case <-aChildStarted:
				case <-time.After(mcpWait):
				}
				return messagesapi.ToolUse(mcpSearchTool, map[string]any{"query": fact})
			}
			searchedOnce.close(bSearched)
			return messagesapi.Text("B-DONE")
		}
		return messagesapi.Text("unexpected request")
	})

	opts := []claude.Options{live.options(api, aPrompt), live.options(api, "SESSION-B: what is the rollout codename the other session uses?")}
	opts[1].Settings = nil                                     // both share the HOME's settings.json, written by the first
	opts[1].Args = []string{"--allowedTools=" + mcpSearchTool} // one word: the flag takes a list
	res := claude.RunConcurrently(t, t.Context(), opts...)
	for i, r := range res {
		if r.ExitCode != 0 {
			t.Fatalf("session %c: exit %d, result %q\nstdout: %s\nstderr: %s\nheirloom:\n%s", 'A'+i, r.ExitCode, r.Text, r.Stdout, r.Stderr, live.Serve.Logs())
		}
	}
	if res[1].Text != "B-DONE" {
		t.Fatalf("session B ended with %q, want B-DONE", res[1].Text)
	}
	assertOffline(t, api)

	var offered, answered *messagesapi.Request
	reqs := agentTurns(api.Requests())
	for i, r := range reqs {
		if !strings.Contains(r.FirstUserText(), "SESSION-B") {
			continue
		}
		if len(r.ToolResults()) == 0 && offered == nil {
			offered = &reqs[i]
		} else if len(r.ToolResults()) > 0 {
			answered = &reqs[i]
		}
	}
	if offered == nil || !offered.HasTool(mcpSearchTool) {
		t.Fatalf("session B's first request does not offer %s: Claude Code did not load heirloom's MCP server", mcpSearchTool)
	}
	if answered == nil {
		t.Fatal("no request of session B carries the search's tool result")
	}
	result := answered.ToolResults()[0]
	text := result.PartText()
	t.Logf("what reached session B's model from session_search:\n%s", text)
	if result.IsError || !strings.Contains(text, "**"+fact+"**") || !strings.Contains(text, "the rollout codename is") || !strings.Contains(text, res[0].SessionID) {
		t.Errorf("the search result that reached the model (error %v) lacks session A (%s) and its fact %s marked:\n%s", result.IsError, res[0].SessionID, fact, text)
	}
}

// onceCloser closes a channel once, however many goroutines ask.
type onceCloser struct{ once sync.Once }

func (o *onceCloser) close(ch chan struct{}) { o.once.Do(func() { close(ch) }) }
