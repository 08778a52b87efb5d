// Command codexrecord records real Codex CLI hook streams, with the rollout files as they stood
// at each call, for heirloom's replay tests (e2e/testdata/codex). It runs the pinned `codex
// exec` offline against the Responses-API stand-in, with a hook of its own for every event
// that appends each call to hooks.jsonl and answers PROBE-<Event> as context, so the markers
// show where Codex put hook context in the rollouts (heirloom must never read them back).
//
//	go run ./e2e/cmd/codexrecord -codex e2e/npm/node_modules/.bin/codex -out e2e/testdata/codex
//
// Each scenario lands in OUT/<scenario>/: hooks.jsonl (one call a line: {"event", "payload",
// "sizes"}, sizes being every rollout's length in bytes when the call was made) and the
// rollouts under sessions/. The temporary home is written as /home/dev everywhere.
//
// Recording uses --dangerously-bypass-hook-trust, as the recorder's hook is no heirloom hook;
// the product's own hooks are trusted by `heirloom install codex`.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/heirloom-dev/heirloom/e2e/codex"
	"github.com/heirloom-dev/heirloom/e2e/responsesapi"
)

// recordedHome is what the temporary home becomes in the recordings.
const recordedHome = "/home/dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "hook" {
		os.Exit(hook(os.Args[2], os.Args[3]))
	}
	bin := flag.String("codex", "", "the codex binary")
	out := flag.String("out", "e2e/testdata/codex", "where the recordings go")
	only := flag.String("only", "", "record only this scenario")
	flag.Parse()
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	for _, sc := range scenarios {
		if *only != "" && sc.name != *only {
			continue
		}
		if err := record(*bin, self, filepath.Join(*out, sc.name), sc); err != nil {
			log.Fatalf("%s: %v", sc.name, err)
		}
		log.Printf("%s: recorded", sc.name)
	}
}

// call is one line of hooks.jsonl.
type call struct {
	Event   string           `json:"event"`
	Payload json.RawMessage  `json:"payload"`
	Sizes   map[string]int64 `json:"sizes"`
}

// hook is the recorder's hook: it appends the call to out with the rollouts' sizes under
// codexHome and answers PROBE-<Event> where Codex takes context.
func hook(out, codexHome string) int {
	body, _ := io.ReadAll(os.Stdin)
	var p struct {
		Event string `json:"hook_event_name"`
	}
	_ = json.Unmarshal(body, &p)
	c := call{Event: p.Event, Payload: json.RawMessage(bytes.TrimSpace(body)), Sizes: map[string]int64{}}
	rollouts, _ := codex.Rollouts(codexHome)
	for _, r := range rollouts {
		if fi, err := os.Stat(r); err == nil {
			rel, _ := filepath.Rel(codexHome, r)
			c.Sizes[rel] = fi.Size()
		}
	}
	line, _ := json.Marshal(c)
	f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		_, _ = f.Write(append(line, '\n')) // one write: parallel sub-agents' hooks append whole lines
		_ = f.Close()
	}
	switch p.Event {
	case "SessionStart", "UserPromptSubmit", "SubagentStart", "PreToolUse", "PostToolUse":
		fmt.Printf(`{"hookSpecificOutput":{"hookEventName":%q,"additionalContext":"PROBE-%s"}}`+"\n", p.Event, p.Event)
	default:
		fmt.Println("{}")
	}
	return 0
}

// scenario is one recording: codex runs (a resume continues the first run's session), the
// stand-in's script, and config.toml lines beside the provider.
type scenario struct {
	name   string
	extra  string
	runs   []step
	script func(r responsesapi.Request) responsesapi.Reply
}

type step struct {
	prompt string
	resume bool
	extra  string // more config for this run
}

var scenarios = []scenario{
	{
		name:  "nested",
		extra: "[agents]\nmax_depth = 2\n",
		runs:  []step{{prompt: "NESTED-ROOT: delegate the audit to a helper"}},
		script: byTask(map[string]func(responsesapi.Request) responsesapi.Reply{
			"NESTED-ROOT": spawnThenWait("ROOT-DONE", "CHILD-TASK: ask a helper to dig deeper"),
			"CHILD-TASK":  spawnThenWait("CHILD-RESULT", "GRAND-TASK: dig deeper"),
			"GRAND-TASK":  text("GRAND-RESULT"),
		}),
	},
	{
		name: "parallel",
		runs: []step{{prompt: "PARALLEL-ROOT: run two helpers at once"}},
		script: byTask(map[string]func(responsesapi.Request) responsesapi.Reply{
			"PARALLEL-ROOT": spawnThenWait("ROOT-DONE", "TASK-A: check the parser", "TASK-B: check the writer"),
			"TASK-A":        text("RESULT-A"),
			"TASK-B":        text("RESULT-B"),
		}),
	},
	{
		name: "compact-resumed",
		runs: []step{
			{prompt: "COMPACT-ROOT: keep the objective across compaction"},
			{prompt: "SECOND-PROMPT: go on", resume: true, extra: "model_auto_compact_token_limit = 3000\n"},
		},
		script: byTask(map[string]func(responsesapi.Request) responsesapi.Reply{
			"COMPACT-ROOT":  text("FIRST-ANSWER"),
			"SECOND-PROMPT": text("SECOND-ANSWER"),
		}),
	},
}

