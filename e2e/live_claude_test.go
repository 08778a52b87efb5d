package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/claude"
	"github.com/heirloom-dev/heirloom/e2e/messagesapi"
	"github.com/heirloom-dev/heirloom/kv"
)

// liveHookEvents are the Claude Code events heirloom's shim is installed for in the live tests.
var liveHookEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "SubagentStart", "SubagentStop", "PreCompact", "Stop", "SessionEnd"}

// liveSetup is a private HOME whose settings.json runs the real `heirloom hook claude-code` for
// every event, a project directory, and a real `heirloom serve` reading transcripts from that
// HOME's .claude/projects.
type liveSetup struct {
	Home, Dir string
	Serve     *serveProc
	Settings  map[string]any
	Env       map[string]string // the hooks find the sidecar through it
}

// newLiveSetup skips t when claude is absent (fails it under HEIRLOOM_E2E_REQUIRE), then starts
// heirloom, with serveEnv (KEY=VALUE) added to its environment.
func newLiveSetup(t *testing.T, serveEnv ...string) *liveSetup {
	t.Helper()
	claude.Bin(t)
	home, dir := t.TempDir(), t.TempDir()
	serve := startServe(t, serveOptions{Home: home, TranscriptRoots: []string{filepath.Join(home, ".claude", "projects")}, Env: serveEnv})
	commands := map[string]string{}
	for _, e := range liveHookEvents {
		commands[e] = shimCommand(t)
	}
	return &liveSetup{
		Home: home, Dir: dir, Serve: serve,
		Settings: map[string]any{"hooks": claude.CommandHooks(commands)},
		Env:      map[string]string{"HEIRLOOM_URL": serve.URL, "HEIRLOOM_HOOK_TIMEOUT": hookTimeout.String()},
	}
}

// options returns claude.Options for one run in this setup.
func (s *liveSetup) options(api *messagesapi.Server, prompt string) claude.Options {
	return claude.Options{BaseURL: api.URL(), Home: s.Home, Dir: s.Dir, Prompt: prompt, Settings: s.Settings, Env: s.Env}
}

// spawn returns a reply that spawns a general-purpose sub-agent through a tool call with a
// known id, so the test can look its run up in the store.
func spawn(id, description, prompt string) messagesapi.Reply {
	r := messagesapi.SpawnAgent(description, prompt, "general-purpose")
	r.Tool.ID = id
	return r
}

