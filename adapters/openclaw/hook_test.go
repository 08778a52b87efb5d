package openclaw_test

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
)

// Bodies as heirloom's plugin posts them for OpenClaw 2026.9.6 (the field names of its SDK types
// PluginHookSubagentSpawnedEvent / PluginHookSubagentContext, PluginHook{Before,After}
// CompactionEvent / PluginHookAgentContext).
const (
	hookSpawned = `{"hook":"subagent_spawned","event":{"runId":"run-1","childSessionKey":"agent:ops:subagent:5e0c","agentId":"ops","label":"research","mode":"run","threadRequested":false,"requester":{"channel":"cli","threadId":7},"resolvedModel":"fake/m","resolvedProvider":"fake"},"ctx":{"runId":"run-1","childSessionKey":"agent:ops:subagent:5e0c","requesterSessionKey":"agent:ops:main"}}`
	hookBefore  = `{"hook":"before_compaction","event":{"messageCount":12,"sessionFile":"/home/dev/.openclaw/agents/ops/sessions/s1.jsonl"},"ctx":{"sessionKey":"agent:ops:main","agentId":"ops","sessionId":"s1","workspaceDir":"/home/dev/work","runId":"run-2"}}`
	hookAfter   = `{"hook":"after_compaction","event":{"messageCount":-1,"compactedCount":-1,"tokenCount":900,"sessionFile":"/home/dev/.openclaw/agents/ops/sessions/s2.jsonl","previousSessionId":"s1"},"ctx":{"sessionKey":"agent:ops:main","sessionId":"s2"}}`
)

