package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/codex"
	"github.com/heirloom-dev/heirloom/e2e/responsesapi"
	"github.com/heirloom-dev/heirloom/kv"
)

// codexLive is a private HOME whose CODEX_HOME/config.toml sends Codex's model requests to a
// stand-in and holds the hooks and MCP server `heirloom install codex` wrote (trusted by it,
// with no bypass flag), and a real `heirloom serve` reading rollouts from that CODEX_HOME.
type codexLive struct {
	Home, CodexHome, Dir string
	API                  *responsesapi.Server
	Serve                *serveProc
}

// newCodexLive starts the stand-in with script, heirloom with serveEnv added, writes the
// provider config (with extra TOML) and runs `heirloom install codex` into it.
func newCodexLive(t *testing.T, script func(responsesapi.Request) responsesapi.Reply, extra string, serveEnv ...string) *codexLive {
	t.Helper()
	return newCodexLiveAPI(t, script, extra, nil, serveEnv...)
}

// newCodexLiveAPI is newCodexLive with configure run on the stand-in before it starts.
func newCodexLiveAPI(t *testing.T, script func(responsesapi.Request) responsesapi.Reply, extra string, configure func(*responsesapi.Server), serveEnv ...string) *codexLive {
	t.Helper()
	codex.Bin(t)
	home := t.TempDir()
	l := &codexLive{Home: home, CodexHome: filepath.Join(home, ".codex"), Dir: filepath.Join(home, "src", "app")}
	l.API = responsesapi.New(script)
	if configure != nil {
		configure(l.API)
	}
	if err := l.API.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.API.Close)
	env := append([]string{"HEIRLOOM_ADAPTERS__CODEX__TRANSCRIPT_ROOTS=" + filepath.Join(l.CodexHome, "sessions")}, serveEnv...)
	l.Serve = startServe(t, serveOptions{Home: home, Env: env})
	if err := codex.WriteConfig(l.CodexHome, codex.ProviderConfig(l.API.BaseURL(), extra)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(heirloomBin(t), "install", "codex", "--codex-home", l.CodexHome, "--url", l.Serve.URL, "--command", hookBin(t)+" codex")
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("heirloom install codex: %v\n%s", err, out)
	}
	if err := mkdirAll(l.Dir); err != nil {
		t.Fatal(err)
	}
	return l
}

// run runs `codex exec` in this setup: the hooks find heirloom through HEIRLOOM_URL.
func (l *codexLive) run(t *testing.T, prompt, resume string, args ...string) codex.Result {
	t.Helper()
	res := codex.Run(t, t.Context(), codex.Options{
		Home: l.Home, CodexHome: l.CodexHome, Dir: l.Dir, BaseURL: l.API.URL(), Prompt: prompt, Resume: resume, Args: args,
		Env: map[string]string{"HEIRLOOM_URL": l.Serve.URL, "HEIRLOOM_HOOK_TIMEOUT": hookTimeout.String()},
	})
	if res.ExitCode != 0 || res.SessionID == "" {
		t.Fatalf("codex exec %q: exit %d, session %q\nstdout: %s\nstderr: %s\nheirloom:\n%s", prompt, res.ExitCode, res.SessionID, res.Stdout, lastBytes(res.Stderr), l.Serve.Logs())
	}
	if strings.Contains(res.Stderr, "hook: ") && strings.Contains(res.Stderr, " Failed") {
		t.Errorf("a hook failed in Codex's eyes:\n%s", lastBytes(res.Stderr))
	}
	return res
}

// codexThread is the thread a model request belongs to, from its x-codex-turn-metadata.
func codexThread(r responsesapi.Request) (thread, source string) {
	md := r.TurnMetadata()
	thread, _ = md["thread_id"].(string)
	source, _ = md["thread_source"].(string)
	return thread, source
}

