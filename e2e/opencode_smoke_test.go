package e2e

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
	"github.com/heirloom-dev/heirloom/e2e/opencode"
)

// TestOpenCodeSmoke proves the live technique against the real OpenCode
// server with heirloom's real plugin: it runs offline against the loopback
// chat-completions stand-in, a scripted task tool call spawns a real child
// session, and what the plugin got from a stand-in for heirloom's
// /api/inject reaches that child's first model request, asked for with the
// child's own session id. It also shows the compaction hook, a refused
// spawn, a sidecar too slow to wait for, and a restart on the same data.
func TestOpenCodeSmoke(t *testing.T) {
	opencode.Bin(t) // skip the whole test at once when opencode is absent

	marker := ocMarker(t)
	sidecar := newOCSidecar(t, marker)
	api := chatapi.New(func(r chatapi.Request) chatapi.Reply {
		switch {
		case r.IsSideRequest(): // title generation, compaction
			return chatapi.Text("SIDE-" + marker)
		case r.ParentSessionID() != "":
			return chatapi.Text("CHILD-RESULT-" + marker)
		case len(r.ToolResults()) == 0:
			return chatapi.SpawnTask("child task", "CHILD-TASK-"+marker+": find the answer.", "general")
		default:
			return chatapi.Text("PARENT-DONE-" + marker)
		}
	})
	if err := api.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)

	plugin, err := filepath.Abs(filepath.Join("..", "adapters", "opencode", "plugin", "heirloom.ts"))
	if err != nil {
		t.Fatal(err)
	}
	opts := opencode.Options{
		ProviderURL: api.BaseURL(),
		Plugins:     []string{plugin},
		Env:         map[string]string{"HEIRLOOM_URL": sidecar.URL(), "HEIRLOOM_TOKEN": ocToken},
	}
	srv := opencode.Serve(t, t.Context(), opts)
	t.Logf("timing: cold start (exec → project answers) %v", srv.Started.Round(time.Millisecond))

	var spawnParent string
	t.Run("Spawn", func(t *testing.T) {
		ctx := t.Context()
		parent := srv.CreateSession(t, ctx, "parent "+marker)
		spawnParent = parent.ID
		start := time.Now()
		msg := srv.Prompt(t, ctx, parent.ID, "delegate this "+marker)
		t.Logf("timing: first prompt (parent turn, child session, parent turn) %v", time.Since(start).Round(time.Millisecond))
		if got := msg.Text(); got != "PARENT-DONE-"+marker {
			t.Fatalf("parent's answer %q, want PARENT-DONE-%s", got, marker)
		}
		children := srv.Children(t, ctx, parent.ID)
		if len(children) != 1 || children[0].ParentID != parent.ID {
			t.Fatalf("children of %s: %+v, want one child naming it as parent", parent.ID, children)
		}
		child := children[0]
		t.Logf("child %s titled %q", child.ID, child.Title)

		// What reached the model.
		bySession := ocTurns(api.Requests())
		childReqs, parentReqs := bySession[child.ID], bySession[parent.ID]
		if len(childReqs) != 1 || len(parentReqs) != 2 {
			t.Fatalf("got %d child and %d parent requests, want 1 and 2", len(childReqs), len(parentReqs))
		}
		first := childReqs[0]
		if got := first.SystemText(); !strings.Contains(got, sidecar.inject(child.ID)) {
			t.Errorf("child's first request lacks %s in its system prompt; system:\n%s", sidecar.inject(child.ID), tailText(got))
		}
		if strings.Contains(first.AllText(), sidecar.inject(parent.ID)) {
			t.Errorf("child's first request carries the parent's %s", sidecar.inject(parent.ID))
		}
		if got := first.FirstUserText(); !strings.Contains(got, "CHILD-TASK-"+marker) {
			t.Errorf("child's first user text %q, want the task prompt", got)
		}
		if got := first.ParentSessionID(); got != parent.ID {
			t.Errorf("child's request names parent %q, want %s", got, parent.ID)
		}
		for _, r := range parentReqs {
			if !strings.Contains(r.SystemText(), sidecar.inject(parent.ID)) {
				t.Errorf("parent request %d lacks %s", r.Seq, sidecar.inject(parent.ID))
			}
			if strings.Contains(r.AllText(), sidecar.inject(child.ID)) {
				t.Errorf("parent request %d carries the child's %s", r.Seq, sidecar.inject(child.ID))
			}
		}
		if got := parentReqs[1].ToolResults(); len(got) != 1 || !strings.Contains(got[0].Content.Text(), "CHILD-RESULT-"+marker) {
			t.Errorf("parent follow-up tool results %+v, want the child's result", got)
		}

		// What the sidecar saw.
		calls := sidecar.callsFor(parent.ID, child.ID)
		t.Logf("sidecar calls: %s", ocCallSummary(calls, parent.ID, child.ID))
		want := []string{"inject parent", "spawn-check parent", "inject child", "inject parent"}
		if got := ocCallKinds(calls, parent.ID, child.ID); !slices.Equal(got, want) {
			t.Errorf("sidecar calls\n got %v\nwant %v", got, want)
		}
		for _, c := range calls {
			if c.Auth != "Bearer "+ocToken {
				t.Errorf("%s %s: Authorization %q, want the bearer token", c.Method, c.Path, c.Auth)
			}
			if c.Session == child.ID && c.Parent != parent.ID {
				t.Errorf("child's inject call names parent %q, want %s", c.Parent, parent.ID)
			}
		}
		if i := slices.IndexFunc(calls, func(c ocCall) bool { return c.Path == "/api/spawn-check" }); i >= 0 {
			var body struct {
				Tool string            `json:"tool"`
				Args map[string]string `json:"args"`
			}
			if err := json.Unmarshal(calls[i].Body, &body); err != nil || body.Tool != "task" || body.Args["subagent_type"] != "general" || !strings.Contains(body.Args["prompt"], "CHILD-TASK-"+marker) {
				t.Errorf("spawn-check body %s (%v), want tool task and the task's args", calls[i].Body, err)
			}
		}
		ocAssertOffline(t, api)
	})

	t.Run("Warm", func(t *testing.T) {
		ctx := t.Context()
		parent := srv.CreateSession(t, ctx, "warm "+marker)
		start := time.Now()
		srv.Prompt(t, ctx, parent.ID, "again "+marker)
		t.Logf("timing: warm prompt (parent turn, child session, parent turn) %v", time.Since(start).Round(time.Millisecond))
	})

	t.Run("TwoParents", func(t *testing.T) {
		ctx := t.Context()
		parents := []opencode.Session{srv.CreateSession(t, ctx, "first "+marker), srv.CreateSession(t, ctx, "second "+marker)}
		errs := make([]error, len(parents))
		var wg sync.WaitGroup
		for i, p := range parents {
			wg.Go(func() { _, errs[i] = srv.SendPrompt(ctx, p.ID, "delegate this "+marker) })
		}
		wg.Wait()
		for i, p := range parents {
			if errs[i] != nil {
				t.Fatalf("prompt of %s: %v", p.ID, errs[i])
			}
			children := srv.Children(t, ctx, p.ID)
			if len(children) != 1 {
				t.Fatalf("%s has %d children, want 1", p.ID, len(children))
			}
			child := children[0].ID
			reqs := ocTurns(api.Requests())[child]
			if len(reqs) == 0 || !strings.Contains(reqs[0].SystemText(), sidecar.inject(child)) {
				t.Errorf("child %s's first request lacks its own %s", child, sidecar.inject(child))
			}
			other := parents[1-i].ID
			if len(reqs) > 0 && (strings.Contains(reqs[0].AllText(), other) || reqs[0].ParentSessionID() != p.ID) {
				t.Errorf("child %s's first request names the other parent %s", child, other)
			}
			for _, c := range sidecar.callsFor(child) {
				if c.Parent != p.ID {
					t.Errorf("sidecar call for child %s names parent %q, want %s", child, c.Parent, p.ID)
				}
			}
		}
	})

	t.Run("Compaction", func(t *testing.T) {
		if spawnParent == "" {
			t.Skip("Spawn did not run")
		}
		ctx := t.Context()
		before := len(api.Requests())
		start := time.Now()
		srv.Summarize(t, ctx, spawnParent)
		t.Logf("timing: summarize %v", time.Since(start).Round(time.Millisecond))

		compacting := slices.DeleteFunc(sidecar.callsFor(spawnParent), func(c ocCall) bool { return c.Purpose != "compacting" })
		if len(compacting) != 1 {
			t.Fatalf("got %d inject calls with purpose=compacting for %s, want 1", len(compacting), spawnParent)
		}
		var summary []chatapi.Request
		for _, r := range api.Requests()[before:] {
			t.Logf("request %d after summarize: session %s, %d tools, last user text %.120q", r.Seq, r.SessionID(), len(r.Tools), r.LastUserText())
			if strings.Contains(r.AllText(), sidecar.compact(spawnParent)) {
				summary = append(summary, r)
			}
		}
		if len(summary) != 1 {
			t.Errorf("got %d requests carrying %s, want the one compaction request", len(summary), sidecar.compact(spawnParent))
		}
		ocAssertOffline(t, api)
	})

	t.Run("Refused", func(t *testing.T) {
		ctx := t.Context()
		parent := srv.CreateSession(t, ctx, "refused "+marker)
		sidecar.refuse(parent.ID, "REFUSED-"+marker)
		msg := srv.Prompt(t, ctx, parent.ID, "delegate this "+marker)
		if got := msg.Text(); got != "PARENT-DONE-"+marker {
			t.Errorf("parent's answer %q, want PARENT-DONE-%s", got, marker)
		}
		if children := srv.Children(t, ctx, parent.ID); len(children) != 0 {
			t.Errorf("refused spawn made children %+v", children)
		}
		reqs := ocTurns(api.Requests())[parent.ID]
		if len(reqs) != 2 {
			t.Fatalf("got %d requests of the parent, want 2", len(reqs))
		}
		if got := reqs[1].ToolResults(); len(got) != 1 || !strings.Contains(got[0].Content.Text(), "refused as the sidecar words it: REFUSED-"+marker) {
			t.Errorf("tool results after a refusal %+v, want the sidecar's message, as given", got)
		}
	})

	t.Run("SlowSidecar", func(t *testing.T) {
		ctx := t.Context()
		parent := srv.CreateSession(t, ctx, "slow "+marker)
		sidecar.hang(parent.ID)
		start := time.Now()
		msg := srv.Prompt(t, ctx, parent.ID, "delegate this "+marker)
		took := time.Since(start)
		t.Logf("timing: prompt with a sidecar that never answers %v (4 sidecar calls, 1 s plugin timeout each)", took.Round(time.Millisecond))
		if got := msg.Text(); got != "PARENT-DONE-"+marker {
			t.Fatalf("parent's answer %q, want PARENT-DONE-%s", got, marker)
		}
		children := srv.Children(t, ctx, parent.ID)
		if len(children) != 1 {
			t.Fatalf("got %d children, want 1: a silent sidecar must not stop the spawn", len(children))
		}
		reqs := ocTurns(api.Requests())[children[0].ID]
		if len(reqs) == 0 {
			t.Fatal("the child sent no model request")
		}
		if strings.Contains(reqs[0].SystemText(), "INJECT-") {
			t.Errorf("child's first request carries injected text from a sidecar that never answered")
		}
	})

	// Bun's fetch sends even loopback requests through HTTP(S)_PROXY unless
	// NO_PROXY names the host; the plugin must reach the sidecar anyway.
	t.Run("ProxyWithoutNoProxy", func(t *testing.T) {
		ctx := t.Context()
		proxied := opts
		proxied.Env = map[string]string{"HEIRLOOM_URL": sidecar.URL(), "HEIRLOOM_TOKEN": ocToken, "NO_PROXY": "", "no_proxy": ""}
		srv2 := opencode.Serve(t, ctx, proxied)
		parent := srv2.CreateSession(t, ctx, "proxied "+marker)
		srv2.Prompt(t, ctx, parent.ID, "delegate this "+marker)
		children := srv2.Children(t, ctx, parent.ID)
		if len(children) != 1 {
			t.Fatalf("got %d children, want 1", len(children))
		}
		reqs := ocTurns(api.Requests())[children[0].ID]
		if len(reqs) == 0 || !strings.Contains(reqs[0].SystemText(), sidecar.inject(children[0].ID)) {
			t.Errorf("child's first request lacks %s with a proxy for every host", sidecar.inject(children[0].ID))
		}
		// The model requests went through the proxy, which is the stand-in itself.
		for _, c := range api.Calls() {
			if c.Method == http.MethodConnect || !strings.HasPrefix(c.Host, "127.0.0.1:") {
				t.Errorf("opencode tried to reach %s (%s %s)", c.Host, c.Method, c.Path)
			}
		}
		srv2.Close()
	})

	t.Run("Restart", func(t *testing.T) {
		ctx := t.Context()
		srv.Close()
		again := opts
		again.Dir, again.Home = srv.Dir, srv.Home
		srv2 := opencode.Serve(t, ctx, again)
		t.Logf("timing: restart on the same data %v", srv2.Started.Round(time.Millisecond))
		sessions := srv2.Sessions(t, ctx)
		if !slices.ContainsFunc(sessions, func(s opencode.Session) bool { return s.ID == spawnParent }) {
			t.Errorf("after a restart the sessions %+v lack %s", sessions, spawnParent)
		}
	})
}