// TestLiveNested runs the real Claude Code with the real heirloom: the parent's prompt carries a
// marker and spawns a child; the child spawns a grandchild. What reaches the MODEL must show
// that the child inherited the parent's context and the grandchild the child's, and the store
// must hold the lineage and the completed runs.
//
// Claude Code 2.1.197 writes transcripts asynchronously: at SubagentStart the parent's file (the
// child's own, for the grandchild) may not hold the spawning turn yet. heirloom waits, boundedly,
// for that turn, so the tail is checked too.
func TestLiveNested(t *testing.T) {
	live := newLiveSetup(t)
	mp, mc, mg := newMarker(t), newMarker(t), newMarker(t)
	parentPrompt := "delegate this " + mp
	childTask := "CHILD-TASK-" + mc + ": ask a helper, then report."
	grandTask := "GRAND-TASK-" + mg + ": dig deeper."
	childRun, grandRun := "toolu_e2echild"+strings.ToLower(mc), "toolu_e2egrand"+strings.ToLower(mg)

	api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
		first := r.FirstUserText()
		switch {
		case r.IsSideRequest():
			return messagesapi.Text("side")
		case r.IsSubagent() && strings.Contains(first, "GRAND-TASK-"+mg):
			return messagesapi.Text("GRAND-RESULT-" + mg)
		case r.IsSubagent() && strings.Contains(first, "CHILD-TASK-"+mc):
			if len(r.ToolResults()) == 0 {
				return spawn(grandRun, "grandchild task", grandTask)
			}
			return messagesapi.Text("CHILD-RESULT-" + mc)
		case r.IsSubagent():
			return messagesapi.Text("unexpected sub-agent")
		case len(r.ToolResults()) == 0:
			return spawn(childRun, "child task", childTask)
		default:
			return messagesapi.Text("PARENT-DONE-" + mp)
		}
	})

	res := claude.Run(t, t.Context(), live.options(api, parentPrompt))
	if res.ExitCode != 0 || res.Text != "PARENT-DONE-"+mp {
		t.Fatalf("exit %d, result %q, want 0 and PARENT-DONE-%s\nstdout: %s\nstderr: %s\nheirloom:\n%s", res.ExitCode, res.Text, mp, res.Stdout, res.Stderr, live.Serve.Logs())
	}
	assertOffline(t, api)
	reqs := agentTurns(api.Requests())
	child := firstRequest(reqs, "CHILD-TASK-"+mc)
	grand := firstRequest(reqs, "GRAND-TASK-"+mg)
	if child == nil || grand == nil {
		t.Fatalf("no first request of the child (%v) or of the grandchild (%v) reached the model", child != nil, grand != nil)
	}

	// a. The child's first model request carries the inherited block with the parent's marker.
	t.Run("Child", func(t *testing.T) {
		if strings.Contains(child.FirstUserText(), mp) {
			t.Fatalf("the child's task prompt itself holds the parent's marker; the test proves nothing")
		}
		block := inheritedBlock(child.AllText())
		switch {
		case block == "":
			t.Errorf("the child's first request has no %q from SubagentStart; its text:\n%s", inheritedHeading, child.AllText())
		case !strings.Contains(block, mp):
			t.Errorf("the child's inherited block lacks the parent's marker %s:\n%s", mp, block)
		case !strings.Contains(section(block, "### Recent transcript"), "[user] "+parentPrompt):
			t.Errorf("the child's inherited block has no transcript tail with the parent's prompt:\n%s", block)
		}
	})

	// c. The grandchild's first model request carries the block inherited from the child: the
	// child's objective, not the top-level session's.
	t.Run("Grandchild", func(t *testing.T) {
		if strings.Contains(grand.FirstUserText(), mc) {
			t.Fatalf("the grandchild's task prompt itself holds the child's marker; the test proves nothing")
		}
		block := inheritedBlock(grand.AllText())
		if block == "" {
			t.Fatalf("the grandchild's first request has no %q; its text:\n%s", inheritedHeading, grand.AllText())
		}
		objective := blockLine(block, "Objective: ")
		if !strings.Contains(objective, "CHILD-TASK-"+mc) {
			t.Errorf("the grandchild's block names objective %q, want the child's (CHILD-TASK-%s):\n%s", objective, mc, block)
		}
		if !strings.Contains(section(block, "### Recent transcript"), "CHILD-TASK-"+mc) {
			t.Errorf("the grandchild's block has no transcript tail from the child:\n%s", block)
		}
	})

	t.Run("ParentRequests", func(t *testing.T) {
		for _, r := range reqs {
			if !r.IsSubagent() && strings.Contains(r.AllText(), inheritedHeading) {
				t.Errorf("top-level request %d carries an inherited block; it has no parent", r.Seq)
			}
		}
	})

	t.Run("Store", func(t *testing.T) {
		agents := metaAgents(t, res)
		root := res.SessionID
		childID, grandID := root+":"+agents[childRun], root+":"+agents[grandRun]
		st := readState(t, live.Serve.Store(t), nil)
		st.checkTurns(t)
		checkSession(t, st, root, "", 0, "delegate this "+mp)
		checkSession(t, st, childID, root, 1, childTask)
		checkSession(t, st, grandID, childID, 2, grandTask)
		checkRun(t, st, childRun, root, root, childID, "CHILD-RESULT-"+mc)
		checkRun(t, st, grandRun, root, childID, grandID, "GRAND-RESULT-"+mg)
		if len(st.Sessions) != 3 || len(st.Runs) != 2 {
			t.Errorf("got sessions %q and %d runs, want 3 sessions and 2 runs", st.sessionIDs(), len(st.Runs))
		}
	})
}

