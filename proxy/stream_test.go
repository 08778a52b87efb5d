package proxy_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

func oc(kind adapters.Kind, sid string) adapters.Event {
	return adapters.Event{Harness: "opencode", Kind: kind, Name: string(kind), SessionID: sid, Cwd: "/work/app", At: time.Unix(1795314582, 0)}
}

func consume(t *testing.T, s *proxy.Server, evs ...adapters.Event) {
	t.Helper()
	for _, ev := range evs {
		if err := s.Engine.Consume(t.Context(), ev); err != nil {
			t.Fatalf("consume %s: %v", ev.Kind, err)
		}
	}
}

// getInject asks POST /api/inject as the plugins do, with the request written as a query
// string (harness=…&session=…) for brevity.
func getInject(t *testing.T, s *proxy.Server, query string) (int, string) {
	t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	req := map[string]string{}
	for k := range q {
		req[k] = q.Get(k)
	}
	body, _ := json.Marshal(req)
	status, got, _ := do(t, "POST", s.URL()+"/api/inject", string(body), nil)
	ctx, _ := got["context"].(string)
	return status, ctx
}

// TestInject_Methods: POST takes a JSON body; the deprecated GET answers the same with a
// Deprecation header naming its successor; a bad body or another method is refused.
func TestInject_Methods(t *testing.T) {
	s := MustOpenServer(t, nil)
	parent, child := oc(adapters.KindSessionStart, "ses_P"), oc(adapters.KindSessionStart, "ses_C")
	child.ParentSessionID = "ses_P"
	prompt := oc(adapters.KindTurns, "ses_P")
	prompt.Turns = []adapters.Turn{{ID: "prt_1", Role: "user", Text: "Refactor the parser. METHODMARK."}}
	consume(t, s, parent, child, prompt)

	status, post, h := do(t, "POST", s.URL()+"/api/inject", `{"harness":"opencode","session":"ses_C"}`, nil)
	if status != 200 || !strings.Contains(post["context"].(string), "METHODMARK") || h.Get("Deprecation") != "" {
		t.Fatalf("POST: %d %v %v", status, post, h)
	}
	status, get, h := do(t, "GET", s.URL()+"/api/inject?harness=opencode&session=ses_C", "", nil)
	if status != 200 || get["context"] != post["context"] || h.Get("Deprecation") == "" || !strings.Contains(h.Get("Link"), "successor-version") {
		t.Fatalf("GET: %d %v %v; want the same context, deprecated", status, get, h)
	}
	for _, tc := range []struct {
		method, body string
		status       int
		code         string
	}{
		{"POST", `{"session":"ses_C","bogus":1}`, 400, "bad_json"},
		{"POST", `not json`, 400, "bad_json"},
		{"POST", `{"harness":"opencode"}`, 400, "invalid"},
		{"POST", `{"session":"ses_C","purpose":"later"}`, 400, "invalid"},
		{"PUT", `{"session":"ses_C"}`, 405, "method_not_allowed"},
	} {
		if status, got, _ := do(t, tc.method, s.URL()+"/api/inject", tc.body, nil); status != tc.status || got["code"] != tc.code {
			t.Errorf("%s %s: got %d %v, want %d %s", tc.method, tc.body, status, got, tc.status, tc.code)
		}
	}
}

