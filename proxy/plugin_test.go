package proxy_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/proxy"
)

// keyedHarness is an adapters.Plugin over OpenClaw-shaped keys ("agent:<scope>:…"); its plugin
// posts {"hook","session","parent"} bodies.
type keyedHarness struct{}

// withOpenClaw registers keyedHarness as "openclaw" beside Claude Code, with gw (when not nil)
// as its Gateway.
func withOpenClaw(s *proxy.Server, gw adapters.Describer) {
	reg, err := adapters.NewRegistry(claudecode.Registration(), adapters.Registration{Name: "openclaw", Plugin: keyedHarness{}})
	if err != nil {
		panic(err)
	}
	s.Harnesses = reg
	if gw != nil {
		s.Engine.Describers = map[string]adapters.Describer{"openclaw": gw}
	}
}

func (keyedHarness) DecodeHook(body []byte) (adapters.Event, error) {
	var in struct{ Hook, Session, Parent string }
	if err := json.Unmarshal(body, &in); err != nil {
		return adapters.Event{}, adapters.Malformed("hook body: %v", err)
	}
	ev := adapters.Event{Harness: "openclaw", Name: in.Hook, SessionID: in.Session, Scope: keyedHarness{}.ScopeOf(in.Session)}
	switch in.Hook {
	case "subagent_spawned":
		ev.Kind, ev.ParentSessionID = adapters.KindSessionUpdate, in.Parent
	case "after_compaction":
		ev.Kind = adapters.KindCompacted
	default:
		ev.Kind = adapters.KindUnknown
	}
	return ev, nil
}

func (keyedHarness) ScopeOf(key string) string {
	parts := strings.SplitN(key, ":", 3)
	if len(parts) < 3 || parts[0] != "agent" {
		return ""
	}
	return parts[1]
}

func (keyedHarness) IsSubagent(key string) bool { return strings.Contains(key, ":subagent:") }

// gateway is an adapters.Describer that answers from a table, or blocks until its context ends.
type gateway struct {
	mu      sync.Mutex
	events  map[string][]adapters.Event
	block   bool
	asked   []string
	waitFor time.Duration // the deadline the last question carried, from when it was asked
}

func (g *gateway) Describe(ctx context.Context, key string) ([]adapters.Event, error) {
	g.mu.Lock()
	g.asked = append(g.asked, key)
	if d, ok := ctx.Deadline(); ok {
		g.waitFor = time.Until(d)
	}
	block, evs := g.block, g.events[key]
	g.mu.Unlock()
	if block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return evs, nil
}

func (g *gateway) questions() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.asked...)
}

const (
	clawParent = "agent:research:main"
	clawChild  = "agent:research:subagent:0b7e"
)

// clawParentEvents store a parent session in scope "research" with a marked prompt.
func clawParentEvents() []adapters.Event {
	at := time.Unix(1795314813, 0)
	start := adapters.Event{Harness: "openclaw", Scope: "research", Kind: adapters.KindSessionStart, SessionID: clawParent, Title: "parent", At: at}
	prompt := start
	prompt.Kind = adapters.KindTurns
	prompt.Turns = []adapters.Turn{{ID: "m1", Role: "user", Text: "Port the parser to Go. CLAWMARK-7. Never touch vendor/."}}
	return []adapters.Event{start, prompt}
}