// ocToken is the bearer token the plugin is given.
const ocToken = "test-token"

// ocTurns groups the agents' model requests (side requests dropped) by the
// session that sent them, in arrival order.
func ocTurns(reqs []chatapi.Request) map[string][]chatapi.Request {
	out := make(map[string][]chatapi.Request)
	for _, r := range reqs {
		if !r.IsSideRequest() {
			out[r.SessionID()] = append(out[r.SessionID()], r)
		}
	}
	return out
}

// ocAssertOffline fails tb when OpenCode tried to reach a host other than
// the stand-in: with the proxy variables opencode.Env sets, such an attempt
// lands in the stand-in's log as a CONNECT (or an absolute-URL request).
func ocAssertOffline(tb testing.TB, api *chatapi.Server) {
	tb.Helper()
	for _, c := range api.Calls() {
		tb.Logf("stand-in also got: %s %s %s?%s → %d", c.Method, c.Host, c.Path, c.RawQuery, c.Status)
		if c.Method == http.MethodConnect || !strings.HasPrefix(c.Host, "127.0.0.1:") {
			tb.Errorf("opencode tried to reach %s (%s %s): it must stay on loopback", c.Host, c.Method, c.Path)
		}
	}
}

// ocMarker returns a random token that tells this test's text apart.
func ocMarker(tb testing.TB) string {
	tb.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	return strings.ToUpper(fmt.Sprintf("M%x", b))
}

