package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/codex"
	"github.com/heirloom-dev/heirloom/e2e/npmbin"
)

// codexHookEvents are the events `heirloom install codex` hooks, as config.toml and trust keys
// name them.
var codexHookEvents = [][2]string{
	{"SessionStart", "session_start"}, {"UserPromptSubmit", "user_prompt_submit"},
	{"PreToolUse", "pre_tool_use"}, {"PostToolUse", "post_tool_use"},
	{"SubagentStart", "subagent_start"}, {"SubagentStop", "subagent_stop"},
	{"PreCompact", "pre_compact"}, {"PostCompact", "post_compact"},
	{"Stop", "stop"}, {"SessionEnd", "session_end"},
}

// codexHook is an entry of `codex app-server`'s hooks/list reply.
type codexHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	TimeoutSec  int    `json:"timeoutSec"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
	Enabled     bool   `json:"enabled"`
}

// TestLiveCodexInstall installs heirloom with `heirloom install codex` into a private
// CODEX_HOME whose config.toml already holds a hook group of the user's, and asks the real
// Codex (`codex app-server`, JSON-RPC hooks/list) about it: every heirloom hook must be listed
// under the key install computed, with Codex's currentHash equal to the trusted_hash install
// recorded, and trusted, with no --dangerously-bypass-hook-trust; the user's hook too, and the
// MCP server must be read with no warning. Then a second user group, after heirloom's, is
// trusted, and `heirloom uninstall codex` must leave it trusted under its new index.
func TestLiveCodexInstall(t *testing.T) {
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	env := []string{"HOME=" + home, "CODEX_HOME=" + codexHome, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + home}
	bin := npmbin.Bin(t, "HEIRLOOM_CODEX_BIN", "codex", func(dir string) []string {
		return []string{"HOME=" + dir, "CODEX_HOME=" + filepath.Join(dir, ".codex"), "PATH=" + os.Getenv("PATH")}
	})
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(codexHome, "config.toml")
	keyFile := config
	if dir, err := filepath.EvalSymlinks(codexHome); err == nil { // macOS: /var is /private/var
		keyFile = filepath.Join(dir, "config.toml")
	}
	userHash := codex.TrustHash("stop", "", "echo mine", 600)
	user := "# the user's own\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"echo mine\"\n\n" +
		fmt.Sprintf("[hooks.state.%q]\ntrusted_hash = %q\n", keyFile+":stop:0:0", userHash)
	if err := os.WriteFile(config, []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}

	const hookCmd = "/opt/heirloom-test/heirloom-hook"
	var out bytes.Buffer
	ienv := adapters.InstallEnv{
		HookCommand: hookCmd,
		Getenv:      func(k string) string { return map[string]string{"HEIRLOOM_TOKEN": "secret"}[k] },
		Stdout:      &out,
		Stderr:      &out,
	}
	args := []string{"--codex-home", codexHome, "--url", "http://127.0.0.1:7433"}
	if err := (codex.Installer{}).Install(t.Context(), args, ienv); err != nil {
		t.Fatalf("install: %v\n%s", err, out.String())
	}
	t.Logf("install said:\n%s", out.String())

	hooks, mcp, warnings := codexHooks(t, bin, home, env)
	if mcp["url"] != "http://127.0.0.1:7433/mcp" || mcp["bearer_token_env_var"] != "HEIRLOOM_TOKEN" {
		t.Errorf("Codex reads heirloom's MCP server as %v", mcp)
	}
	recorded := trustedHashes(t, config)
	byKey := map[string]codexHook{}
	for _, h := range hooks {
		byKey[h.Key] = h
	}
	for _, ev := range codexHookEvents {
		index := 0
		if ev[0] == "Stop" {
			index = 1 // after the user's group
		}
		key := codex.TrustKey(keyFile, ev[1], index, 0)
		h, ok := byKey[key]
		switch {
		case !ok:
			t.Errorf("%s: Codex lists no hook %s; it lists %v", ev[0], key, keys(hooks))
		case h.Command != hookCmd+" codex" || recorded[key] == "" || h.CurrentHash != recorded[key] || h.TrustStatus != "trusted" || !h.Enabled:
			t.Errorf("%s: Codex lists %+v; recorded trusted_hash %q", ev[0], h, recorded[key])
		}
	}
	if h := byKey[keyFile+":stop:0:0"]; h.CurrentHash != userHash || h.TrustStatus != "trusted" {
		t.Errorf("the user's Stop hook: %+v, want hash %s, trusted", h, userHash)
	}
	for _, w := range warnings {
		if strings.Contains(w, "config.toml") {
			t.Errorf("Codex warns about the config: %s", w)
		}
	}

	// The user adds a group after heirloom's (index 2) and trusts it; uninstall moves it to 1.
	afterHash := codex.TrustHash("stop", "", "echo later", 600)
	f, err := os.OpenFile(config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"echo later\"\n\n[hooks.state.%q]\ntrusted_hash = %q\n", keyFile+":stop:2:0", afterHash)
	f.Close()
	out.Reset()
	if err := (codex.Installer{}).Uninstall(t.Context(), []string{"--codex-home", codexHome}, ienv); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out.String())
	}
	t.Logf("uninstall said:\n%s", out.String())
	hooks, mcp, _ = codexHooks(t, bin, home, env)
	if mcp != nil {
		t.Errorf("after uninstall Codex still reads heirloom's MCP server: %v", mcp)
	}
	if len(hooks) != 2 {
		t.Fatalf("after uninstall Codex lists %v, want the user's two Stop hooks", keys(hooks))
	}
	for i, want := range []struct{ cmd, hash string }{{"echo mine", userHash}, {"echo later", afterHash}} {
		h := hooks[i]
		if h.Key != codex.TrustKey(keyFile, "stop", i, 0) || h.Command != want.cmd || h.CurrentHash != want.hash || h.TrustStatus != "trusted" {
			t.Errorf("after uninstall, hook %d: %+v, want %s trusted at index %d", i, h, want.cmd, i)
		}
	}
}

// codexHooks runs `codex app-server` with env, asks it for the hooks of home (initialize, then
// hooks/list) and for its config (config/read), and returns the hooks listed, heirloom's MCP
// server as Codex read it (nil when none) and the config warnings it sent. It kills the
// process before returning.
func codexHooks(t *testing.T, bin, home string, env []string) ([]codexHook, map[string]any, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Env, cmd.Dir, cmd.WaitDelay = env, home, 5*time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = cmd.Wait()
	}()
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	var warnings []string
	call := func(id int, method string, params any) json.RawMessage {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Fatalf("%s: %v\n%s", method, err, stderr.String())
		}
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("%s: codex app-server closed its output\n%s", method, stderr.String())
				}
				var m struct {
					ID     *int            `json:"id"`
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if json.Unmarshal(line, &m) != nil {
					continue
				}
				if m.Method == "configWarning" {
					warnings = append(warnings, string(m.Params))
				}
				if m.ID == nil || *m.ID != id {
					continue
				}
				if m.Error != nil {
					t.Fatalf("%s: %s", method, m.Error)
				}
				return m.Result
			case <-ctx.Done():
				t.Fatalf("%s: no answer from codex app-server\n%s", method, stderr.String())
			}
		}
	}
	call(1, "initialize", map[string]any{"clientInfo": map[string]any{"name": "heirloom-e2e", "version": "1"}})
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct {
			Hooks  []codexHook      `json:"hooks"`
			Errors []map[string]any `json:"errors"`
		} `json:"data"`
	}
	if err := json.Unmarshal(call(2, "hooks/list", map[string]any{"cwds": []string{home}}), &list); err != nil || len(list.Data) != 1 {
		t.Fatalf("hooks/list: %v, %d entries", err, len(list.Data))
	}
	if len(list.Data[0].Errors) > 0 {
		t.Errorf("hooks/list errors: %v", list.Data[0].Errors)
	}
	var cfg struct {
		Config struct {
			MCPServers map[string]map[string]any `json:"mcp_servers"`
		} `json:"config"`
	}
	if err := json.Unmarshal(call(3, "config/read", map[string]any{}), &cfg); err != nil {
		t.Fatalf("config/read: %v", err)
	}
	return list.Data[0].Hooks, cfg.Config.MCPServers[codex.MCPServerName], warnings
}

// trustedHashes reads the trusted_hash of each [hooks.state] entry in a config.toml.
func trustedHashes(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Hooks struct {
			State map[string]struct {
				TrustedHash string `toml:"trusted_hash"`
			} `toml:"state"`
		} `toml:"hooks"`
	}
	if err := toml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string]string{}
	for k, v := range cfg.Hooks.State {
		out[k] = v.TrustedHash
	}
	return out
}

func keys(hooks []codexHook) []string {
	var out []string
	for _, h := range hooks {
		out = append(out, h.Key+" "+h.TrustStatus)
	}
	return out
}
