package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"
)

// TestMCPCommand runs the real `heirloom mcp` over stdio against a real `heirloom serve`: the
// handshake, the tool list, and a search of a session recorded through the hook endpoint.
func TestMCPCommand(t *testing.T) {
	env := baseEnv(t)
	home := strings.TrimPrefix(env[0], "HOME=")
	transcript := filepath.Join(home, ".claude", "projects", "-src-app", sessionID+".jsonl")
	if err := os.MkdirAll(filepath.Dir(transcript), 0o755); err != nil {
		t.Fatal(err)
	}
	cct.AppendLines(t, transcript, cct.UserLine("u1", "Fix the flaky parseLedgerHeader test"))
	sc := startServe(t, t.TempDir(), env)
	hook := fmt.Sprintf(`{"session_id":%q,"transcript_path":%q,"cwd":"/src/app","hook_event_name":"UserPromptSubmit","prompt":"Fix the flaky parseLedgerHeader test"}`, sessionID, transcript)
	if status, body := postHook(t, sc.url, hook); status != 200 {
		t.Fatalf("hook: %d %s", status, body)
	}

	cmd := exec.Command(heirloomBin, "mcp")
	cmd.Env = append(env, "HEIRLOOM_URL="+sc.url)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })

	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	rpc := func(id int, method, params string) map[string]any {
		t.Helper()
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		for lines.Scan() {
			var msg map[string]any
			if err := json.Unmarshal(lines.Bytes(), &msg); err != nil {
				t.Fatalf("stdout line %q: %v", lines.Text(), err)
			}
			if msg["id"] == float64(id) {
				return msg
			}
		}
		t.Fatalf("%s: no reply (%v); stderr: %s", method, lines.Err(), stderr.String())
		return nil
	}
	init := rpc(1, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	if info, _ := init["result"].(map[string]any)["serverInfo"].(map[string]any); info["name"] != "heirloom" {
		t.Fatalf("initialize: %v", init)
	}
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	list := rpc(2, "tools/list", `{}`)
	if tools, _ := list["result"].(map[string]any)["tools"].([]any); len(tools) != 5 {
		t.Fatalf("tools/list: %v", list)
	}
	res := rpc(3, "tools/call", `{"name":"session_search","arguments":{"query":"parse_ledger_header"}}`)
	raw, _ := json.Marshal(res)
	if !strings.Contains(string(raw), "session "+sessionID) || !strings.Contains(string(raw), "**parseLedgerHeader**") {
		t.Errorf("search through heirloom mcp: %s", raw)
	}
	stdin.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("heirloom mcp exited with %v after stdin closed; stderr: %s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Error("heirloom mcp did not exit after stdin closed")
	}
}