// ocCall is one request the sidecar stand-in got from the plugin.
type ocCall struct {
	At                             time.Time
	Method, Path                   string
	Session, Parent, Purpose, Auth string
	Body                           []byte
}

// ocSidecar stands in for heirloom's plugin API: POST /api/inject answers
// {"context": "INJECT-<marker>-<session>"} ("COMPACT-..." for
// purpose=compacting), POST /api/spawn-check allows every spawn unless told
// to refuse it, and every call is logged.
type ocSidecar struct {
	marker string
	srv    *httptest.Server

	mu      sync.Mutex
	calls   []ocCall
	refused map[string]string   // session → reason
	hanging map[string]struct{} // session (or its parent) → never answer
}

func newOCSidecar(tb testing.TB, marker string) *ocSidecar {
	s := &ocSidecar{marker: marker, refused: map[string]string{}, hanging: map[string]struct{}{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.srv.Close)
	return s
}

func (s *ocSidecar) URL() string { return s.srv.URL }

func (s *ocSidecar) inject(session string) string  { return "INJECT-" + s.marker + "-" + session }
func (s *ocSidecar) compact(session string) string { return "COMPACT-" + s.marker + "-" + session }

// refuse makes spawn-check refuse spawns by session with reason.
func (s *ocSidecar) refuse(session, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused[session] = reason
}

// hang makes every call about session, or naming it as parent, wait until
// the plugin gives up.
func (s *ocSidecar) hang(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hanging[session] = struct{}{}
}

// callsFor returns the logged calls about any of sessions, in order.
func (s *ocSidecar) callsFor(sessions ...string) []ocCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(s.calls), func(c ocCall) bool { return !slices.Contains(sessions, c.Session) })
}