// firstOfThread returns the first model request of thread id, nil when none came.
func firstOfThread(reqs []responsesapi.Request, id string) *responsesapi.Request {
	for i := range reqs {
		if t, _ := codexThread(reqs[i]); t == id {
			return &reqs[i]
		}
	}
	return nil
}

// codexTask answers by the thread's current task: its last user message Codex did not add.
func codexTask(r responsesapi.Request) string {
	msgs := r.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == "user" && !strings.HasPrefix(m.Text, "<") && !strings.HasPrefix(m.Text, "Another language model") {
			return m.Text
		}
	}
	return ""
}

// spawnedIDs returns the agent ids in the receipts among r's function outputs.
func spawnedIDs(r responsesapi.Request) []string {
	var ids []string
	for _, o := range r.FunctionOutputs() {
		var s string
		_ = json.Unmarshal(o.Output, &s)
		var receipt struct {
			AgentID string `json:"agent_id"`
		}
		if json.Unmarshal([]byte(s), &receipt) == nil && receipt.AgentID != "" {
			ids = append(ids, receipt.AgentID)
		}
	}
	return ids
}

// hasSpawned reports whether r's history holds a spawn_agent call already.
func hasSpawned(r responsesapi.Request) bool {
	return slices.ContainsFunc(r.Input, func(it responsesapi.Item) bool {
		return it.Type == "function_call" && it.Name == responsesapi.SpawnTool
	})
}

// delegate answers a thread that hands task to a sub-agent, waits for it, then says done.
func delegate(r responsesapi.Request, task, done string) responsesapi.Reply {
	if ids := spawnedIDs(r); len(ids) > 0 {
		return responsesapi.CallTool(responsesapi.WaitTool, map[string]any{"targets": ids, "timeout_ms": 60000})
	}
	if hasSpawned(r) {
		return responsesapi.Text(done)
	}
	return responsesapi.Spawn(task)
}

