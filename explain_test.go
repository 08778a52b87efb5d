package main_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"
)

// TestExplainCommand: through the built binary, a Claude Code parent spawns a sub-agent via the
// real hook endpoint; `heirloom explain` on the sub-agent's short id shows the block it got at
// SubagentStart (via, parent, confirmed pairing, characters, the text with the parent's
// marker); on the parent, that it got none; --json is the API's reply.
func TestExplainCommand(t *testing.T) {
	tr := cct.NewTree(t, sessionID)
	env := append(baseEnv(t), "HEIRLOOM_ADAPTERS__CLAUDE_CODE__TRANSCRIPT_ROOTS="+tr.Root)
	s := startServe(t, filepath.Join(t.TempDir(), "data"), env)
	post := func(fields map[string]any) string {
		t.Helper()
		body, _ := json.Marshal(fields)
		resp, err := http.Post(s.url+"/hooks/claude-code", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var reply struct {
			HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&reply)
		return reply.HookSpecificOutput.AdditionalContext
	}
	cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "Port the lexer; EXPLAIN-MARK."), cct.AssistantLine("a1", "On it."))
	post(cct.Event(tr, sessionID, "UserPromptSubmit", map[string]any{"prompt": "Port the lexer; EXPLAIN-MARK."}))
	cct.AppendLines(t, tr.Transcript, cct.ToolUseLine("a2", "toolu_1", "Delegating"))
	post(cct.Spawn(tr, sessionID, "toolu_1", "general-purpose", "Check the tokenizer tables"))
	block := post(cct.Start(tr, sessionID, "a1ba2876fa63b44e9", "general-purpose"))
	if !strings.Contains(block, "EXPLAIN-MARK") {
		t.Fatalf("the sub-agent got no inherited block:\n%s", block)
	}
	cli := append(env, "HEIRLOOM_URL="+s.url)
	stdout, stderr, code := runCLI(t, cli, "explain", "49bc4f7b:a1ba2876")
	if code != 0 {
		t.Fatalf("explain: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"via subagent_start: inherited block, ", "from parent " + sessionID + ", paired confirmed",
		"│ ## Inherited from Parent Session", "EXPLAIN-MARK",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("explain lacks %q:\n%s", want, stdout)
		}
	}
	if stdout, _, _ := runCLI(t, cli, "explain", "--text=false", "49bc4f7b:a1ba2876"); strings.Contains(stdout, "EXPLAIN-MARK") || !strings.Contains(stdout, "via subagent_start") {
		t.Errorf("explain --text=false:\n%s", stdout)
	}
	if stdout, _, _ := runCLI(t, cli, "explain", sessionID); !strings.Contains(stdout, "heirloom gave it no context yet") {
		t.Errorf("explain of the parent:\n%s", stdout)
	}
	stdout, _, code = runCLI(t, cli, "explain", "--json", "49bc4f7b:a1ba2876")
	var reply struct {
		Blocks []struct {
			Via, Parent, Pairing, Text string
			Chars                      int
		}
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &reply) != nil || len(reply.Blocks) != 1 || reply.Blocks[0].Text != block || reply.Blocks[0].Pairing != "confirmed" {
		t.Errorf("explain --json: exit %d\n%s", code, stdout)
	}
}