func (s *ocSidecar) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	q := r.URL.Query()
	c := ocCall{At: time.Now(), Method: r.Method, Path: r.URL.Path, Session: q.Get("session"), Parent: q.Get("parent"),
		Purpose: q.Get("purpose"), Auth: r.Header.Get("Authorization"), Body: body}
	harness := q.Get("harness")
	if r.URL.Path == "/api/inject" {
		// The request is the JSON body (POST); query parameters would be the deprecated GET.
		var req struct{ Harness, Session, Parent, Purpose string }
		if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil {
			http.Error(w, `{"error":"want POST with a JSON body","code":"bad_json"}`, http.StatusBadRequest)
			return
		}
		harness, c.Session, c.Parent, c.Purpose = req.Harness, req.Session, req.Parent, req.Purpose
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	_, hangSelf := s.hanging[c.Session]
	_, hangParent := s.hanging[c.Parent]
	reason, refuse := s.refused[c.Session]
	s.mu.Unlock()

	if hangSelf || hangParent {
		select {
		case <-r.Context().Done(): // the plugin gave up
		case <-time.After(30 * time.Second):
		}
		return
	}
	var reply any
	switch {
	case r.URL.Path == "/api/inject" && harness == "opencode" && c.Purpose == "compacting":
		reply = map[string]string{"context": s.compact(c.Session)}
	case r.URL.Path == "/api/inject" && harness == "opencode":
		reply = map[string]string{"context": s.inject(c.Session)}
	case r.URL.Path == "/api/spawn-check" && r.Method == http.MethodPost && refuse:
		reply = map[string]any{"allow": false, "reason": reason, "message": "refused as the sidecar words it: " + reason}
	case r.URL.Path == "/api/spawn-check" && r.Method == http.MethodPost:
		reply = map[string]any{"allow": true}
	default:
		http.Error(w, `{"error":"not found","code":"not_found"}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply)
}

// ocCallKinds names each call "inject|spawn-check parent|child".
func ocCallKinds(calls []ocCall, parent, child string) []string {
	var out []string
	for _, c := range calls {
		who := map[string]string{parent: "parent", child: "child"}[c.Session]
		out = append(out, strings.TrimPrefix(c.Path, "/api/")+" "+who)
	}
	return out
}

// ocCallSummary renders calls for the test log, with times since the first.
func ocCallSummary(calls []ocCall, parent, child string) string {
	var b strings.Builder
	kinds := ocCallKinds(calls, parent, child)
	for i, c := range calls {
		fmt.Fprintf(&b, "\n  +%4dms %s (session=%s parent=%s purpose=%s)", c.At.Sub(calls[0].At).Milliseconds(), kinds[i], c.Session, c.Parent, c.Purpose)
	}
	return b.String()
}

// tailText returns the end of a long text, for failure messages.
func tailText(s string) string {
	const n = 2000
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