// TestLiveTwoParents runs two top-level sessions at once in one project, each with its own
// marker and each spawning a child: each child must inherit its own parent's context and never
// the other's.
func TestLiveTwoParents(t *testing.T) {
	live := newLiveSetup(t)
	type parent struct{ marker, childMarker, run string }
	ps := []parent{}
	for range 2 {
		m, c := newMarker(t), newMarker(t)
		ps = append(ps, parent{marker: m, childMarker: c, run: "toolu_e2echild" + strings.ToLower(c)})
	}
	// Hold each parent's first model request until both have arrived, so both sessions are
	// live, with their transcripts in the same project folder, when the children start.
	var (
		mu       sync.Mutex
		arrived  int
		together = make(chan struct{})
	)
	waitForBoth := func() {
		mu.Lock()
		if arrived++; arrived == 2 {
			close(together)
		}
		mu.Unlock()
		select {
		case <-together:
		case <-time.After(60 * time.Second):
		}
	}
	api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
		if r.IsSideRequest() {
			return messagesapi.Text("side")
		}
		for _, p := range ps {
			switch {
			case r.IsSubagent() && strings.Contains(r.FirstUserText(), "CHILD-TASK-"+p.childMarker):
				return messagesapi.Text("CHILD-RESULT-" + p.childMarker)
			case !r.IsSubagent() && strings.Contains(r.FirstUserText(), p.marker) && len(r.ToolResults()) == 0:
				waitForBoth()
				return spawn(p.run, "child task", "CHILD-TASK-"+p.childMarker+": find the answer.")
			case !r.IsSubagent() && strings.Contains(r.FirstUserText(), p.marker):
				return messagesapi.Text("PARENT-DONE-" + p.marker)
			}
		}
		return messagesapi.Text("unexpected request")
	})

	results := claude.RunConcurrently(t, t.Context(), live.options(api, "work on "+ps[0].marker), live.options(api, "work on "+ps[1].marker))
	for i, res := range results {
		if res.ExitCode != 0 || res.Text != "PARENT-DONE-"+ps[i].marker {
			t.Fatalf("parent %d: exit %d, result %q, want 0 and PARENT-DONE-%s\nstdout: %s\nstderr: %s\nheirloom:\n%s", i, res.ExitCode, res.Text, ps[i].marker, res.Stdout, res.Stderr, live.Serve.Logs())
		}
	}
	select {
	case <-together:
	default:
		t.Fatal("the two parents never had a model request in flight at the same time")
	}
	if results[0].SessionID == results[1].SessionID || filepath.Dir(results[0].Transcript) != filepath.Dir(results[1].Transcript) {
		t.Fatalf("want two sessions in one project folder, got %s and %s", results[0].Transcript, results[1].Transcript)
	}
	assertOffline(t, api)

	reqs := agentTurns(api.Requests())
	for i, p := range ps {
		other := ps[1-i]
		child := firstRequest(reqs, "CHILD-TASK-"+p.childMarker)
		if child == nil {
			t.Errorf("child of parent %d: no request reached the model", i)
			continue
		}
		all := child.AllText()
		block := inheritedBlock(all)
		switch {
		case block == "":
			t.Errorf("child of parent %d: first request has no %q; its text:\n%s", i, inheritedHeading, all)
		case !strings.Contains(block, p.marker):
			t.Errorf("child of parent %d: inherited block lacks its parent's marker %s:\n%s", i, p.marker, block)
		}
		if strings.Contains(all, other.marker) || strings.Contains(all, other.childMarker) {
			t.Errorf("child of parent %d: first request carries the OTHER parent's context (%s):\n%s", i, other.marker, all)
		}
	}

	st := readState(t, live.Serve.Store(t), nil)
	st.checkTurns(t)
	for i, res := range results {
		p := ps[i]
		agents := metaAgents(t, res)
		childID := res.SessionID + ":" + agents[p.run]
		checkSession(t, st, res.SessionID, "", 0, "work on "+p.marker)
		checkSession(t, st, childID, res.SessionID, 1, "CHILD-TASK-"+p.childMarker+": find the answer.")
		checkRun(t, st, p.run, res.SessionID, res.SessionID, childID, "CHILD-RESULT-"+p.childMarker)
	}
	if len(st.Sessions) != 4 || len(st.Runs) != 2 {
		t.Errorf("got sessions %q and %d runs, want 4 sessions and 2 runs", st.sessionIDs(), len(st.Runs))
	}
}

