package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/heirloom-dev/heirloom/e2e/claude"
	"github.com/heirloom-dev/heirloom/e2e/messagesapi"
	"github.com/heirloom-dev/heirloom/engine"
)

// feedClient is a real WebSocket client of heirloom's live feed (GET /api/events): it reads
// every message as it comes and keeps it with its arrival time.
type feedClient struct {
	ws   *websocket.Conn
	done chan struct{}

	mu     sync.Mutex
	events []arrived
	err    error // why reading stopped
}

// arrived is an event and when the client read it.
type arrived struct {
	engine.Event
	At  time.Time
	Raw string
}

// followFeed connects to the feed of the heirloom at baseURL with query and reads it until the
// end of the test, when it closes the connection with a close frame.
func followFeed(tb testing.TB, baseURL, query string) *feedClient {
	tb.Helper()
	u := "ws" + strings.TrimPrefix(baseURL, "http") + "/api/events"
	if query != "" {
		u += "?" + query
	}
	ws, _, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		tb.Fatalf("dial %s: %v", u, err)
	}
	f := &feedClient{ws: ws, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for {
			_, raw, err := ws.ReadMessage()
			if err != nil {
				f.mu.Lock()
				f.err = err
				f.mu.Unlock()
				return
			}
			var ev engine.Event
			if err := json.Unmarshal(raw, &ev); err != nil {
				err = fmt.Errorf("a message is not an event: %q: %w", raw, err)
			}
			f.mu.Lock()
			f.events = append(f.events, arrived{Event: ev, At: time.Now(), Raw: string(raw)})
			if err != nil {
				f.err = err
			}
			f.mu.Unlock()
		}
	}()
	tb.Cleanup(func() {
		msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
		_ = ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		select {
		case <-f.done:
		case <-time.After(2 * time.Second):
			tb.Errorf("the feed did not answer the client's close frame within 2s")
		}
		ws.Close()
		<-f.done
	})
	return f
}

