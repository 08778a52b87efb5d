package proxy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

// postHookRaw posts one Claude Code hook payload and returns the reply's bytes.
func postHookRaw(t *testing.T, s *proxy.Server, fields map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(fields)
	resp, err := http.Post(s.URL()+"/hooks/claude-code", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("%v: status %d, %v", fields["hook_event_name"], resp.StatusCode, err)
	}
	return string(b)
}

// TestHook_SpawnRefused: a PreToolUse(Agent) past spawn.max_children is answered with Claude
// Code's deny decision, the reason the model reads naming the limit; in proxy mode the refusal
// wins over the upstream's "allow", whose other fields survive. /metrics counts the refusal by
// harness, limit and enforced.
func TestHook_SpawnRefused(t *testing.T) {
	const want = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",` +
		`"permissionDecisionReason":"heirloom refused this sub-agent: parent already has 1 active sub-agents (spawn.max_children 1)"}}`
	for _, tc := range []struct {
		name, upstream, want string
	}{
		{"Direct", "", want},
		{"OverUpstreamAllow", `{"systemMessage":"memo","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`,
			`{"systemMessage":"memo","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",` +
				`"permissionDecisionReason":"heirloom refused this sub-agent: parent already has 1 active sub-agents (spawn.max_children 1)"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := cct.NewTree(t, "S")
			var up *upstreamServer
			if tc.upstream != "" {
				up = startUpstream(t, reply(tc.upstream))
			}
			s := MustOpenServer(t, func(s *proxy.Server) {
				s.Engine.Config.TranscriptRoots = []string{tr.Root}
				s.Engine.Config.SpawnRecordWait = 5 * time.Millisecond
				s.Engine.Config.Spawn = engine.SpawnLimits{MaxDepth: 3, MaxChildren: 1, Mode: engine.SpawnEnforce}
				s.HookTimeout = 10 * time.Second
				if up != nil {
					s.Upstreams = map[string]*proxy.Upstream{"claude-code": {URL: up.URL + "/hook"}}
				}
			})
			postHookRaw(t, s, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "fan out"}))
			first := postHookRaw(t, s, cct.Spawn(tr, S, "t1", "general-purpose", "one"))
			if tc.upstream == "" && first != "{}" {
				t.Fatalf("allowed spawn: got %s, want {}", first)
			}
			if got := postHookRaw(t, s, cct.Spawn(tr, S, "t2", "general-purpose", "two")); got != tc.want {
				t.Fatalf("refused spawn:\ngot  %s\nwant %s", got, tc.want)
			}
			if r := mustRun(t, s, "t2"); r.Status != kv.RunRefused {
				t.Fatalf("run t2: got %+v, want refused", r)
			}
			postHookRaw(t, s, cct.Spawn(tr, S, "t2", "general-purpose", "two")) // asked again: counted once
			metrics := metricsBody(t, s)
			for _, want := range []string{
				`heirloom_spawn_refused_total{enforced="true",harness="claude-code",limit="max_children"} 1`,
				`heirloom_spawn_refused_total{enforced="true",harness="claude-code",limit="max_depth"} 0`,
				`heirloom_spawn_refused_total{enforced="false",harness="claude-code",limit="max_children"} 0`,
			} {
				if !strings.Contains(metrics, want) {
					t.Errorf("GET /metrics lacks %s", want)
				}
			}
		})
	}
}
