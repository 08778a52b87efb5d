package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
	"github.com/heirloom-dev/heirloom/e2e/openclaw"
)

var clawSmokeRecord = flag.Bool("record", false, "rewrite testdata/openclaw/spawn-compact.frames.json from a live OpenClaw run (TestOpenClawSmoke)")

// clawSmokeRecording is the Gateway frames an operator client saw during
// TestOpenClawSmoke: spawn, nested spawn, announcements, compaction.
var clawSmokeRecording = filepath.Join("testdata", "openclaw", "spawn-compact.frames.json")

// clawSmokeSubagentKey is the shape of a sub-agent's session key at every depth.
var clawSmokeSubagentKey = regexp.MustCompile(`^agent:main:subagent:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestOpenClawSmoke proves the live technique against the real OpenClaw
// Gateway, without heirloom: it runs offline against the loopback
// chat-completions stand-in, a scripted sessions_spawn call (made through
// Tool Search's tool_call) spawns a real sub-agent whose first model request
// carries its task, that child spawns a grandchild, and results flow back up.
// Then sessions.compact compacts the parent. A second operator client,
// subscribed to session events, records every Gateway frame it sees; with
// -record they are written to testdata/openclaw.
func TestOpenClawSmoke(t *testing.T) {
	openclaw.Bin(t) // skip the whole test at once when openclaw is absent

	m := ocMarker(t)
	parentKey := "agent:main:parent-" + strings.ToLower(m)
	childTask := "CHILD-TASK-" + m + ": find the answer and report it."
	grandchildTask := "GRANDCHILD-TASK-" + m + ": dig one level deeper."
	api := chatapi.New(func(r chatapi.Request) chatapi.Reply {
		if openclaw.IsCompaction(r) {
			return chatapi.Text(openclaw.Summary("SUMMARY-" + m))
		}
		prompt := openclaw.Prompt(r)
		if task, ok := openclaw.SubagentTask(r); ok {
			switch {
			case strings.HasPrefix(task, "GRANDCHILD-TASK-"+m):
				return chatapi.Text("GRANDCHILD-RESULT-" + m)
			case !strings.HasPrefix(task, "CHILD-TASK-"+m):
				return chatapi.Text("UNEXPECTED-" + m)
			case openclaw.IsCompletion(r): // the grandchild is done
				return chatapi.Text("CHILD-RESULT-" + m)
			case len(r.ToolResults()) == 0:
				return openclaw.Spawn(r, grandchildTask, "grandchild")
			default:
				return chatapi.Text("CHILD-WAITING-" + m)
			}
		}
		switch {
		case openclaw.IsCompletion(r) && openclaw.SessionKey(r) == parentKey:
			return chatapi.Text("PARENT-DONE-" + m)
		case strings.Contains(prompt, "PARENT-PROMPT-"+m) && len(r.ToolResults()) == 0:
			return openclaw.Spawn(r, childTask, "child-research")
		case strings.Contains(prompt, "PARENT-PROMPT-"+m):
			return chatapi.Text("PARENT-WAITING-" + m)
		}
		return chatapi.Text("UNEXPECTED-" + m) // a background turn of OpenClaw's own
	})
	if err := api.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)

	g := openclaw.Run(t, t.Context(), openclaw.Options{
		ProviderURL: api.BaseURL(),
		PluginPaths: []string{clawSmokeProbePlugin(t, m)},
		Plugins:     map[string]any{"e2e-probe": map[string]any{"enabled": true, "hooks": map[string]any{"allowConversationAccess": true}}},
	})
	t.Logf("timing: cold start (exec → /readyz) %v", g.Started.Round(time.Millisecond))
	rec := g.Connect(t, t.Context()) // the subscribed operator whose frames are recorded
	if err := rec.Subscribe(t.Context()); err != nil {
		t.Fatal(err)
	}
	op := g.Connect(t, t.Context())

	var childKey string
	t.Run("Spawn", func(t *testing.T) {
		ctx := t.Context()
		start := time.Now()
		res, err := op.Agent(ctx, parentKey, "PARENT-PROMPT-"+m+": delegate the research to a sub-agent")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("timing: parent's first run (spawn, reply) %v: %q", time.Since(start).Round(time.Millisecond), res.Text())
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute) // the child, its child, and both announcements
		done, err := rec.WaitChat(wctx, 0, parentKey, "PARENT-DONE-"+m)
		cancel()
		if err != nil {
			t.Fatalf("%v\nrequests:\n%s", err, clawSmokeRequests(api.Requests()))
		}
		t.Logf("timing: until the parent's announce run replied %v (run %s)", time.Since(start).Round(time.Millisecond), done.RunID)

		sessions, err := op.Sessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		child := clawSmokeSpawned(sessions, parentKey)
		if len(child) != 1 {
			t.Fatalf("sessions spawned by %s: %+v, want one", parentKey, child)
		}
		childKey = child[0].Key
		grandchild := clawSmokeSpawned(sessions, childKey)
		if len(grandchild) != 1 {
			t.Fatalf("sessions spawned by %s: %+v, want one", childKey, grandchild)
		}
		for _, s := range []struct {
			row   openclaw.Session
			depth int
			label string
		}{{child[0], 1, "child-research"}, {grandchild[0], 2, "grandchild"}} {
			if !clawSmokeSubagentKey.MatchString(s.row.Key) || s.row.SpawnDepth != s.depth || s.row.Label != s.label {
				t.Errorf("session %s: depth %d label %q, want agent:main:subagent:<uuid>, depth %d, label %q",
					s.row.Key, s.row.SpawnDepth, s.row.Label, s.depth, s.label)
			}
		}

		// What reached the model: each sub-agent's FIRST request carries its
		// own task in the wrapped first user message.
		reqs := api.Requests()
		for _, want := range []struct{ key, task, depth string }{
			{childKey, childTask, "1/5"},
			{grandchild[0].Key, grandchildTask, "2/5"},
		} {
			turns := clawSmokeTurnsOf(reqs, want.key)
			if len(turns) == 0 {
				t.Fatalf("no model request of %s\nrequests:\n%s", want.key, clawSmokeRequests(reqs))
			}
			first := turns[0]
			if task, ok := openclaw.SubagentTask(first); !ok || task != want.task {
				t.Errorf("%s's first request: task %q (%v), want %q; first user text:\n%s", want.key, task, ok, want.task, first.FirstUserText())
			}
			if got := openclaw.SubagentDepth(first); got != want.depth {
				t.Errorf("%s's first request: depth %q, want %q", want.key, got, want.depth)
			}
			if slices.ContainsFunc(first.Messages, func(msg chatapi.Message) bool { return msg.Role == "assistant" }) {
				t.Errorf("%s's first request already holds an assistant turn", want.key)
			}
			if !strings.HasPrefix(first.FirstUserText(), "[") || !strings.Contains(first.FirstUserText(), "[Subagent Context]") {
				t.Errorf("%s's first user text is not the wrapped task:\n%s", want.key, first.FirstUserText())
			}
			// The probe plugin's before_prompt_build ran for this first turn,
			// with the sub-agent's own session key.
			if probe := "PROBE-" + m + "-" + want.key; !strings.Contains(openclaw.Prompt(first), probe) {
				t.Errorf("%s's first request lacks %s in its prompt:\n%s", want.key, probe, openclaw.Prompt(first))
			}
			if strings.Contains(first.AllText(), "PROBE-"+m+"-"+parentKey) {
				t.Errorf("%s's first request carries the parent's probe text", want.key)
			}
		}
		if !slices.ContainsFunc(clawSmokeTurnsOf(reqs, parentKey), func(r chatapi.Request) bool {
			return openclaw.IsCompletion(r) && strings.Contains(r.AllText(), "CHILD-RESULT-"+m)
		}) {
			t.Errorf("no request of the parent carries the child's result\nrequests:\n%s", clawSmokeRequests(reqs))
		}
		for _, r := range reqs {
			if !r.IsSideRequest() && !slices.Contains([]string{parentKey, childKey, grandchild[0].Key}, openclaw.SessionKey(r)) {
				t.Logf("request %d of another session %q: %.120q", r.Seq, openclaw.SessionKey(r), openclaw.Prompt(r))
			}
		}

		// What an operator saw: each sub-agent's creation names its parent.
		for _, s := range []string{childKey, grandchild[0].Key} {
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, err := rec.WaitEvent(wctx, 0, func(e openclaw.Event) bool {
				var p struct {
					SessionKey, Reason, ParentSessionKey string
				}
				return e.Name == "sessions.changed" && e.Decode(&p) == nil && p.SessionKey == s && p.Reason == "create" && p.ParentSessionKey != ""
			})
			cancel()
			if err != nil {
				t.Errorf("no sessions.changed create for %s: %v", s, err)
			}
		}
	})

	t.Run("Compaction", func(t *testing.T) {
		if childKey == "" {
			t.Skip("Spawn did not run")
		}
		ctx := t.Context()
		before := len(api.Requests())
		start := time.Now()
		res, err := op.Compact(ctx, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("timing: sessions.compact %v (tokens %d → %d)", time.Since(start).Round(time.Millisecond), res.Result.TokensBefore, res.Result.TokensAfter)
		if !strings.Contains(res.Result.Summary, "SUMMARY-"+m) {
			t.Errorf("compaction summary lacks the stand-in's summary:\n%s", res.Result.Summary)
		}
		var summarized bool
		for _, r := range api.Requests()[before:] {
			if openclaw.IsCompaction(r) && strings.Contains(r.AllText(), "PARENT-PROMPT-"+m) {
				summarized = true
			}
		}
		if !summarized {
			t.Errorf("no summarization request carried the parent's conversation\nrequests:\n%s", clawSmokeRequests(api.Requests()[before:]))
		}

		// The frames a subscribed operator sees for a compaction.
		var opEnd, changed openclaw.Event
		for _, w := range []struct {
			ev   *openclaw.Event
			name string
			ok   func(e openclaw.Event) bool
		}{
			{nil, "session.operation compact start", clawSmokeOperation(parentKey, "start")},
			{&opEnd, "session.operation compact end", clawSmokeOperation(parentKey, "end")},
			{&changed, "sessions.changed reason compact", func(e openclaw.Event) bool {
				var p struct {
					SessionKey, Reason string
					Compacted          bool
				}
				return e.Name == "sessions.changed" && e.Decode(&p) == nil && p.SessionKey == parentKey && p.Reason == "compact" && p.Compacted
			}},
		} {
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			e, err := rec.WaitEvent(wctx, 0, w.ok)
			cancel()
			if err != nil {
				t.Errorf("no %s frame: %v", w.name, err)
				continue
			}
			if w.ev != nil {
				*w.ev = e
			}
		}
		t.Logf("session.operation end: %s", opEnd.Payload)
		if changed.Payload != nil {
			var p struct {
				Session map[string]any `json:"session"`
			}
			if err := changed.Decode(&p); err == nil {
				_, counted := p.Session["compactionCount"]
				t.Logf("sessions.changed compact: session row has compactionCount: %v; totalTokens %v", counted, p.Session["totalTokens"])
			}
		}
	})

	t.Run("Offline", func(t *testing.T) { clawSmokeAssertOffline(t, api) })

	if *clawSmokeRecord && !t.Failed() {
		if err := openclaw.WriteRecording(clawSmokeRecording, rec.Frames(), g.Redactions()); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d frames)", clawSmokeRecording, len(rec.Frames()))
	}
}

// clawSmokeProbePlugin writes a minimal OpenClaw plugin into a new temp dir of tb
// and returns the dir. Its before_prompt_build hook prepends
// "PROBE-<marker>-<session key>" to the prompt of every turn. It exercises the
// plugin slot of openclaw.Options (plugins.load.paths, plugins.entries; a
// plugin that is not bundled needs hooks.allowConversationAccess for this
// hook) and shows what heirloom's plugin relies on: the hook runs for a
// sub-agent's first turn, with the sub-agent's own session key.
func clawSmokeProbePlugin(tb testing.TB, marker string) string {
	tb.Helper()
	dir := tb.TempDir()
	files := map[string]string{
		"package.json": `{"name": "e2e-probe", "version": "0.0.0", "type": "module", "openclaw": {"extensions": ["./index.js"]}}`,
		"openclaw.plugin.json": `{"id": "e2e-probe", "name": "e2e probe", "description": "heirloom e2e probe",
  "activation": {"onStartup": true},
  "configSchema": {"type": "object", "additionalProperties": false, "properties": {}}}`,
		"index.js": `export default {
  id: "e2e-probe",
  name: "e2e probe",
  description: "heirloom e2e probe",
  register(api) {
    api.on("before_prompt_build", async (_event, ctx) => ({ prependContext: "PROBE-` + marker + `-" + (ctx?.sessionKey ?? "none") }));
  },
};
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body+"\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// clawSmokeOperation matches the session.operation frame of a compaction of key in
// phase.
func clawSmokeOperation(key, phase string) func(openclaw.Event) bool {
	return func(e openclaw.Event) bool {
		var p struct {
			Operation, Phase, SessionKey string
		}
		return e.Name == "session.operation" && e.Decode(&p) == nil && p.Operation == "compact" && p.Phase == phase && p.SessionKey == key
	}
}

// clawSmokeSpawned returns the sessions spawned by key.
func clawSmokeSpawned(sessions []openclaw.Session, key string) []openclaw.Session {
	return slices.DeleteFunc(slices.Clone(sessions), func(s openclaw.Session) bool { return s.SpawnedBy != key })
}

// clawSmokeTurnsOf returns the model requests that are turns of session key, in
// arrival order.
func clawSmokeTurnsOf(reqs []chatapi.Request, key string) []chatapi.Request {
	return slices.DeleteFunc(slices.Clone(reqs), func(r chatapi.Request) bool { return openclaw.SessionKey(r) != key })
}

// clawSmokeRequests lists requests one a line, for failure messages.
func clawSmokeRequests(reqs []chatapi.Request) string {
	var b strings.Builder
	for _, r := range reqs {
		key := openclaw.SessionKey(r)
		if openclaw.IsCompaction(r) {
			key = "(compaction)"
		}
		prompt := strings.ReplaceAll(openclaw.Prompt(r), "\n", " ")
		if len(prompt) > 100 {
			prompt = prompt[:100] + "…"
		}
		b.WriteString("  " + strconv.Itoa(r.Seq) + " " + key + " " + strconv.Itoa(len(r.Tools)) + " tools " + prompt + "\n")
	}
	return b.String()
}

// clawSmokeAssertOffline fails tb when OpenClaw tried to reach a host other
// than the stand-in, with one exception: OpenClaw's plugin management loads
// its official plugin catalog feed (https://clawhub.ai/v1/feeds/plugins) on
// first use, with no setting to turn it off; through the managed proxy that
// attempt is a CONNECT the stand-in refuses, and OpenClaw falls back to its
// bundled catalog.
func clawSmokeAssertOffline(tb testing.TB, api *chatapi.Server) {
	tb.Helper()
	for _, c := range api.Calls() {
		tb.Logf("stand-in also got: %s %s %s?%s → %d", c.Method, c.Host, c.Path, c.RawQuery, c.Status)
		if c.Method == http.MethodConnect && c.Host == "clawhub.ai:443" {
			continue
		}
		if c.Method == http.MethodConnect || !strings.HasPrefix(c.Host, "127.0.0.1:") {
			tb.Errorf("openclaw tried to reach %s (%s %s): it must stay on loopback", c.Host, c.Method, c.Path)
		}
	}
}

// TestOpenClawSmokeRecording checks the committed recording of
// TestOpenClawSmoke (rewrite it with -record) without running OpenClaw: the
// handshake with its secrets redacted, both sub-agents' creation naming their
// parents, and the frames of the compaction, in order; no private path of
// the recording machine.
func TestOpenClawSmokeRecording(t *testing.T) {
	raw, err := os.ReadFile(clawSmokeRecording)
	if err != nil {
		t.Fatal(err)
	}
	for _, private := range []string{"/tmp/", "TestOpenClaw"} {
		if strings.Contains(string(raw), private) {
			t.Errorf("%s holds %q: a path of the recording machine", clawSmokeRecording, private)
		}
	}
	frames, err := openclaw.ReadRecording(clawSmokeRecording)
	if err != nil {
		t.Fatal(err)
	}
	type payload struct {
		SessionKey, Reason, Operation, Phase string
		Compacted, Completed                 bool
		Session                              openclaw.Session
	}
	var (
		seen    []string // what the checks below found, in order
		parents = map[string]string{}
		depths  = map[string]int{}
		parent  string
	)
	for i, f := range frames {
		var fr openclaw.Frame
		if err := json.Unmarshal(f.Frame, &fr); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		switch {
		case fr.Type == "req" && fr.Method == "connect":
			var p struct {
				Auth   struct{ Token string }
				Device struct{ Signature string }
			}
			if err := json.Unmarshal(fr.Params, &p); err != nil || p.Auth.Token != openclaw.RedactedKeys["token"] || p.Device.Signature != openclaw.RedactedKeys["signature"] {
				t.Errorf("connect params not redacted: %s", fr.Params)
			}
			seen = append(seen, "connect")
		case fr.Type == "event" && fr.Event == "connect.challenge":
			seen = append(seen, "challenge")
		case fr.Type == "res" && strings.Contains(string(fr.Payload), `"type":"hello-ok"`):
			seen = append(seen, "hello-ok")
		case fr.Type == "event" && (fr.Event == "sessions.changed" || fr.Event == "session.operation"):
			var p payload
			if err := json.Unmarshal(fr.Payload, &p); err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
			switch {
			case fr.Event == "sessions.changed" && p.Reason == "create" && p.Session.SpawnedBy != "":
				parents[p.SessionKey], depths[p.SessionKey] = p.Session.SpawnedBy, p.Session.SpawnDepth
				if !clawSmokeSubagentKey.MatchString(p.SessionKey) {
					t.Errorf("sub-agent key %q", p.SessionKey)
				}
				seen = append(seen, "create depth "+strconv.Itoa(p.Session.SpawnDepth))
				if p.Session.SpawnDepth == 1 {
					parent = p.Session.SpawnedBy
				}
			case fr.Event == "session.operation" && p.Operation == "compact" && p.SessionKey == parent:
				seen = append(seen, "compact "+p.Phase+" completed="+strconv.FormatBool(p.Completed))
			case fr.Event == "sessions.changed" && p.Reason == "compact" && p.SessionKey == parent:
				seen = append(seen, "changed compact compacted="+strconv.FormatBool(p.Compacted))
			}
		}
	}
	want := []string{"challenge", "connect", "hello-ok", "create depth 1", "create depth 2",
		"compact start completed=false", "compact end completed=true", "changed compact compacted=true"}
	if !slices.Equal(seen, want) {
		t.Errorf("recording holds\n %v\nwant\n %v", seen, want)
	}
	for child, p := range parents {
		if depths[child] == 2 && (parents[p] != parent || depths[p] != 1) {
			t.Errorf("grandchild %s spawned by %s, which is not the child of %s", child, p, parent)
		}
	}
}