// all returns what the client read so far.
func (f *feedClient) all() []arrived {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// await returns the first event match accepts, waiting up to 30s for it.
func (f *feedClient) await(tb testing.TB, what string, match func(engine.Event) bool) arrived {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, a := range f.all() {
			if match(a.Event) {
				return a
			}
		}
		f.mu.Lock()
		err := f.err
		f.mu.Unlock()
		if err != nil || time.Now().After(deadline) {
			tb.Fatalf("no %s on the feed (reading stopped: %v); it carried:\n%s", what, err, f.describe())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// describe lists the events read, one per line, for failure messages.
func (f *feedClient) describe() string {
	var b strings.Builder
	for _, a := range f.all() {
		b.WriteString("  " + a.Raw + "\n")
	}
	return b.String()
}

// wantEvent is an event a live run must put on the feed. Data holds the fields checked, JSON
// numbers as float64; a nil Data checks only type, session and run.
type wantEvent struct {
	Type, Session, Run string
	Data               map[string]any
}

func (w wantEvent) String() string {
	return fmt.Sprintf("%s session=%s run=%s %v", w.Type, w.Session, w.Run, w.Data)
}

func (w wantEvent) match(ev engine.Event) bool {
	if ev.Type != w.Type || ev.Session != w.Session || ev.Run != w.Run || ev.Scope != scope || ev.Time.IsZero() {
		return false
	}
	for k, v := range w.Data {
		if ev.Data[k] != v {
			return false
		}
	}
	return true
}

// TestLiveEvents follows heirloom's live feed with real WebSocket clients, and with `heirloom
// watch`, while the real Claude Code runs with the real heirloom (started with
// HEIRLOOM_SPAWN__MAX_DEPTH=1): its parent spawns a sub-agent (the model stand-in answers with
// an Agent tool call), and the sub-agent asks for one of its own, at depth 2, which heirloom
// refuses. The events must arrive while claude is still running: the sessions starting, the
// spawn checkpoint, the run starting with its child, the inherited block handed to the child,
// the grandchild's spawn refused with its reason, the run ending; a client asking only for run
// events gets only those.
//
// To add a case (a compaction, a children refusal), script the stand-in to cause it and add
// its wantEvent below.
func TestLiveEvents(t *testing.T) {
	live := newLiveSetup(t, "HEIRLOOM_SPAWN__MAX_DEPTH=1")
	all := followFeed(t, live.Serve.URL, "")
	runs := followFeed(t, live.Serve.URL, "type=run.started,run.ended,spawn.refused")
	watch := startWatch(t, live.Serve.URL)

	marker := newMarker(t)
	childTask := "CHILD-TASK-" + marker + ": count the callers."
	childRun := "toolu_e2eevents" + strings.ToLower(marker)
	grandRun := "toolu_e2erefused" + strings.ToLower(marker)
	api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
		switch {
		case r.IsSideRequest():
			return messagesapi.Text("side")
		case r.IsSubagent() && strings.Contains(r.FirstUserText(), "CHILD-TASK-"+marker):
			if len(r.ToolResults()) == 0 {
				return spawn(grandRun, "grandchild task", "GRAND-TASK-"+marker+": dig deeper.")
			}
			return messagesapi.Text("CHILD-RESULT-" + marker)
		case r.IsSubagent():
			return messagesapi.Text("unexpected sub-agent")
		case len(r.ToolResults()) == 0:
			return spawn(childRun, "child task", childTask)
		default:
			return messagesapi.Text("PARENT-DONE-" + marker)
		}
	})

	res := claude.Run(t, t.Context(), live.options(api, "delegate the count "+marker))
	finished := time.Now()
	if res.ExitCode != 0 || res.Text != "PARENT-DONE-"+marker {
		t.Fatalf("exit %d, result %q, want 0 and PARENT-DONE-%s\nstdout: %s\nstderr: %s\nheirloom:\n%s", res.ExitCode, res.Text, marker, res.Stdout, res.Stderr, live.Serve.Logs())
	}
	assertOffline(t, api)
	root := res.SessionID
	agent := metaAgents(t, res)[childRun]
	if agent == "" {
		t.Fatalf("Claude Code left no meta.json for the spawn %s", childRun)
	}
	child := root + ":" + agent

	want := []wantEvent{
		{Type: engine.EventSessionStarted, Session: root, Data: map[string]any{"harness": "claude-code"}},
		{Type: engine.EventCheckpointWritten, Session: root, Data: map[string]any{"trigger": "spawn"}},
		{Type: engine.EventSessionStarted, Session: child, Data: map[string]any{"parent": root, "depth": 1.0}},
		{Type: engine.EventRunStarted, Session: root, Run: childRun, Data: map[string]any{"child": child}},
		{Type: engine.EventBlockInjected, Session: child, Data: map[string]any{"block": inheritedHeading, "via": "subagent_start"}},
		{Type: engine.EventRunEnded, Session: root, Run: childRun, Data: map[string]any{"status": "completed", "end_reason": "completed", "child": child}},
		{Type: engine.EventSpawnRefused, Session: child, Run: grandRun, Data: map[string]any{"reason": "depth 2 exceeds spawn.max_depth 1", "depth": 2.0, "enforced": true}},
	}
	var got []arrived
	for _, w := range want {
		a := all.await(t, w.String(), w.match)
		if a.At.After(finished) {
			t.Errorf("%s arrived %v after claude exited; the feed is live", w, a.At.Sub(finished))
		}
		got = append(got, a)
	}
	order := func(a, b int) {
		if got[a].At.After(got[b].At) {
			t.Errorf("%s arrived after %s", want[a].Type, want[b].Type)
		}
	}
	order(3, 5) // run.started before run.ended
	order(4, 5) // the child's block before its run ended
	order(3, 6) // the child's own spawn refused while it ran
	order(6, 5)
	if ev := got[4]; ev.Data["chars"] == nil || ev.Data["chars"].(float64) < 100 {
		t.Errorf("block.injected for the child: chars %v, want the block's length", ev.Data["chars"])
	}

	runs.await(t, "run.ended", wantEvent{Type: engine.EventRunEnded, Session: root, Run: childRun}.match)
	runs.await(t, "spawn.refused", want[6].match)
	for _, a := range runs.all() {
		if a.Type != engine.EventRunStarted && a.Type != engine.EventRunEnded && a.Type != engine.EventSpawnRefused {
			t.Errorf("the run-only client got %s", a.Raw)
		}
	}
	for _, r := range agentTurns(api.Requests()) {
		if strings.Contains(r.FirstUserText(), "GRAND-TASK-"+marker) {
			t.Errorf("request %d: the refused grandchild reached the model", r.Seq)
		}
	}

	// heirloom watch printed the same run, readably.
	watch.await(t, `run\.ended +\S+ +run=toolu_e2eevent end_reason=completed child=`)
	for _, line := range []string{`session\.started +\S+ +harness=claude-code`, `run\.started +\S+ +run=toolu_e2eevent child=`, `block\.injected +\S+:\S+ +block="Inherited from Parent Session" chars=\d+ via=subagent_start`,
		`spawn\.refused +\S+:\S+ +run=toolu_e2erefus reason="depth 2 exceeds spawn\.max_depth 1" enforced=true type=general-purpose depth=2`} {
		watch.await(t, line)
	}
	t.Logf("heirloom watch printed:\n%s", watch.out)
}

// watchProc is a running `heirloom watch` whose output the test reads.
type watchProc struct {
	out  *syncBuffer
	done chan struct{}
}

// startWatch runs `heirloom watch` against the heirloom at baseURL until the end of the test.
func startWatch(tb testing.TB, baseURL string) *watchProc {
	tb.Helper()
	cmd := exec.Command(heirloomBin(tb), "watch")
	cmd.Env = []string{"HEIRLOOM_URL=" + baseURL, "HOME=" + tb.TempDir()}
	w := &watchProc{out: &syncBuffer{}, done: make(chan struct{})}
	errs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = w.out, errs
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(w.done) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-w.done
	})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errs.String(), "following") {
		if time.Now().After(deadline) {
			tb.Fatalf("heirloom watch did not start following: %s", errs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return w
}

// await waits up to 30s for a line of watch's output to match pattern.
func (w *watchProc) await(tb testing.TB, pattern string) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	re := regexp.MustCompile(`(?m)` + pattern)
	for !re.MatchString(w.out.String()) {
		if time.Now().After(deadline) {
			tb.Fatalf("heirloom watch printed no line matching %s:\n%s", pattern, w.out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