// firstRequest returns the earliest sub-agent request whose first user message contains task,
// or nil.
func firstRequest(reqs []messagesapi.Request, task string) *messagesapi.Request {
	for i, r := range reqs {
		if r.IsSubagent() && strings.Contains(r.FirstUserText(), task) {
			return &reqs[i]
		}
	}
	return nil
}

// subagentStartContext is how Claude Code 2.1.197 introduces a SubagentStart hook's
// additionalContext in the system-role message of the sub-agent's first request.
const subagentStartContext = "SubagentStart hook additional context: "

// inheritedBlock returns the inherited block that a SubagentStart hook put into text; "" when
// there is none. Claude Code appends its own text (the skill listing) to the same message after
// a blank line, so the block is cut at the first blank line that does not open one of its "### "
// sections (the format inject.InheritedBlock documents).
func inheritedBlock(text string) string {
	i := strings.Index(text, subagentStartContext+inheritedHeading)
	if i < 0 {
		return ""
	}
	block := text[i+len(subagentStartContext):]
	for off := 0; ; {
		j := strings.Index(block[off:], "\n\n")
		if j < 0 {
			return block
		}
		off += j + 2
		if !strings.HasPrefix(block[off:], "### ") {
			return block[:off-2]
		}
	}
}

// blockLine returns the rest of the first line of block that starts with prefix, or "".
func blockLine(block, prefix string) string {
	for line := range strings.SplitSeq(block, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return rest
		}
	}
	return ""
}

// metaAgents maps each spawn's tool_use_id to the agent id Claude Code gave the sub-agent,
// from the agent-<id>.meta.json files it left beside the session's transcript: the truth the
// store's pairing is checked against.
func metaAgents(t *testing.T, res claude.Result) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(res.SubagentsDir(), "agent-*.meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ToolUseID string `json:"toolUseId"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "agent-"), ".meta.json")
		out[m.ToolUseID] = id
	}
	if len(out) == 0 {
		t.Fatalf("no sub-agent meta.json in %s", res.SubagentsDir())
	}
	return out
}

// checkSession checks one stored session's lineage and objective.
func checkSession(t *testing.T, st storeState, id, parent string, depth int, objective string) {
	t.Helper()
	s, ok := st.session(id)
	if !ok {
		t.Errorf("session %s: not stored (stored: %q)", id, st.sessionIDs())
		return
	}
	if s.ParentID != parent || s.Depth != depth || s.Objective != objective || s.ParentInferred {
		t.Errorf("session %s: parent %q depth %d objective %q inferred %v, want %q %d %q false", id, s.ParentID, s.Depth, s.Objective, s.ParentInferred, parent, depth, objective)
	}
	if s.Status != kv.StatusEnded {
		t.Errorf("session %s: status %q after claude exited, want %s", id, s.Status, kv.StatusEnded)
	}
}