func TestDecodeHook(t *testing.T) {
	tests := []struct {
		name string
		body string
		want adapters.Event
	}{
		{"SubagentSpawned", hookSpawned, adapters.Event{
			Harness: "openclaw", Kind: adapters.KindSessionUpdate, Name: "subagent_spawned", Scope: "ops",
			SessionID: "agent:ops:subagent:5e0c", ParentSessionID: "agent:ops:main", Title: "research"}},
		{"SubagentSpawnedChildFromCtx", `{"hook":"subagent_spawned","event":{},"ctx":{"childSessionKey":"agent:main:subagent:9","requesterSessionKey":"agent:main:subagent:1"}}`, adapters.Event{
			Harness: "openclaw", Kind: adapters.KindSessionUpdate, Name: "subagent_spawned", Scope: "main",
			SessionID: "agent:main:subagent:9", ParentSessionID: "agent:main:subagent:1"}},
		{"SubagentSpawnedNoParent", `{"hook":"subagent_spawned","event":{"childSessionKey":"agent:main:subagent:9","label":5}}`, adapters.Event{
			Harness: "openclaw", Kind: adapters.KindSessionUpdate, Name: "subagent_spawned", Scope: "main", SessionID: "agent:main:subagent:9"}},
		{"SubagentSpawnedSelfParent", `{"hook":"subagent_spawned","event":{"childSessionKey":"agent:main:subagent:9"},"ctx":{"requesterSessionKey":"agent:main:subagent:9"}}`, adapters.Event{
			Harness: "openclaw", Kind: adapters.KindSessionUpdate, Name: "subagent_spawned", Scope: "main", SessionID: "agent:main:subagent:9"}},
		{"BeforeCompaction", hookBefore, adapters.Event{
			Harness: "openclaw", Kind: adapters.KindPreCompact, Name: "before_compaction", Scope: "ops", SessionID: "agent:ops:main",
			TranscriptPath: "/home/dev/.openclaw/agents/ops/sessions/s1.jsonl", Cwd: "/home/dev/work"}},
		{"BeforeCompactionBuiltinRunner", `{"hook":"before_compaction","event":{"messageCount":3,"sessionFile":5},"ctx":{"sessionKey":"main"}}`, adapters.Event{
			Harness: "openclaw", Kind: adapters.KindPreCompact, Name: "before_compaction", Scope: "main", SessionID: "main"}},
		{"AfterCompaction", hookAfter, adapters.Event{
			Harness: "openclaw", Kind: adapters.KindCompacted, Name: "after_compaction", Scope: "ops", SessionID: "agent:ops:main",
			TranscriptPath: "/home/dev/.openclaw/agents/ops/sessions/s2.jsonl"}},
		{"AfterCompactionNullEvent", `{"hook":"after_compaction","event":null,"ctx":{"sessionKey":"agent:ops:main"}}`, adapters.Event{
			Harness: "openclaw", Kind: adapters.KindCompacted, Name: "after_compaction", Scope: "ops", SessionID: "agent:ops:main"}},
		// compactedCount 0: the runner compacted nothing; no new epoch.
		{"AfterCompactionNothingCompacted", `{"hook":"after_compaction","event":{"messageCount":-1,"compactedCount":0},"ctx":{"sessionKey":"agent:ops:main"}}`, adapters.Event{
			Harness: "openclaw", Kind: adapters.KindUnknown, Name: "after_compaction", Scope: "ops", SessionID: "agent:ops:main"}},
		{"Unknown", `{"hook":"session_end","event":{"reason":"idle"},"ctx":{"sessionKey":"agent:ops:main"}}`, adapters.Event{
			Harness: "openclaw", Kind: adapters.KindUnknown, Name: "session_end", SessionID: "agent:ops:main"}},
		{"UnknownBare", `{"hook":"gateway_start"}`, adapters.Event{Harness: "openclaw", Kind: adapters.KindUnknown, Name: "gateway_start"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := openclaw.DecodeHook([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeHook_Malformed(t *testing.T) {
	bodies := []string{
		``,
		`null`,
		`[]`,
		`"subagent_spawned"`,
		`{`,
		`{"hook":"subagent_spawned"} trailing`,
		`{}`,
		`{"hook":1}`,
		`{"hook":""}`,
		`{"hook":"  "}`,
		`{"hook":"subagent_spawned","event":"x","ctx":{}}`,
		`{"hook":"subagent_spawned","event":{},"ctx":[1]}`,
		`{"hook":"subagent_spawned","event":{},"ctx":{}}`,
		`{"hook":"subagent_spawned","event":{"childSessionKey":"  "},"ctx":{"requesterSessionKey":"agent:main:main"}}`,
		`{"hook":"subagent_spawned","event":{"childSessionKey":7}}`,
		`{"hook":"before_compaction","event":{"messageCount":1},"ctx":{}}`,
		`{"hook":"before_compaction","event":{"messageCount":1}}`,
		`{"hook":"after_compaction","event":{},"ctx":{"sessionKey":5}}`,
		`{"hook":"after_compaction","event":[],"ctx":{"sessionKey":"agent:main:main"}}`,
		`{"hook":"session_end","ctx":"agent:main:main"}`,
		// Keys that are no OpenClaw session key (its classifySessionKeyShape: malformed_agent).
		`{"hook":"subagent_spawned","event":{"childSessionKey":"agent::x"},"ctx":{"requesterSessionKey":"agent:main:main"}}`,
		`{"hook":"subagent_spawned","event":{"childSessionKey":"agent:main:subagent:1"},"ctx":{"requesterSessionKey":"agent:no such agent:main"}}`,
		`{"hook":"before_compaction","ctx":{"sessionKey":"agent:main:"}}`,
		`{"hook":"session_end","ctx":{"sessionKey":"agent:-x:main"}}`,
	}
	for _, body := range bodies {
		ev, err := openclaw.DecodeHook([]byte(body))
		if !errors.Is(err, adapters.ErrMalformed) {
			t.Errorf("DecodeHook(%s) = %+v, %v; want an error wrapping ErrMalformed", body, ev, err)
		}
	}
}

func FuzzDecodeHook(f *testing.F) {
	for _, seed := range []string{hookSpawned, hookBefore, hookAfter, `{"hook":"x"}`, `{"hook":"subagent_spawned","ctx":{"childSessionKey":"k"}}`, `null`, `{"hook":"after_compaction","ctx":{"sessionKey":"agent:A:B"}}`, `{"hook":"before_compaction","ctx":{"sessionKey":"agent::B"}}`} {
		f.Add([]byte(seed))
	}
	known := []string{openclaw.HookSubagentSpawned, openclaw.HookBeforeCompaction, openclaw.HookAfterCompaction}
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := openclaw.DecodeHook(body)
		if err != nil {
			if !errors.Is(err, adapters.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if ev.Harness != openclaw.Harness || strings.TrimSpace(ev.Name) == "" {
			t.Fatalf("event %+v: want Harness openclaw and a Name", ev)
		}
		if slices.Contains(known, ev.Name) {
			if strings.TrimSpace(ev.SessionID) == "" || ev.Kind == adapters.KindUnknown {
				t.Fatalf("known hook decoded to %+v", ev)
			}
		} else if ev.Kind != adapters.KindUnknown {
			t.Fatalf("unknown hook %q decoded to kind %s", ev.Name, ev.Kind)
		}
		if ev.ParentSessionID != "" && ev.ParentSessionID == ev.SessionID {
			t.Fatalf("session %q is its own parent", ev.SessionID)
		}
		if err := adapters.CheckIDs(ev); err != nil {
			t.Fatalf("decoded a key no record may have: %v", err)
		}
		for _, key := range []string{ev.SessionID, ev.ParentSessionID} {
			if _, err := openclaw.ParseSessionKey(key); key != "" && err != nil {
				t.Fatalf("decoded %q, no OpenClaw session key: %v", key, err)
			}
		}
	})
}

// hookSidecar is a stand-in for the heirloom sidecar: POST /api/inject answers with a context
// for one session, POST /hooks/openclaw records bodies, and anything under /slow/ hangs until
// the client gives up.
type hookSidecar struct {
	mu      sync.Mutex
	injects []string // the bodies of POST /api/inject
	posts   [][]byte
	checks  []string // the queries and bodies of POST /api/spawn-check
	auth    []string
}

func (s *hookSidecar) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/slow/") {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/inject":
		b, _ := io.ReadAll(r.Body)
		s.injects = append(s.injects, string(b))
		var req struct{ Session string }
		json.Unmarshal(b, &req)
		w.Header().Set("Content-Type", "application/json")
		if req.Session == "agent:main:subagent:child" {
			io.WriteString(w, `{"context":"## Inherited from Parent Session\nobjective: ship it"}`)
			return
		}
		io.WriteString(w, `{"context":"  "}`)
	case r.Method == http.MethodPost && r.URL.Path == "/api/spawn-check":
		b, _ := io.ReadAll(r.Body)
		s.checks = append(s.checks, r.URL.RawQuery+" "+string(b))
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("session") == "agent:main:subagent:child" {
			// The plugin shows the message as the sidecar words it.
			io.WriteString(w, `{"allow":false,"reason":"depth 2 exceeds spawn.max_depth 1","message":"heirloom (as the sidecar words it): depth 2 exceeds spawn.max_depth 1"}`)
			return
		}
		io.WriteString(w, `{"allow":true}`)
	case r.Method == http.MethodPost && r.URL.Path == "/hooks/openclaw":
		b, _ := io.ReadAll(r.Body)
		s.posts = append(s.posts, b)
		io.WriteString(w, `{}`)
	default:
		http.NotFound(w, r)
	}
}

// hookDriver loads the plugin into node with a stand-in for OpenClaw's plugin API, registers
// it twice (OpenClaw does too), and dispatches hooks the way OpenClaw's hook runner does: one
// event object for every handler, prompt hooks in sequence, void hooks in parallel.
const hookDriver = `
import { pathToFileURL } from "node:url"
const [pluginPath, live, slow, dead] = process.argv.slice(2)
const { default: plugin } = await import(pathToFileURL(pluginPath).href)

function load(config) {
  const handlers = {}, warnings = []
  const api = {
    id: "heirloom", registrationMode: "full", pluginConfig: config,
    logger: { info() {}, error() {}, warn: (m) => warnings.push(m) },
    on: (name, h) => { (handlers[name] ??= []).push(h) },
  }
  plugin.register(api)
  plugin.register(api)
  return { handlers, warnings }
}
async function prompt(p, ctx) {
  const results = []
  for (const h of p.handlers.before_prompt_build ?? []) {
    const r = await h({ prompt: "hi", messages: [] }, ctx)
    if (r !== undefined) results.push(r)
  }
  return results
}
async function prompt1(p, ctx) {
  const event = { prompt: "hi", messages: [] }, results = []
  for (const h of p.handlers.before_prompt_build ?? []) {
    const r = await h(event, ctx)
    if (r !== undefined) results.push(r)
  }
  return results
}
async function fire(p, name, event, ctx) {
  await Promise.all((p.handlers[name] ?? []).map((h) => h(event, ctx)))
}
// toolCall runs the before_tool_call handlers in sequence, each on a copy of the event, and
// returns their results: what OpenClaw's runner does with a modifying hook.
async function toolCall(p, event, ctx) {
  const results = []
  for (const h of p.handlers.before_tool_call ?? []) {
    const r = await h(structuredClone(event), ctx)
    if (r !== undefined) results.push(r)
  }
  return results
}

const out = {}
const a = load({ url: live + "/", token: "tok-1" })
out.handlers = Object.fromEntries(Object.entries(a.handlers).map(([k, v]) => [k, v.length]))
out.inject = await prompt1(a, { sessionKey: "agent:main:subagent:child", agentId: "main" })
out.blank = await prompt1(a, { sessionKey: "agent:main:other" })
out.nokey = await prompt1(a, { agentId: "main" })
await fire(a, "subagent_spawned",
  { runId: "r1", childSessionKey: "agent:main:subagent:child", agentId: "main", label: "research", mode: "run", threadRequested: false, requester: { channel: "cli" } },
  { runId: "r1", childSessionKey: "agent:main:subagent:child", requesterSessionKey: "agent:main:parent" })
await fire(a, "before_compaction",
  { messageCount: 2, messages: [{ role: "user", content: "TRANSCRIPT-TEXT" }], sessionFile: "/s/a.jsonl" },
  { sessionKey: "agent:main:parent", agentId: "main", hookInvocation: { assertActive() {} }, trace: { traceId: "t" } })
await fire(a, "after_compaction", { messageCount: -1, compactedCount: -1, sessionFile: "/s/b.jsonl" }, { sessionKey: "agent:main:parent" })
out.refused = await toolCall(a, { toolName: "sessions_spawn", toolCallId: "call_1", params: { task: "dig deeper", label: "dig", agentId: "main" } },
  { sessionKey: "agent:main:subagent:child", agentId: "main" })
out.allowed = await toolCall(a, { toolName: "tool_call", toolCallId: "call_2", params: { id: "sessions_spawn", args: { task: "look around" } } },
  { sessionKey: "agent:main:parent", agentId: "main" })
out.otherTool = await toolCall(a, { toolName: "exec", toolCallId: "call_3", params: { command: "ls" } }, { sessionKey: "agent:main:subagent:child" })

const e = load({})
out.env = await prompt1(e, { sessionKey: "agent:main:subagent:child" })

const d = load({ url: dead })
let t0 = Date.now()
out.dead = [...await prompt(d, { sessionKey: "agent:main:subagent:child" }), ...await prompt(d, { sessionKey: "agent:main:subagent:child" })]
out.deadMs = Date.now() - t0
out.deadSpawn = await toolCall(d, { toolName: "sessions_spawn", toolCallId: "call_4", params: { task: "t" } }, { sessionKey: "agent:main:subagent:child" })
out.deadWarnings = d.warnings

const s = load({ url: slow + "/slow" })
t0 = Date.now()
out.slow = await prompt1(s, { sessionKey: "agent:main:subagent:child" })
out.slowMs = Date.now() - t0
console.log(JSON.stringify(out))
`

// TestPluginBehaviour runs the plugin in node against a stand-in sidecar, then decodes what it
// posted with DecodeHook.
func TestPluginBehaviour(t *testing.T) {
	node := instNode(t)
	dir := instWritePlugin(t)
	driver := filepath.Join(t.TempDir(), "driver.mjs")
	if err := os.WriteFile(driver, []byte(hookDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	sidecar := &hookSidecar{}
	srv := httptest.NewServer(sidecar)
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()

	cmd := exec.Command(node, driver, filepath.Join(dir, "index.js"), srv.URL, srv.URL, dead)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "HEIRLOOM_URL=" + srv.URL, "HEIRLOOM_TOKEN=tok-env"}
	stdout, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node driver: %v\n%s", err, stderr)
	}
	type injected struct {
		PrependSystemContext string `json:"prependSystemContext"`
	}
	type blocked struct {
		Block       bool   `json:"block"`
		BlockReason string `json:"blockReason"`
	}
	var out struct {
		Handlers                               map[string]int
		Inject, Blank, Nokey                   []injected
		Env, Dead, Slow                        []injected
		Refused, Allowed, OtherTool, DeadSpawn []blocked
		DeadMs, SlowMs                         int
		DeadWarnings                           []string
	}
	if err := json.Unmarshal(stdout, &out); err != nil {
		t.Fatalf("driver output: %v\n%s", err, stdout)
	}

	want := map[string]int{"before_prompt_build": 2, "before_tool_call": 2, "subagent_spawned": 2, "before_compaction": 2, "after_compaction": 2}
	if !reflect.DeepEqual(out.Handlers, want) {
		t.Errorf("handlers %v, want %v (one per registration)", out.Handlers, want)
	}
	inherited := "## Inherited from Parent Session\nobjective: ship it"
	if len(out.Inject) != 1 || out.Inject[0].PrependSystemContext != inherited {
		t.Errorf("before_prompt_build results %+v: want the context exactly once although registered twice", out.Inject)
	}
	if len(out.Blank) != 0 || len(out.Nokey) != 0 {
		t.Errorf("blank context gave %+v, no session key gave %+v; want nothing", out.Blank, out.Nokey)
	}
	if len(out.Env) != 1 || out.Env[0].PrependSystemContext != inherited {
		t.Errorf("with no plugin config (HEIRLOOM_URL from the environment): %+v", out.Env)
	}
	if len(out.Dead) != 0 || out.DeadMs > 1500 || len(out.DeadWarnings) != 1 || !strings.Contains(out.DeadWarnings[0], dead) {
		t.Errorf("sidecar down: results %+v in %d ms, warnings %q; want nothing, fast, one warning naming it", out.Dead, out.DeadMs, out.DeadWarnings)
	}
	refusal := blocked{Block: true, BlockReason: "heirloom (as the sidecar words it): depth 2 exceeds spawn.max_depth 1"}
	if len(out.Refused) != 2 || out.Refused[0] != refusal || out.Refused[1] != refusal {
		t.Errorf("before_tool_call of a refused sessions_spawn: %+v, want %+v from each registration", out.Refused, refusal)
	}
	if len(out.Allowed) != 0 || len(out.OtherTool) != 0 || len(out.DeadSpawn) != 0 {
		t.Errorf("before_tool_call: allowed spawn %+v, other tool %+v, sidecar down %+v; want no decision", out.Allowed, out.OtherTool, out.DeadSpawn)
	}
	if len(out.Slow) != 0 || out.SlowMs < 1400 || out.SlowMs > 2500 {
		t.Errorf("slow sidecar: results %+v after %d ms; want nothing after the 1500 ms timeout", out.Slow, out.SlowMs)
	}

	sidecar.mu.Lock()
	defer sidecar.mu.Unlock()
	wantBodies := []string{`{"harness":"openclaw","session":"agent:main:subagent:child"}`, `{"harness":"openclaw","session":"agent:main:other"}`, `{"harness":"openclaw","session":"agent:main:subagent:child"}`}
	if !slices.Equal(sidecar.injects, wantBodies) {
		t.Errorf("inject requests %q, want %q", sidecar.injects, wantBodies)
	}
	const (
		refusedCheck = `harness=openclaw&session=agent%3Amain%3Asubagent%3Achild {"tool":"sessions_spawn","call_id":"call_1","args":{"description":"dig","prompt":"dig deeper","subagent_type":"main"}}`
		allowedCheck = `harness=openclaw&session=agent%3Amain%3Aparent {"tool":"sessions_spawn","call_id":"call_2","args":{"description":"","prompt":"look around","subagent_type":""}}`
	)
	if want := []string{refusedCheck, refusedCheck, allowedCheck, allowedCheck}; !slices.Equal(sidecar.checks, want) {
		t.Errorf("spawn checks\n%q\nwant (once per registration; the call id makes a repeat the same decision)\n%q", sidecar.checks, want)
	}
	if !slices.Contains(sidecar.auth, "Bearer tok-1") || !slices.Contains(sidecar.auth, "Bearer tok-env") {
		t.Errorf("authorization headers %q: want the configured token, then HEIRLOOM_TOKEN", sidecar.auth)
	}
	if len(sidecar.posts) != 3 {
		t.Fatalf("posts %d, want 3 (one per hook although registered twice):\n%s", len(sidecar.posts), sidecar.posts)
	}
	byHook := map[string]adapters.Event{}
	for _, body := range sidecar.posts {
		if strings.Contains(string(body), "TRANSCRIPT-TEXT") || strings.Contains(string(body), "hookInvocation") {
			t.Errorf("posted a transcript or host capability: %s", body)
		}
		ev, err := openclaw.DecodeHook(body)
		if err != nil {
			t.Fatalf("DecodeHook(%s): %v", body, err)
		}
		byHook[ev.Name] = ev
	}
	wantEvents := map[string]adapters.Event{
		"subagent_spawned": {Harness: "openclaw", Kind: adapters.KindSessionUpdate, Name: "subagent_spawned", Scope: "main",
			SessionID: "agent:main:subagent:child", ParentSessionID: "agent:main:parent", Title: "research"},
		"before_compaction": {Harness: "openclaw", Kind: adapters.KindPreCompact, Name: "before_compaction", Scope: "main",
			SessionID: "agent:main:parent", TranscriptPath: "/s/a.jsonl"},
		"after_compaction": {Harness: "openclaw", Kind: adapters.KindCompacted, Name: "after_compaction", Scope: "main",
			SessionID: "agent:main:parent", TranscriptPath: "/s/b.jsonl"},
	}
	if !reflect.DeepEqual(byHook, wantEvents) {
		t.Errorf("decoded posts\n%+v\nwant\n%+v", byHook, wantEvents)
	}
}