func TestPluginHook(t *testing.T) {
	s := MustOpenServer(t, func(s *proxy.Server) { withOpenClaw(s, nil) })
	consume(t, s, clawParentEvents()...)
	url := s.URL() + "/hooks/openclaw"

	t.Run("SubagentSpawnedLinksInTheKeysScope", func(t *testing.T) {
		status, got, _ := do(t, "POST", url, `{"hook":"subagent_spawned","session":"`+clawChild+`","parent":"`+clawParent+`"}`, nil)
		if status != 200 || len(got) != 0 {
			t.Fatalf("got %d %v, want 200 {}", status, got)
		}
		child, err := s.Engine.Store.GetSession(t.Context(), "research", clawChild)
		if err != nil || child.ParentID != clawParent || child.Depth != 1 || child.Harness != "openclaw" {
			t.Fatalf("child in scope research: got %+v, %v", child, err)
		}
		if _, err := s.Engine.Store.GetSession(t.Context(), "default", clawChild); err == nil {
			t.Errorf("child stored in the configured scope too, want only in its key's scope")
		}
	})
	t.Run("CompactionCounted", func(t *testing.T) {
		do(t, "POST", url, `{"hook":"after_compaction","session":"`+clawParent+`"}`, nil)
		if p, _ := s.Engine.Store.GetSession(t.Context(), "research", clawParent); p.Compactions != 1 {
			t.Errorf("compactions: got %d, want 1", p.Compactions)
		}
	})
	t.Run("UnknownHookAnsweredEmpty", func(t *testing.T) {
		if status, got, _ := do(t, "POST", url, `{"hook":"llm_output","session":"`+clawParent+`"}`, nil); status != 200 || len(got) != 0 {
			t.Errorf("got %d %v, want 200 {}", status, got)
		}
	})
	t.Run("ErrMalformed", func(t *testing.T) {
		if status, got, _ := do(t, "POST", url, `{"hook":`, nil); status != 400 || got["code"] != "bad_json" {
			t.Errorf("got %d %v, want 400 bad_json", status, got)
		}
	})
	t.Run("ErrMethod", func(t *testing.T) {
		if status, _, _ := do(t, "GET", url, "", nil); status != 405 {
			t.Errorf("got %d, want 405", status)
		}
	})
	t.Run("ErrNoAdapter", func(t *testing.T) {
		if status, _, _ := do(t, "POST", s.URL()+"/hooks/codex", `{}`, nil); status != 404 {
			t.Errorf("got %d, want 404", status)
		}
	})
}

func TestPluginHook_NotConfigured(t *testing.T) {
	s := MustOpenServer(t, nil)
	if status, got, _ := do(t, "POST", s.URL()+"/hooks/openclaw", `{}`, nil); status != 404 || got["code"] != "not_found" {
		t.Errorf("got %d %v, want 404 not_found", status, got)
	}
}

func TestInject_OpenClaw(t *testing.T) {
	t.Run("ChildInheritsFromItsKeysScope", func(t *testing.T) {
		s := MustOpenServer(t, func(s *proxy.Server) { withOpenClaw(s, nil) })
		child := adapters.Event{Harness: "openclaw", Scope: "research", Kind: adapters.KindSessionStart, SessionID: clawChild, ParentSessionID: clawParent}
		consume(t, s, append(clawParentEvents(), child)...)
		status, text := getInject(t, s, "harness=openclaw&session="+clawChild)
		if status != 200 || !strings.HasPrefix(text, "## Inherited from Parent Session") || !strings.Contains(text, "CLAWMARK-7") {
			t.Fatalf("got %d %q, want the inherited block with the parent's marker", status, text)
		}
		// Without the harness the key is looked up in the configured scope, where it is unknown.
		if _, text := getInject(t, s, "session="+clawChild); text != "" {
			t.Errorf("configured scope: got %q, want nothing", text)
		}
	})
	t.Run("UnknownParentAskedOfTheGateway", func(t *testing.T) {
		link := adapters.Event{Harness: "openclaw", Scope: "research", Kind: adapters.KindSessionUpdate, SessionID: clawChild, ParentSessionID: clawParent}
		gw := &gateway{events: map[string][]adapters.Event{clawChild: {link}}}
		s := MustOpenServer(t, func(s *proxy.Server) { withOpenClaw(s, gw) })
		consume(t, s, clawParentEvents()...)
		if _, text := getInject(t, s, "harness=openclaw&session="+clawChild); !strings.Contains(text, "CLAWMARK-7") {
			t.Fatalf("got %q, want the block built after asking the Gateway", text)
		}
		if _, text := getInject(t, s, "harness=openclaw&session="+clawChild); !strings.Contains(text, "CLAWMARK-7") {
			t.Fatalf("second call: got %q", text)
		}
		if got := gw.questions(); len(got) != 1 || got[0] != clawChild {
			t.Errorf("questions: got %v, want one, about the child (the answer is stored)", got)
		}
		// A top-level key is never a question: it has no parent to find.
		getInject(t, s, "harness=openclaw&session="+clawParent)
		if got := gw.questions(); len(got) != 1 {
			t.Errorf("questions after a top-level inject: got %v", got)
		}
	})
	t.Run("SlowGatewayBoundedByDescribeWait", func(t *testing.T) {
		gw := &gateway{block: true}
		s := MustOpenServer(t, func(s *proxy.Server) {
			withOpenClaw(s, gw)
			s.Engine.Config.DescribeWait = 50 * time.Millisecond
		})
		if status, text := getInject(t, s, "harness=openclaw&session="+clawChild); status != 200 || text != "" {
			t.Fatalf("got %d %q, want 200 and nothing", status, text)
		}
		gw.mu.Lock()
		defer gw.mu.Unlock()
		if gw.waitFor <= 0 || gw.waitFor > 50*time.Millisecond {
			t.Errorf("question's deadline: got %v from the ask, want within DescribeWait (50ms)", gw.waitFor)
		}
	})
	t.Run("NeverAskedWhenNegative", func(t *testing.T) {
		gw := &gateway{}
		s := MustOpenServer(t, func(s *proxy.Server) { withOpenClaw(s, gw); s.Engine.Config.DescribeWait = -1 })
		getInject(t, s, "harness=openclaw&session="+clawChild)
		if got := gw.questions(); len(got) != 0 {
			t.Errorf("questions: got %v, want none", got)
		}
	})
}