func TestStreamLineageAndInject(t *testing.T) {
	s := MustOpenServer(t, nil)
	parent := oc(adapters.KindSessionStart, "ses_P")
	parent.Title = "parser refactor"
	prompt := oc(adapters.KindTurns, "ses_P")
	prompt.Turns = []adapters.Turn{{ID: "prt_1", Role: "user", Text: "Refactor the parser. OCMARK-55. Never touch vendor/."}}
	reply1, reply2 := oc(adapters.KindTurns, "ses_P"), oc(adapters.KindTurns, "ses_P")
	reply1.Turns = []adapters.Turn{{ID: "prt_2", Role: "assistant", Text: "Look"}}
	reply2.Turns = []adapters.Turn{{ID: "prt_2", Role: "assistant", Text: "Looking at parse.go first."}}
	spawn := oc(adapters.KindSpawn, "ses_P")
	spawn.Spawn = &adapters.Spawn{ToolUseID: "call_1", Description: "find callers", Prompt: "Find every caller of parse()", Type: "general"}
	// The child's session event arrives before the spawn names it (stream order varies).
	child := oc(adapters.KindSessionStart, "ses_C")
	child.ParentSessionID, child.AgentName, child.Title = "ses_P", "general", "find callers (@general subagent)"
	named := spawn
	named.Spawn = &adapters.Spawn{ToolUseID: "call_1", Description: "find callers", Prompt: "Find every caller of parse()", Type: "general", ChildSessionID: "ses_C"}
	consume(t, s, parent, prompt, reply1, reply2, spawn, child, named)

	c := mustSession(t, s, "ses_C")
	if c.ParentID != "ses_P" || c.Depth != 1 || c.Objective != "Find every caller of parse()" || c.AgentType != "general" {
		t.Fatalf("child: got %+v", c)
	}
	if r := mustRun(t, s, "call_1"); r.ChildID != "ses_C" || r.Status != kv.RunRunning || r.RootID != "ses_P" {
		t.Fatalf("run: got %+v", r)
	}
	turns, _ := s.Engine.Store.Turns(t.Context(), "default", "ses_P", 0, 0)
	if len(turns) != 2 || turns[1].Text != "Looking at parse.go first." {
		t.Fatalf("parent turns (the growing part must be upserted): got %+v", turns)
	}

	status, got := getInject(t, s, "harness=opencode&session=ses_C")
	if status != 200 || !strings.Contains(got, "## Inherited from Parent Session") || !strings.Contains(got, "OCMARK-55") || !strings.Contains(got, "Looking at parse.go first.") {
		t.Fatalf("inject for the child: %d %q", status, got)
	}
	if _, got := getInject(t, s, "harness=opencode&session=ses_P"); got != "" {
		t.Fatalf("inject for a top-level session: got %q, want nothing", got)
	}
	// A session the stream has not reported yet: the plugin's explicit parent is enough.
	if _, got := getInject(t, s, "harness=opencode&session=ses_new&parent=ses_P"); !strings.Contains(got, "OCMARK-55") {
		t.Fatalf("inject with explicit parent: got %q", got)
	}
	if _, got := getInject(t, s, "harness=opencode&session=ses_C&purpose=compacting"); !strings.Contains(got, "Find every caller of parse()") {
		t.Fatalf("compacting context: got %q", got)
	}
	if status, _ := getInject(t, s, "harness=opencode"); status != 400 {
		t.Fatalf("inject without session: got %d, want 400", status)
	}

	// The spawn's result, then compaction and idle.
	result := named
	result.Kind = adapters.KindSpawnResult
	result.Result = &adapters.Result{AgentID: "ses_C", Status: "completed", Text: "Three callers."}
	// Two compactions a minute apart, the second reported twice (Gateway and plugin).
	later := oc(adapters.KindCompacted, "ses_P")
	later.At = later.At.Add(time.Minute)
	again := later
	again.At = again.At.Add(2 * time.Second)
	consume(t, s, result, oc(adapters.KindCompacted, "ses_P"), later, again)
	if r := mustRun(t, s, "call_1"); r.Status != "completed" || r.Result != "Three callers." {
		t.Fatalf("finished run: got %+v", r)
	}
	if p := mustSession(t, s, "ses_P"); p.Compactions != 2 || p.Title != "parser refactor" || p.Objective == "" {
		t.Fatalf("parent: got %+v", p)
	}
}

func TestStreamIdleEndsRun(t *testing.T) {
	s := MustOpenServer(t, nil)
	spawn := oc(adapters.KindSpawn, "ses_P")
	spawn.Spawn = &adapters.Spawn{ToolUseID: "call_9", Prompt: "do it", Type: "general", ChildSessionID: "ses_C"}
	answer := oc(adapters.KindTurns, "ses_C")
	answer.Turns = []adapters.Turn{{ID: "p1", Role: "user", Text: "do it"}, {ID: "p2", Role: "assistant", Text: "Done: 42."}}
	consume(t, s, spawn, answer, oc(adapters.KindIdle, "ses_C"))
	if r := mustRun(t, s, "call_9"); r.Status != kv.RunCompleted || r.Result != "Done: 42." {
		t.Fatalf("got %+v", r)
	}
}