// byTask answers a request by the task its thread was started with: the first user message
// that is no Codex context, matched by prefix up to ':'. A compaction request gets a summary.
func byTask(byPrefix map[string]func(responsesapi.Request) responsesapi.Reply) func(responsesapi.Request) responsesapi.Reply {
	return func(r responsesapi.Request) responsesapi.Reply {
		if n := len(r.Input); n > 0 && strings.Contains(r.Input[n-1].Content.Text(), "CONTEXT CHECKPOINT COMPACTION") {
			return responsesapi.Text("SUMMARY: the work so far")
		}
		// The thread's current task: its last user message that Codex did not add itself.
		msgs := r.Messages()
		for i := len(msgs) - 1; i >= 0; i-- {
			m := msgs[i]
			if m.Role != "user" || strings.HasPrefix(m.Text, "<") || strings.HasPrefix(m.Text, "Another language model") {
				continue
			}
			key, _, _ := strings.Cut(m.Text, ":")
			if f := byPrefix[key]; f != nil {
				return f(r)
			}
		}
		return responsesapi.Text("unexpected request")
	}
}

func text(s string) func(responsesapi.Request) responsesapi.Reply {
	return func(responsesapi.Request) responsesapi.Reply { return responsesapi.Text(s) }
}

// spawnThenWait spawns one sub-agent per task (in one reply), then waits for them, then ends
// with done.
func spawnThenWait(done string, tasks ...string) func(responsesapi.Request) responsesapi.Reply {
	return func(r responsesapi.Request) responsesapi.Reply {
		outs := r.FunctionOutputs()
		spawned := false
		for _, it := range r.Input {
			spawned = spawned || it.Type == "function_call" && it.Name == responsesapi.SpawnTool
		}
		if len(outs) == 0 && spawned {
			// A turn the sub-agents' notifications started after the spawning turn ended.
			return responsesapi.Text(done)
		}
		if len(outs) == 0 {
			reply := responsesapi.Spawn(tasks[0])
			for _, t := range tasks[1:] {
				reply.More = append(reply.More, responsesapi.ToolCall{Name: responsesapi.SpawnTool, Input: map[string]any{"message": t}})
			}
			return reply
		}
		var ids []string
		for _, o := range outs {
			var s string
			_ = json.Unmarshal(o.Output, &s)
			var receipt struct {
				AgentID string `json:"agent_id"`
			}
			if json.Unmarshal([]byte(s), &receipt) == nil && receipt.AgentID != "" {
				ids = append(ids, receipt.AgentID)
			}
		}
		if len(ids) > 0 {
			return responsesapi.CallTool(responsesapi.WaitTool, map[string]any{"targets": ids, "timeout_ms": 60000})
		}
		if strings.Contains(string(outs[0].Output), "timed_out\\\":true") {
			return responsesapi.CallTool(responsesapi.WaitTool, map[string]any{"targets": []string{}, "timeout_ms": 60000})
		}
		return responsesapi.Text(done)
	}
}

// record runs one scenario into dir.
func record(bin, self, dir string, sc scenario) error {
	tmp, err := os.MkdirTemp("", "codexrec")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	home := filepath.Join(tmp, "home")
	codexHome, work := filepath.Join(home, ".codex"), filepath.Join(home, "src", "app")
	for _, d := range []string{codexHome, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	hooksFile := filepath.Join(tmp, "hooks.jsonl")
	srv := responsesapi.New(sc.script)
	if err := srv.Start(); err != nil {
		return err
	}
	defer srv.Close()
	var hooks strings.Builder
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact"} {
		fmt.Fprintf(&hooks, "[[hooks.%s]]\n[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = %q\n\n", ev, ev,
			fmt.Sprintf("%s hook %s %s", self, hooksFile, codexHome))
	}
	session := ""
	for _, st := range sc.runs {
		cfg := codex.ProviderConfig(srv.BaseURL(), st.extra+sc.extra) + "\n" + hooks.String()
		if err := codex.WriteConfig(codexHome, cfg); err != nil {
			return err
		}
		args := []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust"}
		if st.resume {
			args = append(args, "resume", session)
		}
		args = append(args, st.prompt)
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		env := codex.Env(home, codexHome, srv.URL())
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("codex %s: %v\n%s", st.prompt, err, out)
		}
		if session == "" {
			if i := bytes.Index(out, []byte("session id: ")); i >= 0 {
				session = strings.Fields(string(out[i+len("session id: "):]))[0]
			}
		}
	}
	for _, c := range srv.Calls() {
		log.Printf("%s: a request outside the model API: %s %s %s", sc.name, c.Method, c.Host, c.Path)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	rollouts, err := codex.Rollouts(codexHome)
	if err != nil {
		return err
	}
	originals := map[string][]byte{}
	for _, r := range rollouts {
		rel, _ := filepath.Rel(codexHome, r)
		if originals[rel], err = os.ReadFile(r); err != nil {
			return err
		}
	}
	if err := resize(hooksFile, originals, home); err != nil {
		return err
	}
	files := map[string]string{hooksFile: "hooks.jsonl"}
	for _, r := range rollouts {
		rel, _ := filepath.Rel(codexHome, r)
		files[r] = rel
	}
	for from, to := range files {
		b, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte(home), []byte(recordedHome))
		dst := filepath.Join(dir, to)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// resize rewrites the sizes recorded in hooksFile as they are once home is written as
// recordedHome in the rollouts (originals, by path relative to CODEX_HOME).
func resize(hooksFile string, originals map[string][]byte, home string) error {
	b, err := os.ReadFile(hooksFile)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var c call
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		for rel, size := range c.Sizes {
			orig := originals[rel]
			if int64(len(orig)) < size {
				return fmt.Errorf("%s: recorded size %d, file has %d", rel, size, len(orig))
			}
			c.Sizes[rel] = int64(len(bytes.ReplaceAll(orig[:size], []byte(home), []byte(recordedHome))))
		}
		line, err := json.Marshal(c)
		if err != nil {
			return err
		}
		out.Write(append(line, '\n'))
	}
	return os.WriteFile(hooksFile, out.Bytes(), 0o644)
}