// TestInject_DirectoryGivesAProject: OpenClaw's rows of top-level sessions name no directory, so
// the plugin passes the workspace. A new session then recovers its project's latest checkpoint on
// its first call; without the directory it has no project and recovers nothing.
func TestInject_DirectoryGivesAProject(t *testing.T) {
	s := MustOpenServer(t, func(s *proxy.Server) { withOpenClaw(s, nil) })
	evs := clawParentEvents()
	for i := range evs {
		evs[i].Cwd = t.TempDir()
	}
	dir := evs[0].Cwd
	// The new sessions are known from the Gateway's rows, which name no directory.
	fresh := adapters.Event{Harness: "openclaw", Scope: "research", Kind: adapters.KindSessionStart, SessionID: "agent:research:fresh"}
	other := fresh
	other.SessionID = "agent:research:other"
	consume(t, s, append(evs, fresh, other)...)
	if status, got, _ := do(t, "POST", s.URL()+"/api/sessions/"+url.PathEscape(clawParent)+"/checkpoints?scope=research", "", nil); status != 200 {
		t.Fatalf("checkpoint: got %d %v", status, got)
	}
	status, text := getInject(t, s, "harness=openclaw&session=agent:research:fresh&directory="+url.QueryEscape(dir))
	if status != 200 || !strings.Contains(text, "## Recovered Session Checkpoint") || !strings.Contains(text, "CLAWMARK-7") {
		t.Fatalf("got %d %q, want the project's recovered checkpoint", status, text)
	}
	if fresh, err := s.Engine.Store.GetSession(t.Context(), "research", "agent:research:fresh"); err != nil || fresh.Project != dir || fresh.Harness != "openclaw" {
		t.Errorf("fresh session: got %+v, %v; want it recorded with its project", fresh, err)
	}
	if _, text := getInject(t, s, "harness=openclaw&session=agent:research:other"); text != "" {
		t.Errorf("no directory: got %q, want nothing", text)
	}
	// A session heirloom has not heard of is not created from a directory alone.
	getInject(t, s, "harness=openclaw&session=agent:research:unknown&directory="+url.QueryEscape(dir))
	if _, err := s.Engine.Store.GetSession(t.Context(), "research", "agent:research:unknown"); err == nil {
		t.Errorf("an unknown session was recorded from an inject call")
	}
}
