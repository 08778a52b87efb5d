package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/openclaw/gatewaytest"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

// The recorded OpenClaw 2026.9.6 conversation: parent agent:main:parentb spawned one sub-agent,
// labelled child-research, that answered "the answer is 42".
const (
	clawFramesFile = "../adapters/openclaw/testdata/live/spawn.all-frames.json"
	clawRowFile    = "../adapters/openclaw/testdata/live/spawn.sessions.changed.child.reason-create.event.json"
	clawParent     = "agent:main:parentb"
	clawChild      = "agent:main:subagent:030f5da4-ab00-499e-b6af-e63e2b24b61c"
	clawScope      = "main"
	clawToken      = "replay-token"
)

// clawFollow opens an in-process heirloom whose OpenClaw client follows gw, as serve wires them.
func clawFollow(t testing.TB, gw *gatewaytest.Server) (*proxy.Server, *openclaw.Client) {
	t.Helper()
	client := openclaw.NewClient(gw.URL(), nil)
	client.Token = clawToken
	client.BackoffMin, client.BackoffMax = 20*time.Millisecond, 200*time.Millisecond
	s := mustOpenServer(t, func(s *proxy.Server) {
		s.Engine.Describers = map[string]adapters.Describer{openclaw.Harness: client}
		s.Engine.Config.DescribeWait = time.Second
	})
	client.Sink = s.Engine
	if err := client.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return s, client
}

// waitFor polls cond every 20ms for up to 20s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// clawSession returns the stored OpenClaw session key in scope main, or ok=false.
func clawSession(t *testing.T, store *kv.Store, key string) (kv.Session, bool) {
	t.Helper()
	sess, err := store.GetSession(t.Context(), clawScope, key)
	if errors.Is(err, kv.ErrNotFound) {
		return sess, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return sess, true
}

// clawInject asks /api/inject as the plugin does.
func clawInject(t *testing.T, s *proxy.Server, key string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"harness": "openclaw", "session": key})
	resp, err := http.Post(s.URL()+"/api/inject", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reply struct{ Context string }
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || resp.StatusCode != 200 {
		t.Fatalf("inject %s: %d %v", key, resp.StatusCode, err)
	}
	return reply.Context
}

