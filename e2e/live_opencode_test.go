package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
	"github.com/heirloom-dev/heirloom/e2e/opencode"
	"github.com/heirloom-dev/heirloom/proxy"
)

// The live OpenCode tests run the real `opencode serve` with heirloom's real plugin installed in
// the project, and a real `heirloom serve` that follows the server's event stream
// (adapters.opencode.servers) and answers the plugin's /api/inject. The chat stand-in answers
// each parent turn's first request with a task tool call, so OpenCode spawns a real child
// session, and everything else with text. Assertions read what reached the MODEL (the
// stand-in's request log) and what heirloom's API says about lineage and runs.

// ocWaitTimeout bounds each wait for heirloom to learn something from OpenCode's stream or from
// a resync. heirloom's reconnect backoff doubles from 250 ms, so a server that was down for ten
// seconds is followed again within about six more. It is kept well under the stream's 30 s
// read-idle timeout: a reconnect stuck until that timeout fires is a failure, not a late pass.
const ocWaitTimeout = 15 * time.Second

// ocLive is one OpenCode server with heirloom's plugin and one heirloom following it. Both can
// be restarted on the same address and data.
type ocLive struct {
	API    *chatapi.Server
	OC     *opencode.Server
	OCOpts opencode.Options
	H      *serveProc

	hAddr, hData, hHome string
	hLogs               *syncBuffer
	hProcs              []*serveProc // every start, the running one last

	mu   sync.Mutex
	hold func(chatapi.Request) // runs before answering a parent turn's first request

	setup ocSetup
}

// ocSetup adjusts a live OpenCode setup before anything starts.
type ocSetup struct {
	ServeEnv []string       // KEY=VALUE pairs added to heirloom serve's environment
	Config   map[string]any // extra top-level opencode.json keys
	// Script, when set, answers a model request first; ok false leaves it to the usual script.
	Script func(chatapi.Request) (reply chatapi.Reply, ok bool)
	// Follow, when set, maps OpenCode's URL to the one heirloom is told to follow (a proxy
	// between them).
	Follow func(ocURL string) string
}

// newOCLive skips t when opencode is absent (fails it under HEIRLOOM_E2E_REQUIRE), then starts
// the chat stand-in, OpenCode with the plugin pointed at heirloom's address, and heirloom
// following OpenCode. On failure it logs heirloom's output and the stand-in's request log;
// opencode.Serve logs OpenCode's. A setup, when given, adjusts all three.
func newOCLive(t *testing.T, setup ...ocSetup) *ocLive {
	t.Helper()
	opencode.Bin(t)
	heirloomBin(t) // build before the clocks start
	l := &ocLive{hAddr: freeAddr(t), hData: filepath.Join(t.TempDir(), "data"), hHome: t.TempDir(), hLogs: &syncBuffer{}}
	if len(setup) > 0 {
		l.setup = setup[0]
	}
	l.API = chatapi.New(l.reply)
	if err := l.API.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.API.Close)
	plugin, err := filepath.Abs(filepath.Join("..", "adapters", "opencode", "plugin", "heirloom.ts"))
	if err != nil {
		t.Fatal(err)
	}
	l.OCOpts = opencode.Options{
		ProviderURL: l.API.BaseURL(),
		Plugins:     []string{plugin},
		Env:         map[string]string{"HEIRLOOM_URL": "http://" + l.hAddr},
		Config:      l.setup.Config,
		// A port of its own: left to pick one, OpenCode once took the one heirloom was about
		// to listen on (free when freeAddr looked).
		Port: otherFreePort(t, l.hAddr),
	}
	l.OC = opencode.Serve(t, t.Context(), l.OCOpts)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("heirloom's state:%s", l.stateSummary())
		}
		for _, p := range l.hProcs {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("heirloom serve output (%s, %d starts):\n%s", l.hAddr, len(l.hProcs), l.hLogs)
			t.Logf("model requests:%s", ocRequestSummary(l.API.Requests()))
		}
	})
	l.startHeirloom(t)
	return l
}