// TestLiveCodexNested runs the real Codex with the hooks `heirloom install codex` wrote, trusted
// by it: the root's prompt carries a marker and spawns a child, which spawns a grandchild
// (agents.max_depth = 2). What reaches the MODEL must show the child's first request carrying
// the inherited block with the root's marker, the grandchild's the child's objective, and no
// root request any block; /api/sessions must list each sub-agent under its parent, and the runs
// must hold what came back.
func TestLiveCodexNested(t *testing.T) {
	mp, mc, mg := newMarker(t), newMarker(t), newMarker(t)
	rootPrompt := "ROOT-" + mp + ": delegate the audit"
	childTask := "CHILD-" + mc + ": ask a helper to dig deeper"
	grandTask := "GRAND-" + mg + ": dig deeper"
	l := newCodexLive(t, func(r responsesapi.Request) responsesapi.Reply {
		switch task := codexTask(r); {
		case strings.HasPrefix(task, "GRAND-"):
			return responsesapi.Text("GRAND-RESULT-" + mg)
		case strings.HasPrefix(task, "CHILD-"):
			return delegate(r, grandTask, "CHILD-RESULT-"+mc)
		case strings.HasPrefix(task, "ROOT-"):
			return delegate(r, childTask, "ROOT-DONE-"+mp)
		}
		return responsesapi.Text("unexpected request")
	}, "[agents]\nmax_depth = 2\n")

	res := l.run(t, rootPrompt, "")
	logOutside(t, l.API)
	reqs := l.API.Requests()
	root := res.SessionID

	// The sub-agents' ids, from the rollouts Codex wrote: the truth the store is checked against.
	agents := map[string]string{} // task prefix → agent id
	parents := map[string]string{}
	rollouts, err := codex.Rollouts(l.CodexHome)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rollouts {
		id, parent := rolloutThread(t, p)
		if parent == "" {
			continue
		}
		parents[id] = parent
		if first := firstOfThread(reqs, id); first != nil {
			agents[strings.SplitN(codexTask(*first), "-", 2)[0]] = id
		}
	}
	child, grand := agents["CHILD"], agents["GRAND"]
	if child == "" || grand == "" || parents[child] != root || parents[grand] != child {
		t.Fatalf("Codex did not run root → child → grandchild: agents %v, parents %v (root %s)", agents, parents, root)
	}

	t.Run("Child", func(t *testing.T) {
		first := firstOfThread(reqs, child)
		block := codexInherited(first.DeveloperText())
		switch {
		case strings.Contains(childTask, mp):
			t.Fatalf("the child's task holds the root's marker; the test proves nothing")
		case block == "":
			t.Errorf("the child's first request has no %q in a developer message:\n%s", inheritedHeading, first.AllText())
		case !strings.Contains(block, mp):
			t.Errorf("the child's inherited block lacks the root's marker %s:\n%s", mp, block)
		case strings.Count(first.AllText(), inheritedHeading) != 1:
			t.Errorf("the child's first request carries the block %d times, want once", strings.Count(first.AllText(), inheritedHeading))
		}
	})
	t.Run("Grandchild", func(t *testing.T) {
		block := codexInherited(firstOfThread(reqs, grand).DeveloperText())
		if !strings.Contains(blockLine(block, "Objective: "), "CHILD-"+mc) {
			t.Errorf("the grandchild's block does not name the child's objective:\n%s", block)
		}
	})
	t.Run("RootRequests", func(t *testing.T) {
		for _, r := range reqs {
			if th, _ := codexThread(r); th == root && strings.Contains(r.AllText(), inheritedHeading) {
				t.Errorf("root request %d carries an inherited block; it has no parent", r.Seq)
			}
		}
	})
	t.Run("API", func(t *testing.T) {
		var list struct {
			Sessions []struct {
				ID       string `json:"id"`
				ParentID string `json:"parent_id"`
				Harness  string `json:"harness"`
				Depth    int    `json:"depth"`
			} `json:"sessions"`
		}
		resp, err := http.Get(l.Serve.URL + "/api/sessions?harness=codex")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range list.Sessions {
			got[s.ID] = s.ParentID
		}
		want := map[string]string{root: "", root + ":" + child: root, root + ":" + grand: root + ":" + child}
		for id, parent := range want {
			if p, ok := got[id]; !ok || p != parent {
				t.Errorf("/api/sessions: %s listed %v with parent %q, want parent %q", id, ok, p, parent)
			}
		}
	})
	t.Run("Store", func(t *testing.T) {
		st := readState(t, l.Serve.Store(t), nil)
		st.checkTurns(t)
		for _, c := range []struct{ id, parent, task, result string }{
			{root + ":" + child, root, childTask, "CHILD-RESULT-" + mc},
			{root + ":" + grand, root + ":" + child, grandTask, "GRAND-RESULT-" + mg},
		} {
			var run *kv.Run
			for i := range st.Runs {
				if st.Runs[i].ChildID == c.id {
					run = &st.Runs[i]
				}
			}
			switch {
			case run == nil:
				t.Errorf("no run holds sub-agent %s", c.id)
			case run.ParentID != c.parent || run.Prompt != c.task || run.Result != c.result || run.Status != kv.RunCompleted || run.Provisional:
				t.Errorf("run %s: parent %q prompt %q result %q status %s provisional %v, want %q %q %q completed exact",
					run.ID, run.ParentID, run.Prompt, run.Result, run.Status, run.Provisional, c.parent, c.task, c.result)
			}
		}
	})
}