// clawRow returns the recorded child's session row, re-keyed to key with parent spawnedBy
// ("" for none) at spawn depth depth.
func clawRow(t testing.TB, key, spawnedBy string, depth int) json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(clawRowFile)
	if err != nil {
		t.Fatal(err)
	}
	var frame struct {
		Payload struct {
			Session map[string]any `json:"session"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(raw, &frame); err != nil {
		t.Fatal(err)
	}
	row := frame.Payload.Session
	row["key"], row["label"], row["displayName"], row["spawnDepth"] = key, "row "+key, "row "+key, depth
	for _, k := range []string{"spawnedBy", "parentSessionKey", "controlOwnerSessionKey"} {
		if spawnedBy == "" {
			delete(row, k)
		} else {
			row[k] = spawnedBy
		}
	}
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenClawReplay replays the recorded Gateway conversation through a stand-in Gateway that
// speaks the real handshake, into the real client, engine and store: sessions in the key's
// scope, lineage, turns, the run with its result, and the inherited block a plugin would get.
// Then the Gateway drops the connection; what changed meanwhile arrives through the resync.
func TestOpenClawReplay(t *testing.T) {
	rec, err := gatewaytest.LoadRecording(clawFramesFile)
	if err != nil {
		t.Fatal(err)
	}
	frames, err := gatewaytest.EventFrames(rec)
	if err != nil {
		t.Fatal(err)
	}
	gw := gatewaytest.NewServer(t, gatewaytest.Options{Token: clawToken})
	s, client := clawFollow(t, gw)
	waitFor(t, "the client to subscribe", func() bool { return gw.Subscribed() == 1 })
	if n := gw.Replay(frames); n != 1 {
		t.Fatalf("replay reached %d connections, want 1", n)
	}
	waitFor(t, "the child's run to finish", func() bool {
		r, err := s.Engine.Store.GetRun(t.Context(), clawScope, clawChild)
		return err == nil && r.Status == kv.RunCompleted
	})

	t.Run("Lineage", func(t *testing.T) {
		parent, _ := clawSession(t, s.Engine.Store, clawParent)
		child, ok := clawSession(t, s.Engine.Store, clawChild)
		if !ok || child.ParentID != clawParent || child.Depth != 1 || child.Harness != "openclaw" {
			t.Fatalf("child: got %+v", child)
		}
		if parent.ParentID != "" || parent.Depth != 0 || !strings.Contains(parent.Objective, "SPAWN-PLEASE") {
			t.Errorf("parent: got %+v", parent)
		}
		if !strings.Contains(child.Objective, "CHILD-TASK: find the answer and report it.") {
			t.Errorf("child objective: got %q, want the task", child.Objective)
		}
		if _, err := s.Engine.Store.GetSession(t.Context(), scope, clawChild); !errors.Is(err, kv.ErrNotFound) {
			t.Errorf("child in the configured scope: got %v, want only in scope main", err)
		}
	})
	t.Run("Run", func(t *testing.T) {
		r, _ := s.Engine.Store.GetRun(t.Context(), clawScope, clawChild)
		if r.ParentID != clawParent || r.RootID != clawParent || r.ChildID != clawChild || !strings.Contains(r.Result, "the answer is 42") {
			t.Errorf("run: got %+v", r)
		}
		runs, err := s.Engine.Store.ListRuns(t.Context(), clawScope, kv.RunFilter{})
		if err != nil || len(runs) != 1 {
			t.Errorf("runs: got %d (%v), want every source folded into one", len(runs), err)
		}
	})
	t.Run("Turns", func(t *testing.T) {
		turns, err := s.Engine.Store.Turns(t.Context(), clawScope, clawChild, 0, 0)
		if err != nil || len(turns) == 0 {
			t.Fatalf("child turns: %d %v", len(turns), err)
		}
		seen := map[string]bool{}
		for _, tr := range turns {
			if seen[tr.SourceID] {
				t.Errorf("turn %s stored twice", tr.SourceID)
			}
			seen[tr.SourceID] = true
		}
		if turns[0].Role != "user" || !strings.Contains(turns[0].Text, "CHILD-TASK") {
			t.Errorf("child's first turn: got %+v", turns[0])
		}
	})
	t.Run("Inject", func(t *testing.T) {
		text := clawInject(t, s, clawChild)
		if !strings.HasPrefix(text, "## Inherited from Parent Session") || !strings.Contains(text, "SPAWN-PLEASE") {
			t.Errorf("child's block: got %q", text)
		}
		if text := clawInject(t, s, clawParent); text != "" {
			t.Errorf("parent's block: got %q, want nothing (top level)", text)
		}
	})

	t.Run("ResyncAfterReconnect", func(t *testing.T) {
		const listed, described = "agent:main:subagent:11111111-2222-4333-8444-555555555555", "agent:main:subagent:66666666-7777-4888-9999-aaaaaaaaaaaa"
		// listed comes with its parent in the list; described is listed without one, and only
		// sessions.describe names it.
		gw.SetSessions(clawRow(t, listed, clawParent, 1), clawRow(t, described, "", 0))
		gw.SetDescribe(described, clawRow(t, described, clawChild, 2))
		before := client.Stats().Connects
		gw.DropConnections(1012, "service restart")
		waitFor(t, "the resync", func() bool {
			a, okA := clawSession(t, s.Engine.Store, listed)
			b, okB := clawSession(t, s.Engine.Store, described)
			return okA && okB && a.ParentID == clawParent && b.ParentID == clawChild
		})
		if got := client.Stats().Connects; got <= before {
			t.Errorf("connects: got %d, want more than %d", got, before)
		}
		if b, _ := clawSession(t, s.Engine.Store, described); b.Depth != 2 {
			t.Errorf("grandchild depth: got %d, want 2", b.Depth)
		}
		if text := clawInject(t, s, described); !strings.Contains(text, "CHILD-TASK") {
			t.Errorf("grandchild's block: got %q, want its parent's objective", text)
		}
	})

	t.Run("DescribeOnDemand", func(t *testing.T) {
		// A sub-agent the stream has not mentioned yet: its plugin's first question makes heirloom
		// ask the Gateway before answering.
		const late = "agent:main:subagent:bbbbbbbb-cccc-4ddd-8eee-ffffffffffff"
		gw.SetDescribe(late, clawRow(t, late, clawParent, 1))
		if text := clawInject(t, s, late); !strings.Contains(text, "SPAWN-PLEASE") {
			t.Errorf("late child's block: got %q, want the parent's", text)
		}
		asked := false
		for _, r := range gw.RequestsFor("sessions.describe") {
			asked = asked || strings.Contains(string(r.Params), late)
		}
		if !asked {
			t.Errorf("the Gateway was not asked about %s", late)
		}
	})
}