// TestSpawnCheck: POST /api/spawn-check answers with engine.SpawnCheck's decision and records
// the refused call under its call_id with the task's arguments; an unknown session is allowed;
// the body may be empty, and a body that is not JSON is a 400.
func TestSpawnCheck(t *testing.T) {
	s := MustOpenServer(t, func(s *proxy.Server) {
		s.Engine.Config.Spawn = engine.SpawnLimits{MaxDepth: 1, MaxChildren: 1, Mode: engine.SpawnEnforce}
	})
	root := oc(adapters.KindSessionStart, "ses_P")
	child := oc(adapters.KindSessionStart, "ses_C")
	child.ParentSessionID = "ses_P"
	consume(t, s, root, child)
	check := func(session, body string) (int, map[string]any) {
		// The query the OpenCode plugin sends: the parent it knows and its directory too.
		q := url.Values{"harness": {"opencode"}, "session": {session}, "directory": {"/work/app"}}
		if session == "ses_C" {
			q.Set("parent", "ses_P")
		}
		status, got, _ := do(t, "POST", s.URL()+"/api/spawn-check?"+q.Encode(), body, nil)
		return status, got
	}
	const call = `{"tool":"task","call_id":"call_%s","args":{"description":"d","prompt":"p %s","subagent_type":"general","extra":1}}`
	if _, got := check("ses_P", fmt.Sprintf(call, "1", "1")); got["allow"] != true || got["reason"] != nil || got["message"] != nil {
		t.Fatalf("root may spawn: got %v", got)
	}
	if _, got := check("ses_P", fmt.Sprintf(call, "2", "2")); got["allow"] != false || got["reason"] != "parent already has 1 active sub-agents (spawn.max_children 1)" ||
		got["message"] != "heirloom refused this sub-agent: parent already has 1 active sub-agents (spawn.max_children 1)" {
		t.Fatalf("root's second spawn: got %v, want refused by max_children, with the message the model reads", got)
	}
	if _, got := check("ses_C", fmt.Sprintf(call, "3", "3")); got["allow"] != false || got["reason"] != "depth 2 exceeds spawn.max_depth 1" {
		t.Fatalf("depth-1 session with max depth 1: got %v, want refused by max_depth", got)
	}
	if r := mustRun(t, s, "call_3"); r.Status != kv.RunRefused || r.ParentID != "ses_C" || r.Prompt != "p 3" || r.Description != "d" || r.Type != "general" || r.Depth != 2 {
		t.Fatalf("refused run: got %+v", r)
	}
	if _, got := check("ses_unknown", ""); got["allow"] != true {
		t.Fatalf("unknown session: got %v", got)
	}
	if _, got := check("ses_C", `{"prompt":"x"}`); got["allow"] != false {
		t.Fatalf("no call id: got %v, want the decision all the same", got)
	}
	if status, _ := check("ses_C", `{not json`); status != http.StatusBadRequest {
		t.Fatalf("bad JSON: got %d, want 400", status)
	}
	if status, _, _ := do(t, "GET", s.URL()+"/api/spawn-check", "", nil); status != http.StatusMethodNotAllowed {
		t.Fatalf("GET spawn-check: got %d", status)
	}
}

// TestStreamStatedDepth: a sub-agent whose parent's own link has not arrived yet still gets the
// depth the harness states (OpenClaw spawnDepth), not its unknown parent's depth plus one.
func TestStreamStatedDepth(t *testing.T) {
	s := MustOpenServer(t, nil)
	grandchild := oc(adapters.KindSessionStart, "ses_G")
	grandchild.ParentSessionID, grandchild.Depth = "ses_C", 2
	consume(t, s, grandchild)
	if g := mustSession(t, s, "ses_G"); g.ParentID != "ses_C" || g.Depth != 2 {
		t.Fatalf("grandchild: got parent %q depth %d, want ses_C, 2", g.ParentID, g.Depth)
	}
	unstated := oc(adapters.KindSessionStart, "ses_H")
	unstated.ParentSessionID = "ses_G"
	consume(t, s, unstated)
	if h := mustSession(t, s, "ses_H"); h.Depth != 3 {
		t.Errorf("unstated depth: got %d, want the parent's plus one (3)", h.Depth)
	}
}