// TestLiveCodexCompaction runs a session, then resumes it with a compaction threshold low
// enough that Codex compacts it on resuming: the resumed session's first model request after
// the compaction must carry the objective reinforcement with the first prompt's marker.
func TestLiveCodexCompaction(t *testing.T) {
	m := newMarker(t)
	objective := "OBJECTIVE-" + m + ": keep this across compaction"
	l := newCodexLive(t, func(r responsesapi.Request) responsesapi.Reply {
		if n := len(r.Input); n > 0 && strings.Contains(r.Input[n-1].Content.Text(), "CONTEXT CHECKPOINT COMPACTION") {
			return responsesapi.Text("SUMMARY: worked on it")
		}
		return responsesapi.Text("ANSWER to " + codexTask(r))
	}, "")
	first := l.run(t, objective, "")
	l.run(t, "SECOND: go on", first.SessionID, "-c", "model_auto_compact_token_limit=3000")
	logOutside(t, l.API)
	var after *responsesapi.Request
	compacted := false
	for i, r := range l.API.Requests() {
		if n := len(r.Input); n > 0 && strings.Contains(r.Input[n-1].Content.Text(), "CONTEXT CHECKPOINT COMPACTION") {
			compacted = true
			continue
		}
		if compacted && codexTask(r) == "SECOND: go on" {
			after = &l.API.Requests()[i]
			break
		}
	}
	if !compacted || after == nil {
		t.Fatalf("Codex did not compact before the second prompt (compacted %v)", compacted)
	}
	dev := after.DeveloperText()
	if !strings.Contains(dev, "[Objective Reinforcement]") || !strings.Contains(dev, objective) {
		t.Errorf("the first request after the compaction lacks the reinforcement with the objective; developer text:\n%s", dev)
	}
	if n := strings.Count(dev, "Objective: "+objective); n != 1 {
		t.Errorf("the objective is restated %d times in that request's developer messages, want once:\n%s", n, dev)
	}
}

// codexInherited returns the inherited block in developer text, "" when none.
func codexInherited(dev string) string {
	i := strings.Index(dev, inheritedHeading)
	if i < 0 {
		return ""
	}
	return dev[i:]
}

