package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/codex"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

var updateCodex = flag.Bool("update-codex", false, "rewrite the golden Codex replies in testdata/codex/*/replies.golden from the current output")

// codexCall is one recorded Codex hook call (e2e/cmd/codexrecord): the event, its payload, and
// the size of every rollout file when Codex made it, paths relative to CODEX_HOME.
type codexCall struct {
	Event   string           `json:"event"`
	Payload json.RawMessage  `json:"payload"`
	Sizes   map[string]int64 `json:"sizes"`
}

// codexRecording is one recorded Codex run: its calls, in order, and its rollouts' final bytes.
type codexRecording struct {
	Name     string
	Calls    []codexCall
	Rollouts map[string][]byte // by path relative to CODEX_HOME
}

func loadCodexRecording(tb testing.TB, name string) codexRecording {
	tb.Helper()
	dir := filepath.Join("testdata", "codex", name)
	rec := codexRecording{Name: name, Rollouts: map[string][]byte{}}
	f, err := os.Open(filepath.Join(dir, "hooks.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var c codexCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		rec.Calls = append(rec.Calls, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	err = filepath.WalkDir(filepath.Join(dir, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		rec.Rollouts[rel] = b
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

// codexRoot stands in for the recorded home (/home/dev): CODEX_HOME is its .codex.
type codexRoot struct{ Dir string }

func (r codexRoot) codexHome() string { return filepath.Join(r.Dir, ".codex") }
func (r codexRoot) sessions() string  { return filepath.Join(r.codexHome(), "sessions") }

// materialize writes every rollout as it stood at call c, its first Sizes bytes, unless it is
// longer already (a second delivery sees the files whole, as a repeat would).
func (r codexRoot) materialize(tb testing.TB, rec codexRecording, c codexCall) {
	tb.Helper()
	for rel, size := range c.Sizes {
		b, ok := rec.Rollouts[rel]
		if !ok || int64(len(b)) < size {
			tb.Fatalf("%s: rollout %s: recorded size %d, have %d bytes", rec.Name, rel, size, len(b))
		}
		p := filepath.Join(r.codexHome(), rel)
		if fi, err := os.Stat(p); err == nil && fi.Size() >= size {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, b[:size], 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func (r codexRoot) root(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(recordedHome), []byte(r.Dir))
}

func (r codexRoot) unroot(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(r.Dir), []byte(recordedHome))
}

// codexTransports deliver Codex hook calls: POST /hooks/codex of an in-process server, and the
// real `heirloom hook codex` against a real `heirloom serve`.
var codexTransports = []struct {
	name string
	open func(tb testing.TB, root codexRoot) (send func(testing.TB, []byte) []byte, state func(testing.TB) storeState)
}{
	{"HTTP", func(tb testing.TB, root codexRoot) (func(testing.TB, []byte) []byte, func(testing.TB) storeState) {
		srv := mustOpenServer(tb, func(s *proxy.Server) { s.Engine.Config.TranscriptRoots = []string{root.sessions()} })
		send := func(tb testing.TB, payload []byte) []byte {
			tb.Helper()
			resp, err := http.Post(srv.URL()+"/hooks/codex", "application/json", bytes.NewReader(payload))
			if err != nil {
				tb.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				tb.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				tb.Fatalf("POST /hooks/codex: %s: %s", resp.Status, body)
			}
			return body
		}
		return send, func(tb testing.TB) storeState { return readState(tb, srv.Engine.Store, nil) }
	}},
	{"Shim", func(tb testing.TB, root codexRoot) (func(testing.TB, []byte) []byte, func(testing.TB) storeState) {
		serve := startServe(tb, serveOptions{Home: root.Dir, Env: []string{"HEIRLOOM_ADAPTERS__CODEX__TRANSCRIPT_ROOTS=" + root.sessions()}})
		send := func(tb testing.TB, payload []byte) []byte {
			tb.Helper()
			return runShimAs(tb, serve.URL, "codex", payload)
		}
		return send, func(tb testing.TB) storeState { return readState(tb, serve.Store(tb), nil) }
	}},
}

// codexReply is heirloom's answer to one recorded call, the replay root written back.
type codexReply struct {
	call codexCall
	body []byte
}

// deliverCodex replays rec through send, each call seeing the rollouts as they stood then.
func deliverCodex(tb testing.TB, rec codexRecording, root codexRoot, send func(testing.TB, []byte) []byte) []codexReply {
	tb.Helper()
	out := make([]codexReply, len(rec.Calls))
	for i, c := range rec.Calls {
		root.materialize(tb, rec, c)
		out[i] = codexReply{call: c, body: root.unroot(send(tb, root.root(c.Payload)))}
	}
	return out
}

// codexField reads a string field of a recorded payload.
func codexField(c codexCall, name string) string {
	var m map[string]any
	_ = json.Unmarshal(c.Payload, &m)
	s, _ := m[name].(string)
	return s
}

// codexWant is what each recording must leave in the store, written out by hand from the
// recording: every session's parent and objective, and each run's child and result.
type codexWant struct {
	sessions map[string]codexSessionWant // by heirloom's session id, with root/agent placeholders
	runs     map[string]codexRunWant     // by tool_use_id
}

type codexSessionWant struct {
	parent    string
	depth     int
	objective string
}

type codexRunWant struct {
	parent, child, result string
}

// TestCodexReplay replays each recorded Codex hook stream, twice over, through POST
// /hooks/codex and through `heirloom hook codex`, and checks the lineage and runs stored, what
// each sub-agent inherited, the reinforcement after compaction, and that a second delivery
// changes nothing.
func TestCodexReplay(t *testing.T) {
	for _, name := range []string{"nested", "parallel", "compact-resumed"} {
		t.Run(name, func(t *testing.T) {
			rec := loadCodexRecording(t, name)
			states := map[string]storeState{}
			for _, tr := range codexTransports {
				t.Run(tr.name, func(t *testing.T) {
					root := codexRoot{Dir: t.TempDir()}
					send, state := tr.open(t, root)
					first := deliverCodex(t, rec, root, send)
					var afterFirst storeState
					if tr.name == "HTTP" { // the in-process store can be read while serving
						afterFirst = settledState(t, state)
					}
					second := deliverCodex(t, rec, root, send) // a duplicate delivery, files whole
					st := state(t)
					if tr.name == "HTTP" {
						if d := diffState("after one pass", afterFirst, "after two", st); d != "" {
							t.Errorf("delivering the stream a second time changed the store:\n%s", d)
						}
					}
					for _, r := range second {
						if ctx := additionalContext(t, r.body); strings.Contains(ctx, "[Objective Reinforcement]") {
							t.Errorf("second pass, %s: the reinforcement again; it comes once per compaction", r.call.Event)
						}
					}
					st.checkTurns(t)
					checkCodexStore(t, rec, st)
					checkCodexReplies(t, rec, first)
					checkCodexGolden(t, rec, tr.name, first)
					for i := range st.Sessions {
						st.Sessions[i].Transcript.Path = string(root.unroot([]byte(st.Sessions[i].Transcript.Path)))
						st.Sessions[i].Project = string(root.unroot([]byte(st.Sessions[i].Project)))
						st.Sessions[i].ProjectNorm = string(root.unroot([]byte(st.Sessions[i].ProjectNorm)))
						st.Sessions[i].Transcript.Ident = ""
					}
					states[tr.name] = st
				})
			}
			if h, ok := states["HTTP"]; ok {
				if s, ok := states["Shim"]; ok {
					if d := diffState("http", h, "shim", s); d != "" {
						t.Errorf("the shim path stored something else than the HTTP path:\n%s", d)
					}
				}
			}
		})
	}
}

// settledState reads the store once the background work a delivery starts has settled: a run
// that ended gets its sub-agent's turn count a second after its end (engine.settleTurns).
func settledState(t *testing.T, state func(testing.TB) storeState) storeState {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := state(t)
		settled := true
		for _, r := range st.Runs {
			settled = settled && (r.Status != kv.RunCompleted || r.Turns > 0 && r.Turns == len(st.Turns[r.ChildID]))
		}
		if settled || time.Now().After(deadline) {
			return st
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// codexIDs returns the recording's root session id and its sub-agents' ids in start order.
func codexIDs(rec codexRecording) (root string, agents []string) {
	for _, c := range rec.Calls {
		if root == "" {
			root = codexField(c, "session_id")
		}
		if c.Event == "SubagentStart" {
			agents = append(agents, codexField(c, "agent_id"))
		}
	}
	return root, agents
}

// codexSpawns returns the run ids of rec's spawn_agent calls, in order: each call id scoped by
// its root session (codex.RunID).
func codexSpawns(rec codexRecording) []string {
	var out []string
	for _, c := range rec.Calls {
		if c.Event == "PreToolUse" && codexField(c, "tool_name") == "spawn_agent" {
			out = append(out, codex.RunID(codexField(c, "session_id"), codexField(c, "tool_use_id")))
		}
	}
	return out
}

// wantFor writes down, by hand, what each recording leaves: see e2e/testdata/codex/*/hooks.jsonl.
func wantFor(rec codexRecording) codexWant {
	root, agents := codexIDs(rec)
	spawns := codexSpawns(rec)
	id := func(i int) string { return root + ":" + agents[i] }
	switch rec.Name {
	case "nested": // root → child → grandchild
		return codexWant{
			sessions: map[string]codexSessionWant{
				root:  {"", 0, "NESTED-ROOT: delegate the audit to a helper"},
				id(0): {root, 1, "CHILD-TASK: ask a helper to dig deeper"},
				id(1): {id(0), 2, "GRAND-TASK: dig deeper"},
			},
			runs: map[string]codexRunWant{
				spawns[0]: {root, id(0), "CHILD-RESULT"},
				spawns[1]: {id(0), id(1), "GRAND-RESULT"},
			},
		}
	case "parallel": // two children of the root, spawned in one reply
		return codexWant{
			sessions: map[string]codexSessionWant{
				root:  {"", 0, "PARALLEL-ROOT: run two helpers at once"},
				id(0): {root, 1, "TASK-A: check the parser"},
				id(1): {root, 1, "TASK-B: check the writer"},
			},
			runs: map[string]codexRunWant{
				spawns[0]: {root, id(0), "RESULT-A"},
				spawns[1]: {root, id(1), "RESULT-B"},
			},
		}
	case "compact-resumed":
		return codexWant{sessions: map[string]codexSessionWant{root: {"", 0, "COMPACT-ROOT: keep the objective across compaction"}}}
	}
	return codexWant{}
}

func checkCodexStore(t *testing.T, rec codexRecording, st storeState) {
	t.Helper()
	want := wantFor(rec)
	if len(st.Sessions) != len(want.sessions) || len(st.Runs) != len(want.runs) {
		t.Errorf("stored sessions %q and %d runs, want %d sessions and %d runs", st.sessionIDs(), len(st.Runs), len(want.sessions), len(want.runs))
	}
	for id, w := range want.sessions {
		s, ok := st.session(id)
		if !ok {
			t.Errorf("session %s not stored", id)
			continue
		}
		if s.ParentID != w.parent || s.Depth != w.depth || s.Objective != w.objective || s.Harness != "codex" {
			t.Errorf("session %s: parent %q depth %d objective %q harness %q, want %q %d %q codex", id, s.ParentID, s.Depth, s.Objective, s.Harness, w.parent, w.depth, w.objective)
		}
		if len(st.Turns[id]) == 0 {
			t.Errorf("session %s: no transcript turns stored", id)
		}
		for _, turn := range st.Turns[id] {
			if strings.Contains(turn.Text, "PROBE-") || strings.Contains(turn.Text, inheritedHeading) {
				t.Errorf("session %s: turn %s holds hook context read back from the rollout: %q", id, turn.SourceID, turn.Text)
			}
		}
	}
	if rec.Name == "compact-resumed" {
		root, _ := codexIDs(rec)
		if s, _ := st.session(root); s.Compactions != 1 || s.ReinforcedEpoch != 1 {
			t.Errorf("root: compactions %d, reinforced epoch %d, want 1 and 1", s.Compactions, s.ReinforcedEpoch)
		}
	}
	for id, w := range want.runs {
		r, ok := st.run(id)
		if !ok {
			t.Errorf("run %s not stored", id)
			continue
		}
		if r.ParentID != w.parent || r.ChildID != w.child || r.Result != w.result || r.Status != kv.RunCompleted || r.Provisional {
			t.Errorf("run %s: parent %q child %q result %q status %s provisional %v, want %q %q %q completed, exact",
				id, r.ParentID, r.ChildID, r.Result, r.Status, r.Provisional, w.parent, w.child, w.result)
		}
	}
}

// checkCodexReplies checks the answers: each SubagentStart's block names its parent's
// objective (the grandchild's its child's task), no other event of a sub-agent gets one, the
// replies Codex's schemas forbid context in are {}, and after the compaction one SessionStart
// (the resume's, which comes first) carries the objective reinforcement, once.
func checkCodexReplies(t *testing.T, rec codexRecording, replies []codexReply) {
	t.Helper()
	want := wantFor(rec)
	root, _ := codexIDs(rec)
	reinforced := false
	for i, r := range replies {
		ctx := additionalContext(t, r.body)
		agent := codexField(r.call, "agent_id")
		switch r.call.Event {
		case "SubagentStart":
			w := want.sessions[root+":"+agent]
			parentObjective := want.sessions[w.parent].objective
			if !strings.HasPrefix(ctx, inheritedHeading) || !strings.Contains(ctx, "Objective: "+parentObjective) {
				t.Errorf("call %d SubagentStart %s: block lacks the heading or the parent's objective %q:\n%s", i, agent, parentObjective, ctx)
			}
		case "SessionStart":
			if strings.Contains(ctx, "[Objective Reinforcement]") {
				if reinforced || !strings.Contains(ctx, want.sessions[root].objective) || strings.Contains(ctx, "## Recovered Session Checkpoint") {
					t.Errorf("call %d SessionStart(%s): a second reinforcement, or one without the objective, or beside the recovered checkpoint:\n%s", i, codexField(r.call, "source"), ctx)
				}
				reinforced = true
			}
		case "PostCompact", "PreCompact", "Stop", "SessionEnd", "SubagentStop":
			if string(bytes.TrimSpace(r.body)) != "{}" {
				t.Errorf("call %d %s: reply %s, want {} (Codex's schema takes no context here)", i, r.call.Event, r.body)
			}
		default:
			if strings.Contains(ctx, inheritedHeading) {
				t.Errorf("call %d %s: an inherited block outside SubagentStart:\n%s", i, r.call.Event, ctx)
			}
		}
	}
	if rec.Name == "compact-resumed" && !reinforced {
		t.Errorf("no SessionStart(compact) reply carried the reinforcement")
	}
}

// checkCodexGolden compares the SubagentStart and SessionStart replies with
// testdata/codex/<name>/replies.golden (-update-codex rewrites it, from the HTTP path).
func checkCodexGolden(t *testing.T, rec codexRecording, transport string, replies []codexReply) {
	t.Helper()
	var b strings.Builder
	for i, r := range replies {
		if r.call.Event == "SubagentStart" || r.call.Event == "SessionStart" {
			b.WriteString("=== call " + itoa(i) + " " + r.call.Event + "\n" + additionalContext(t, r.body) + "\n")
		}
	}
	path := filepath.Join("testdata", "codex", rec.Name, "replies.golden")
	if *updateCodex && transport == "HTTP" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-codex to write it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("replies differ from %s (run with -update-codex to rewrite it, after checking why):\n%s", path, firstDiff(string(want), got))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// firstDiff shows the first line where want and got differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + itoa(i+1) + ":\n want " + wl + "\n  got " + gl
		}
	}
	return ""
}