// reply is the stand-in's script. A child session's requests carry X-Parent-Session-Id.
func (l *ocLive) reply(r chatapi.Request) chatapi.Reply {
	if l.setup.Script != nil {
		if reply, ok := l.setup.Script(r); ok {
			return reply
		}
	}
	switch {
	case r.IsSideRequest(): // title generation
		return chatapi.Text("side")
	case r.ParentSessionID() != "":
		return chatapi.Text(ocChildResult(r.SessionID()))
	case len(r.ToolResults()) == 0:
		l.mu.Lock()
		hold := l.hold
		l.mu.Unlock()
		if hold != nil {
			hold(r)
		}
		return chatapi.SpawnTask("child task", ocTaskPrompt(r.SessionID()), "general")
	default:
		return chatapi.Text("PARENT-DONE")
	}
}

// ocTaskPrompt is the task a parent session hands its child: it names the parent's session id,
// never a marker, so a marker in the child's request can only have come from heirloom.
func ocTaskPrompt(parent string) string { return "CHILD-TASK for " + parent + ": find the answer." }

// ocChildResult is what the model answers in child session id: the run's result.
func ocChildResult(id string) string { return "CHILD-RESULT of " + id }

// startHeirloom runs `heirloom serve` on the setup's address and data dir, following the
// OpenCode server, with debug logs, and waits until it answers /readyz. Each start appends to
// the same log.
func (l *ocLive) startHeirloom(t *testing.T) {
	t.Helper()
	fmt.Fprintf(l.hLogs, "=== heirloom serve, start %d ===\n", len(l.hProcs)+1)
	p := &serveProc{URL: "http://" + l.hAddr, DataDir: l.hData, logs: l.hLogs, done: make(chan struct{})}
	p.cmd = exec.Command(heirloomBin(t), "serve", "--listen", l.hAddr, "--data-dir", l.hData, "--log-level", "debug")
	p.cmd.Env = []string{
		"HOME=" + l.hHome,
		"PATH=" + os.Getenv("PATH"),
		"HEIRLOOM_LOG__FORMAT=text",
		"HEIRLOOM_ADAPTERS__OPENCODE__SERVERS=" + l.followURL(),
	}
	p.cmd.Env = append(p.cmd.Env, l.setup.ServeEnv...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	l.H, l.hProcs = p, append(l.hProcs, p) // killed by newOCLive's cleanup
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 2 * time.Second}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := client.Get(p.URL + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("heirloom serve exited early: %v", p.waitErr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("heirloom serve not ready in 15s")
}

// followURL is the URL heirloom follows OpenCode at.
func (l *ocLive) followURL() string {
	if l.setup.Follow != nil {
		return l.setup.Follow(l.OC.URL())
	}
	return l.OC.URL()
}

// restartOpenCode kills OpenCode as a crash would and starts it again on the same port, project
// and HOME, so heirloom's configured URL reaches the new process.
func (l *ocLive) restartOpenCode(t *testing.T) {
	t.Helper()
	port := l.OC.Port()
	if port == 0 {
		t.Fatalf("no port in OpenCode's URL %s", l.OC.URL())
	}
	l.OC.Kill()
	opts := l.OCOpts
	opts.Dir, opts.Home, opts.Port = l.OC.Dir, l.OC.Home, port
	l.OC = opencode.Serve(t, t.Context(), opts)
}

// setHold installs (nil: removes) a function the stand-in runs before answering a parent turn's
// first request.
func (l *ocLive) setHold(f func(chatapi.Request)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hold = f
}

// api returns a client of heirloom's API.
func (l *ocLive) api() *proxy.Client { return &proxy.Client{URL: "http://" + l.hAddr} }

// session reads one session from heirloom's API; found is false on a 404.
func (l *ocLive) session(ctx context.Context, id string) (reply proxy.SessionReply, found bool, err error) {
	_, err = l.api().Get(ctx, "/api/sessions/"+url.PathEscape(id), nil, &reply)
	var apiErr *proxy.Error
	if errors.As(err, &apiErr) && apiErr.Code == proxy.ECodeNotFound {
		return reply, false, nil
	}
	return reply, err == nil, err
}

// waitSession polls heirloom's API until ok accepts session id's reply, and returns the time
// that took; it fails t with the last reply after ocWaitTimeout.
func (l *ocLive) waitSession(t *testing.T, id, what string, ok func(proxy.SessionReply) bool) time.Duration {
	t.Helper()
	start := time.Now()
	var (
		last  proxy.SessionReply
		found bool
		err   error
	)
	for time.Since(start) < ocWaitTimeout {
		last, found, err = l.session(t.Context(), id)
		if err == nil && found && ok(last) {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("heirloom: %s: not within %v (found %v, error %v, last: %s)", what, ocWaitTimeout, found, err, describe(last))
	return 0
}

// newParent creates a top-level OpenCode session, titled without any marker, and waits until
// heirloom has it from the event stream: heirloom follows the server before the test prompts.
func (l *ocLive) newParent(t *testing.T, title string) opencode.Session {
	t.Helper()
	p := l.OC.CreateSession(t, t.Context(), title)
	what := "session " + p.ID + " (" + title + ") known, so heirloom follows OpenCode's event stream at " + l.OC.URL()
	took := l.waitSession(t, p.ID, what, func(proxy.SessionReply) bool { return true })
	t.Logf("timing: heirloom knew new session %s after %v", p.ID, took.Round(time.Millisecond))
	return p
}

// ocSpawn is one spawn: a parent turn whose first model request called task.
type ocSpawn struct {
	Parent, Child string
	CallID        string // the task call's id: heirloom's run id
	Marker        string // in the prompt of the turn that spawned
}

// spawn prompts parent with a prompt carrying marker and returns the spawn it made: the
// parent's one child not in before.
func (l *ocLive) spawn(t *testing.T, parent opencode.Session, marker string, before ...string) ocSpawn {
	t.Helper()
	start := time.Now()
	msg := l.OC.Prompt(t, t.Context(), parent.ID, "delegate this "+marker)
	t.Logf("timing: prompt of %s (parent turn, child session, parent turn) %v", parent.ID, time.Since(start).Round(time.Millisecond))
	if got := msg.Text(); got != "PARENT-DONE" {
		t.Fatalf("parent %s answered %q, want PARENT-DONE", parent.ID, got)
	}
	return l.spawnOf(t, parent.ID, marker, before...)
}

// spawnOf finds the spawn of parent's latest turn in OpenCode's own state.
func (l *ocLive) spawnOf(t *testing.T, parent, marker string, before ...string) ocSpawn {
	t.Helper()
	var kids []string
	for _, c := range l.OC.Children(t, t.Context(), parent) {
		if !slices.Contains(before, c.ID) {
			kids = append(kids, c.ID)
		}
	}
	if len(kids) != 1 {
		t.Fatalf("parent %s has new children %v, want exactly one", parent, kids)
	}
	sp := ocSpawn{Parent: parent, Child: kids[0], Marker: marker}
	for _, m := range l.OC.Messages(t, t.Context(), parent) {
		for _, p := range m.Parts {
			if p.Type == "tool" && p.Tool == chatapi.TaskTool && p.State != nil && strings.Contains(string(p.State.Metadata), sp.Child) {
				sp.CallID = p.CallID
			}
		}
	}
	if sp.CallID == "" {
		t.Fatalf("no task call in %s's messages names child %s", parent, sp.Child)
	}
	return sp
}

// firstRequest returns the child's first model request, failing t when none reached the model
// or it does not name the spawn's parent.
func (l *ocLive) firstRequest(t *testing.T, sp ocSpawn) chatapi.Request {
	t.Helper()
	reqs := ocTurns(l.API.Requests())[sp.Child]
	if len(reqs) == 0 {
		t.Fatalf("child %s of %s: no model request", sp.Child, sp.Parent)
	}
	if got := reqs[0].ParentSessionID(); got != sp.Parent {
		t.Fatalf("child %s's first request names parent %q, want %s", sp.Child, got, sp.Parent)
	}
	if strings.Contains(reqs[0].FirstUserText(), sp.Marker) {
		t.Fatalf("child %s's task prompt itself holds the marker %s; the test proves nothing", sp.Child, sp.Marker)
	}
	return reqs[0]
}

// ocInheritedBlock returns the inherited block in a request's system prompt: from its heading to
// the end of the system message holding it (the plugin's text arrives as a system message of
// its own); "" when there is none.
func ocInheritedBlock(r chatapi.Request) string {
	for _, m := range r.Messages {
		if m.Role != "system" {
			continue
		}
		text := m.Content.Text()
		if i := strings.Index(text, inheritedHeading); i >= 0 {
			return text[i:]
		}
	}
	return ""
}

// checkInherited checks that the child's first model request carries the inherited block with
// every one of markers, and nowhere any of others.
func (l *ocLive) checkInherited(t *testing.T, sp ocSpawn, markers, others []string) {
	t.Helper()
	first := l.firstRequest(t, sp)
	block := ocInheritedBlock(first)
	if block == "" {
		t.Errorf("child %s (of %s): its first model request (#%d) has no %q in its system prompt; system:\n%s",
			sp.Child, sp.Parent, first.Seq, inheritedHeading, tailText(first.SystemText()))
		return
	}
	for _, m := range markers {
		if !strings.Contains(block, m) {
			t.Errorf("child %s (of %s): the inherited block of its first request (#%d) lacks the parent's marker %s:\n%s", sp.Child, sp.Parent, first.Seq, m, block)
		}
	}
	all := first.AllText()
	for _, m := range others {
		if strings.Contains(all, m) {
			t.Errorf("child %s (of %s): its first request (#%d) carries another session's marker %s:\n%s", sp.Child, sp.Parent, first.Seq, m, block)
		}
	}
}

// checkLinked waits until heirloom links each spawn's child to its parent, with the run of the
// task call completed with the child's answer, and fails t for each child that is not so within
// ocWaitTimeout.
func (l *ocLive) checkLinked(t *testing.T, spawns ...ocSpawn) {
	t.Helper()
	linked := func(sp ocSpawn, r proxy.SessionReply) bool {
		return r.Session.ParentID == sp.Parent && r.Session.Depth == 1 && !r.Session.ParentInferred &&
			r.Run != nil && r.Run.ID == sp.CallID && r.Run.ParentID == sp.Parent && r.Run.ChildID == sp.Child &&
			r.Run.Status == "completed" && r.Run.Result == ocChildResult(sp.Child)
	}
	last := make([]string, len(spawns))
	deadline := time.Now().Add(ocWaitTimeout)
	for {
		pending := 0
		for i, sp := range spawns {
			if last[i] == "ok" {
				continue
			}
			r, found, err := l.session(t.Context(), sp.Child)
			switch {
			case err != nil:
				last[i] = err.Error()
			case !found:
				last[i] = "not stored"
			case linked(sp, r):
				last[i] = "ok"
				continue
			default:
				last[i] = describe(r)
			}
			pending++
		}
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, sp := range spawns {
		if last[i] != "ok" {
			t.Errorf("heirloom: child %s not linked to %s with run %s completed (result %q) within %v; it has %s",
				sp.Child, sp.Parent, sp.CallID, ocChildResult(sp.Child), ocWaitTimeout, last[i])
		}
	}
}

// describe renders a session reply's lineage and run on one line.
func describe(r proxy.SessionReply) string {
	s := fmt.Sprintf("parent %q depth %d inferred %v", r.Session.ParentID, r.Session.Depth, r.Session.ParentInferred)
	if r.Run == nil {
		return s + ", no run"
	}
	return s + fmt.Sprintf(", run %s (parent %s, child %s) %s with result %q", r.Run.ID, r.Run.ParentID, r.Run.ChildID, r.Run.Status, r.Run.Result)
}

// TestLiveOpenCodeInherit: the parent's prompt carries a marker; the child session OpenCode's
// task tool makes gets heirloom's inherited block, with that marker, in the system prompt of its
// FIRST model request. The parent's own requests get no block, and heirloom links the child.
func TestLiveOpenCodeInherit(t *testing.T) {
	l := newOCLive(t)
	marker := ocMarker(t)
	parent := l.newParent(t, "inherit parent")
	sp := l.spawn(t, parent, marker)

	l.checkInherited(t, sp, []string{marker}, nil)
	for _, r := range ocTurns(l.API.Requests())[parent.ID] {
		if ocInheritedBlock(r) != "" {
			t.Errorf("parent request #%d carries an inherited block; a top-level session has no parent", r.Seq)
		}
	}
	l.checkLinked(t, sp)
	ocAssertOffline(t, l.API)
}

// TestLiveOpenCodeTwoParents: two parent sessions prompt at once, each with its own marker and
// each spawning a child; the stand-in holds both parents' first requests until both arrived, so
// both turns are live when the children start. Each child's first request carries only its own
// parent's marker.
func TestLiveOpenCodeTwoParents(t *testing.T) {
	l := newOCLive(t)
	parents := []opencode.Session{l.newParent(t, "first parent"), l.newParent(t, "second parent")}
	markers := []string{ocMarker(t), ocMarker(t)}

	var (
		mu       sync.Mutex
		arrived  = map[string]bool{}
		together = make(chan struct{})
	)
	l.setHold(func(r chatapi.Request) {
		mu.Lock()
		if !arrived[r.SessionID()] {
			if arrived[r.SessionID()] = true; len(arrived) == 2 {
				close(together)
			}
		}
		mu.Unlock()
		select {
		case <-together:
		case <-time.After(60 * time.Second):
		}
	})
	errs := make([]error, 2)
	var wg sync.WaitGroup
	start := time.Now()
	for i, p := range parents {
		wg.Go(func() {
			var msg opencode.Message
			msg, errs[i] = l.OC.SendPrompt(t.Context(), p.ID, "delegate this "+markers[i])
			if errs[i] == nil && msg.Text() != "PARENT-DONE" {
				errs[i] = fmt.Errorf("answered %q, want PARENT-DONE", msg.Text())
			}
		})
	}
	wg.Wait()
	t.Logf("timing: two parents prompting at once %v", time.Since(start).Round(time.Millisecond))
	for i, p := range parents {
		if errs[i] != nil {
			t.Fatalf("prompt of parent %s: %v", p.ID, errs[i])
		}
	}
	select {
	case <-together:
	default:
		t.Fatal("the two parents never had a model request in flight at the same time")
	}

	spawns := make([]ocSpawn, 2)
	for i, p := range parents {
		spawns[i] = l.spawnOf(t, p.ID, markers[i])
	}
	for i, sp := range spawns {
		l.checkInherited(t, sp, []string{markers[i]}, []string{markers[1-i], parents[1-i].ID})
	}
	l.checkLinked(t, spawns...)
	ocAssertOffline(t, l.API)
}

// TestLiveOpenCodeRestarts runs five spawns across a crash of OpenCode and a restart of heirloom:
//
//	A  heirloom and OpenCode up
//	   OpenCode killed and started again on the same port and data
//	B  in a new session
//	C  in a new session
//	   heirloom stopped (SIGTERM)
//	D  in a new session, heirloom down: the plugin fails open, the child gets no block
//	   heirloom started again on the same address and data dir: its resync links D's child
//	E  a second turn of C's session
//
// Every child that spawned while heirloom was up got the block at its first request; at the end
// heirloom's API links every child to its parent and records every run, completed with the
// child's answer.
func TestLiveOpenCodeRestarts(t *testing.T) {
	l := newOCLive(t)
	var spawns []ocSpawn
	up := func(name string) ocSpawn {
		t.Helper()
		parent := l.newParent(t, "restarts "+name)
		sp := l.spawn(t, parent, ocMarker(t))
		l.checkInherited(t, sp, []string{sp.Marker}, nil)
		spawns = append(spawns, sp)
		return sp
	}

	up("A")

	start := time.Now()
	l.restartOpenCode(t)
	t.Logf("timing: OpenCode killed and ready again in %v", time.Since(start).Round(time.Millisecond))
	up("B")
	c := up("C")

	start = time.Now()
	l.H.Stop(t)
	t.Logf("timing: heirloom stopped in %v", time.Since(start).Round(time.Millisecond))
	downParent := l.OC.CreateSession(t, t.Context(), "restarts D")
	start = time.Now()
	d := l.spawn(t, downParent, ocMarker(t))
	t.Logf("timing: spawn with heirloom down %v", time.Since(start).Round(time.Millisecond))
	if block := ocInheritedBlock(l.firstRequest(t, d)); block != "" {
		t.Errorf("child %s spawned while heirloom was down, yet its first request has a block:\n%s", d.Child, block)
	}
	spawns = append(spawns, d)

	start = time.Now()
	l.startHeirloom(t)
	// heirloom was down when D's child was created: only the resync after its restart can link it.
	l.checkLinked(t, d)
	t.Logf("timing: heirloom restart to D's child checked %v", time.Since(start).Round(time.Millisecond))

	markerE := ocMarker(t)
	e := l.spawn(t, opencode.Session{ID: c.Parent}, markerE, c.Child)
	l.checkInherited(t, e, []string{c.Marker, markerE}, nil)
	spawns = append(spawns, e)

	l.checkState(t, spawns)
	ocAssertOffline(t, l.API)
}

// checkState waits until heirloom's API shows every spawn's child linked to its parent and every
// run completed, then checks that the session list and the run list hold exactly these.
func (l *ocLive) checkState(t *testing.T, spawns []ocSpawn) {
	t.Helper()
	l.checkLinked(t, spawns...)
	want := map[string]string{} // session → parent
	for _, sp := range spawns {
		want[sp.Parent], want[sp.Child] = "", sp.Parent
	}
	var sessions proxy.SessionsReply
	if _, err := l.api().Get(t.Context(), "/api/sessions", url.Values{"harness": {"opencode"}, "limit": {"100"}}, &sessions); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range sessions.Sessions {
		got[s.ID] = s.ParentID
		if s.Harness != "opencode" {
			t.Errorf("session %s: harness %q", s.ID, s.Harness)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("GET /api/sessions?harness=opencode: session → parent\n got %v\nwant %v", got, want)
	}
	var runs proxy.RunsReply
	if _, err := l.api().Get(t.Context(), "/api/runs", url.Values{"limit": {"100"}}, &runs); err != nil {
		t.Fatal(err)
	}
	gotRuns, wantRuns := map[string]string{}, map[string]string{} // run → parent/child status
	for _, r := range runs.Runs {
		gotRuns[r.ID] = r.ParentID + "/" + r.ChildID + " " + r.Status
	}
	for _, sp := range spawns {
		wantRuns[sp.CallID] = sp.Parent + "/" + sp.Child + " completed"
	}
	if !maps.Equal(gotRuns, wantRuns) {
		t.Errorf("GET /api/runs: run → parent/child status\n got %v\nwant %v", gotRuns, wantRuns)
	}
}

// ocRequestSummary renders the stand-in's request log for a failure message: one line a
// request, with its session, its parent, whether it carried a block, and its last user text.
func ocRequestSummary(reqs []chatapi.Request) string {
	var b strings.Builder
	for _, r := range reqs {
		kind := "turn"
		if r.IsSideRequest() {
			kind = "side"
		}
		fmt.Fprintf(&b, "\n  #%d %s session=%s parent=%s block=%v tool_results=%d last_user=%.80q",
			r.Seq, kind, r.SessionID(), r.ParentSessionID(), ocInheritedBlock(r) != "", len(r.ToolResults()), r.LastUserText())
	}
	return b.String()
}

// stateSummary renders what heirloom's API says about OpenCode sessions and runs, for a failure
// message; when heirloom is not running it says so.
func (l *ocLive) stateSummary() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var b strings.Builder
	var sessions proxy.SessionsReply
	if _, err := l.api().Get(ctx, "/api/sessions", url.Values{"harness": {"opencode"}, "limit": {"100"}}, &sessions); err != nil {
		return " " + err.Error()
	}
	for _, s := range sessions.Sessions {
		fmt.Fprintf(&b, "\n  session %s parent=%q depth=%d status=%s turns=%d title=%q objective=%.80q",
			s.ID, s.ParentID, s.Depth, s.Status, s.TurnCount, s.Title, s.Objective)
	}
	var runs proxy.RunsReply
	if _, err := l.api().Get(ctx, "/api/runs", url.Values{"limit": {"100"}}, &runs); err != nil {
		return b.String() + "\n  runs: " + err.Error()
	}
	for _, r := range runs.Runs {
		fmt.Fprintf(&b, "\n  run %s parent=%s child=%s status=%s result=%.80q", r.ID, r.ParentID, r.ChildID, r.Status, r.Result)
	}
	return b.String()
}

// otherFreePort returns a free loopback port that is not taken's.
func otherFreePort(t *testing.T, taken string) int {
	t.Helper()
	for range 10 {
		addr := freeAddr(t)
		if addr == taken {
			continue
		}
		var port int
		if _, err := fmt.Sscanf(addr, "127.0.0.1:%d", &port); err == nil {
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}