// checkRun checks one stored run: who spawned it, the sub-agent it is paired with, and that it
// completed with the sub-agent's result, tokens and duration.
func checkRun(t *testing.T, st storeState, id, root, parent, child, result string) {
	t.Helper()
	r, ok := st.run(id)
	if !ok {
		ids := make([]string, 0, len(st.Runs))
		for _, r := range st.Runs {
			ids = append(ids, r.ID)
		}
		t.Errorf("run %s: not stored (stored: %q)", id, ids)
		return
	}
	if r.RootID != root || r.ParentID != parent || r.ChildID != child || r.Provisional {
		t.Errorf("run %s: root %q parent %q child %q provisional %v, want %q %q %q false", id, r.RootID, r.ParentID, r.ChildID, r.Provisional, root, parent, child)
	}
	if r.Status != kv.RunCompleted || r.Result != result {
		t.Errorf("run %s: status %q result %q, want %s %q", id, r.Status, r.Result, kv.RunCompleted, result)
	}
	if r.Tokens <= 0 || r.DurationMs <= 0 {
		t.Errorf("run %s: tokens %d, duration %dms; want both from PostToolUse, above 0", id, r.Tokens, r.DurationMs)
	}
}

// section returns the part of block from the heading line to the next "### " heading.
func section(block, heading string) string {
	_, after, ok := strings.Cut(block, heading+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(after, "\n### "); i >= 0 {
		return after[:i]
	}
	return after
}

// TestLiveHTTPHooks runs the real Claude Code with the hooks `heirloom install claude-code
// --hooks http` writes: http hooks posted straight to heirloom for every event but SessionStart
// and SessionEnd, which run the hook binary. The child's first model request must carry the
// inherited block, and the run must be recorded complete: every event reached heirloom.
func TestLiveHTTPHooks(t *testing.T) {
	live := newLiveSetup(t)
	hookBin(t) // beside heirloom, so install writes it for SessionStart and SessionEnd
	path := filepath.Join(t.TempDir(), "settings.json")
	install := exec.Command(heirloomBin(t), "install", "claude-code", "--settings", path, "--hooks", "http", "--url", live.Serve.URL)
	install.Env = []string{"HOME=" + live.Home, "PATH=" + os.Getenv("PATH")}
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var settings map[string]any
	if err := json.Unmarshal(raw, &settings); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"type": "http"`) || !strings.Contains(string(raw), hookBin(t)+" claude-code") {
		t.Fatalf("settings from install --hooks http:\n%s", raw)
	}
	live.Settings = settings

	mp, mc := newMarker(t), newMarker(t)
	childTask := "CHILD-TASK-" + mc + ": look around."
	childRun := "toolu_e2ehttp" + strings.ToLower(mc)
	api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
		switch {
		case r.IsSideRequest():
			return messagesapi.Text("side")
		case r.IsSubagent():
			return messagesapi.Text("CHILD-RESULT-" + mc)
		case len(r.ToolResults()) == 0:
			return spawn(childRun, "child task", childTask)
		default:
			return messagesapi.Text("PARENT-DONE-" + mp)
		}
	})
	res := claude.Run(t, t.Context(), live.options(api, "delegate this "+mp))
	if res.ExitCode != 0 || res.Text != "PARENT-DONE-"+mp {
		t.Fatalf("exit %d, result %q\nstdout: %s\nstderr: %s\nheirloom:\n%s", res.ExitCode, res.Text, res.Stdout, res.Stderr, live.Serve.Logs())
	}
	child := firstRequest(agentTurns(api.Requests()), "CHILD-TASK-"+mc)
	if child == nil {
		t.Fatal("no first request of the child reached the model")
	}
	if block := inheritedBlock(child.AllText()); !strings.Contains(block, mp) {
		t.Errorf("the child's first request lacks the inherited block with the parent's marker; its text:\n%s", child.AllText())
	}
	st := readState(t, live.Serve.Store(t), nil)
	root := res.SessionID
	childID := root + ":" + metaAgents(t, res)[childRun]
	checkRun(t, st, childRun, root, root, childID, "CHILD-RESULT-"+mc)
}