// rolloutThread reads a rollout's session_meta: the thread's id and its parent's ("" for a root).
func rolloutThread(t *testing.T, path string) (id, parent string) {
	t.Helper()
	b, err := readFirstLine(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Payload struct {
			ID     string `json:"id"`
			Parent string `json:"parent_thread_id"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rec.Payload.ID, rec.Payload.Parent
}

// logOutside logs what Codex asked of the stand-in outside the model API: update checks and
// the like, sent to it as a proxy and refused there, so they never leave the machine.
func logOutside(t *testing.T, api *responsesapi.Server) {
	t.Helper()
	for _, c := range api.Calls() {
		t.Logf("stand-in also got (refused): %s %s %s", c.Method, c.Host, c.Path)
	}
}

func mkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

func readFirstLine(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return b, nil
}

// lastBytes returns the last 4 KiB of s.
func lastBytes(s string) string {
	if len(s) > 4096 {
		return "…" + s[len(s)-4096:]
	}
	return s
}

// TestLiveCodexMCP: a first Codex session states a fact; a second one's model calls
// session_search on heirloom's MCP server, which `heirloom install codex` registered. What
// reaches the second session's next model request must be the hit: the first session's prompt
// with the fact marked.
func TestLiveCodexMCP(t *testing.T) {
	fact := newMarker(t)
	var tool string // the namespace and name Codex offers session_search under
	l := newCodexLive(t, func(r responsesapi.Request) responsesapi.Reply {
		switch task := codexTask(r); {
		case strings.HasPrefix(task, "SESSION-A"):
			return responsesapi.Text("A-DONE")
		case strings.HasPrefix(task, "SESSION-B"):
			if len(r.FunctionOutputs()) > 0 {
				return responsesapi.Text("B-DONE")
			}
			if tool = mcpTool(r.Tools, "session_search"); tool == "" {
				return responsesapi.Text("NO-TOOL")
			}
			return responsesapi.CallTool(tool, map[string]any{"query": fact})
		}
		return responsesapi.Text("unexpected request")
	}, "")
	a := l.run(t, "SESSION-A: the rollout codename is "+fact+".", "")
	l.run(t, "SESSION-B: what is the rollout codename?", "")
	logOutside(t, l.API)
	var answered *responsesapi.Request
	for i, r := range l.API.Requests() {
		if strings.HasPrefix(codexTask(r), "SESSION-B") && len(r.FunctionOutputs()) > 0 {
			answered = &l.API.Requests()[i]
		}
	}
	if tool == "" || answered == nil {
		t.Fatalf("session B was offered no session_search tool (%q) or got no result; tools of its first request:\n%s", tool, l.API.Requests()[len(l.API.Requests())-1].Tools)
	}
	text := string(answered.FunctionOutputs()[0].Output)
	t.Logf("what reached session B's model from %s:\n%s", tool, text)
	if !strings.Contains(text, "**"+fact+"**") || !strings.Contains(text, a.SessionID) {
		t.Errorf("the search result that reached the model lacks session A (%s) and its fact %s marked:\n%s", a.SessionID, fact, text)
	}

	// Session B's rollout holds the call and its result, which heirloom stored as B's turns but
	// keeps out of the index: a search for the fact still finds session A alone.
	var hits struct {
		Hits []struct {
			Session string `json:"session"`
		} `json:"hits"`
	}
	resp, err := http.Post(l.Serve.URL+"/api/sessions/search", "application/json", strings.NewReader(`{"query":"`+fact+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&hits); err != nil {
		t.Fatal(err)
	}
	if len(hits.Hits) != 1 || hits.Hits[0].Session != a.SessionID {
		t.Errorf("a search for the fact found %+v, want session A (%s) alone: session B's copy of the result is heirloom's own traffic", hits.Hits, a.SessionID)
	}
}

// mcpTool finds the function named name among a request's tools, inside a namespace or not,
// and returns how a reply calls it: "namespace::name", or the bare name.
func mcpTool(tools json.RawMessage, name string) string {
	var list []struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(tools, &list)
	for _, t := range list {
		if strings.HasSuffix(t.Name, name) && t.Type == "function" {
			return t.Name
		}
		for _, f := range t.Tools {
			if f.Name == name || strings.HasSuffix(f.Name, name) {
				return t.Name + responsesapi.NamespaceSep + f.Name
			}
		}
	}
	return ""
}

// TestLiveCodexSpawnLimit runs the nested scenario with spawn.max_depth = 1: the child's own
// spawn_agent is refused through its PreToolUse. What reaches the child's model must be the
// refusal as the tool's output, no grandchild may start, and the run must be recorded refused.
func TestLiveCodexSpawnLimit(t *testing.T) {
	mc := newMarker(t)
	l := newCodexLive(t, func(r responsesapi.Request) responsesapi.Reply {
		switch task := codexTask(r); {
		case strings.HasPrefix(task, "GRAND-"):
			return responsesapi.Text("GRAND-RAN")
		case strings.HasPrefix(task, "CHILD-"):
			if len(r.FunctionOutputs()) > 0 || hasSpawned(r) {
				return responsesapi.Text("CHILD-RESULT-" + mc)
			}
			return responsesapi.Spawn("GRAND-" + mc + ": too deep")
		case strings.HasPrefix(task, "ROOT-"):
			return delegate(r, "CHILD-"+mc+": try a helper", "ROOT-DONE")
		}
		return responsesapi.Text("unexpected request")
	}, "[agents]\nmax_depth = 2\n", "HEIRLOOM_SPAWN__MAX_DEPTH=1")
	res := l.run(t, "ROOT-"+mc+": delegate", "")
	logOutside(t, l.API)
	var refused string
	for _, r := range l.API.Requests() {
		if strings.HasPrefix(codexTask(r), "GRAND-") {
			t.Errorf("the grandchild ran (request %d): the refusal did not hold", r.Seq)
		}
		if strings.HasPrefix(codexTask(r), "CHILD-") {
			for _, o := range r.FunctionOutputs() {
				refused += string(o.Output)
			}
		}
	}
	if !strings.Contains(refused, "heirloom refused this sub-agent") {
		t.Errorf("the child's model did not see heirloom's refusal; its tool output: %q", refused)
	}
	st := readState(t, l.Serve.Store(t), nil)
	var got []string
	for _, r := range st.Runs {
		got = append(got, r.Status)
		if strings.HasPrefix(r.Prompt, "GRAND-") && r.Status != kv.RunRefused {
			t.Errorf("the grandchild's run: status %s, want refused", r.Status)
		}
	}
	if len(st.Runs) != 2 || len(st.Sessions) != 2 {
		t.Errorf("runs %v and sessions %q of root %s, want the child's (completed) and the grandchild's (refused), 2 sessions", got, st.sessionIDs(), res.SessionID)
	}
}

// TestLiveCodexSubagentCompaction: the stand-in reports a huge context for a sub-agent's first
// request, so Codex compacts the sub-agent, which gets no SessionStart of its own. Its objective
// (its task) must come back to its model with its next tool call, once; the root, which never
// compacted, gets no reinforcement.
func TestLiveCodexSubagentCompaction(t *testing.T) {
	m := newMarker(t)
	task := "CHILD-" + m + ": do a step"
	l := newCodexLiveAPI(t, func(r responsesapi.Request) responsesapi.Reply {
		if n := len(r.Input); n > 0 && strings.Contains(r.Input[n-1].Content.Text(), "CONTEXT CHECKPOINT COMPACTION") {
			return responsesapi.Text("SUMMARY: worked on it")
		}
		switch t := codexTask(r); {
		case strings.HasPrefix(t, "CHILD-"):
			if len(r.FunctionOutputs()) == 0 {
				return responsesapi.CallTool("exec_command", map[string]any{"cmd": "echo STEP-DONE"})
			}
			return responsesapi.Text("CHILD-RESULT")
		case strings.HasPrefix(t, "ROOT-"):
			return delegate(r, task, "ROOT-DONE")
		}
		return responsesapi.Text("unexpected request")
	}, "model_auto_compact_token_limit = 20000\n", func(a *responsesapi.Server) {
		var once sync.Once
		a.InputTokens = func(r responsesapi.Request) int {
			big := false
			if _, src := codexThread(r); src == "subagent" {
				once.Do(func() { big = true }) // the sub-agent's first reply reports a full context
			}
			if big {
				return 50000
			}
			return 1000
		}
	})
	res := l.run(t, "ROOT-"+m+": delegate", "")
	logOutside(t, l.API)
	compacted, reinforced := false, 0
	for _, r := range l.API.Requests() {
		th, src := codexThread(r)
		if n := len(r.Input); n > 0 && strings.Contains(r.Input[n-1].Content.Text(), "CONTEXT CHECKPOINT COMPACTION") {
			compacted = compacted || src == "subagent"
			continue
		}
		has := strings.Contains(r.DeveloperText(), "[Objective Reinforcement]")
		switch {
		case th == res.SessionID && has:
			t.Errorf("root request %d carries a reinforcement; the root never compacted", r.Seq)
		case src == "subagent" && has:
			reinforced++
			if !strings.Contains(r.DeveloperText(), "Objective: "+task) {
				t.Errorf("the sub-agent's reinforcement lacks its task %q:\n%s", task, r.DeveloperText())
			}
		}
	}
	if !compacted {
		t.Fatalf("Codex did not compact the sub-agent")
	}
	if reinforced == 0 {
		t.Errorf("no request of the sub-agent after its compaction carried [Objective Reinforcement]")
	}
	st := readState(t, l.Serve.Store(t), nil)
	for _, s := range st.Sessions {
		want := 0
		if s.ParentID != "" {
			want = 1
		}
		if s.Compactions != want || s.ReinforcedEpoch != want {
			t.Errorf("session %s: compactions %d, reinforced epoch %d, want %d and %d", s.ID, s.Compactions, s.ReinforcedEpoch, want, want)
		}
	}
}
