package proxy_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

// tree is a fake Claude Code projects dir: a transcript root with one session's transcript.
type tree struct {
	root       string // the allowed transcript root
	transcript string // the session's transcript path
}

func newTree(t *testing.T, sid string) tree {
	root := filepath.Join(t.TempDir(), "projects")
	dir := filepath.Join(root, "-work-app")
	if err := os.MkdirAll(filepath.Join(dir, sid, "subagents"), 0o755); err != nil {
		t.Fatal(err)
	}
	return tree{root: root, transcript: filepath.Join(dir, sid+".jsonl")}
}

// appendLines appends JSONL records to path.
func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

func userLine(uuid, text string) string {
	return fmt.Sprintf(`{"type":"user","uuid":%q,"timestamp":"2026-11-01T10:00:00Z","message":{"role":"user","content":%q}}`, uuid, text)
}

func assistantLine(uuid, text string) string {
	return fmt.Sprintf(`{"type":"assistant","uuid":%q,"timestamp":"2026-11-01T10:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":%q}]}}`, uuid, text)
}

// hook posts one Claude Code hook payload built from fields and returns the additionalContext.
func hook(t *testing.T, s *proxy.Server, fields map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(fields)
	resp, err := http.Post(s.URL()+"/hooks/claude-code", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reply struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if resp.StatusCode != 200 {
		t.Fatalf("%v: status %d", fields["hook_event_name"], resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
		t.Fatal(err)
	}
	return reply.HookSpecificOutput.AdditionalContext
}

// ev builds a hook payload for session sid of tree tr.
func ev(tr tree, sid, event string, extra map[string]any) map[string]any {
	m := map[string]any{"session_id": sid, "transcript_path": tr.transcript, "cwd": "/work/app", "hook_event_name": event}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func spawnEv(tr tree, sid, toolUseID, typ, prompt, agentID string) map[string]any {
	extra := map[string]any{"tool_name": "Agent", "tool_use_id": toolUseID,
		"tool_input": map[string]any{"description": "desc " + toolUseID, "prompt": prompt, "subagent_type": typ}}
	if agentID != "" {
		extra["agent_id"] = agentID
		extra["agent_type"] = "general-purpose"
	}
	return ev(tr, sid, "PreToolUse", extra)
}

func startEv(tr tree, sid, agentID, typ string) map[string]any {
	return ev(tr, sid, "SubagentStart", map[string]any{"agent_id": agentID, "agent_type": typ})
}

func resultEv(tr tree, sid, toolUseID, agentID, text string) map[string]any {
	return ev(tr, sid, "PostToolUse", map[string]any{"tool_name": "Agent", "tool_use_id": toolUseID,
		"tool_input":    map[string]any{"prompt": "x"},
		"tool_response": map[string]any{"status": "completed", "agentId": agentID, "content": []any{map[string]any{"type": "text", "text": text}}, "totalTokens": 1234, "totalDurationMs": 5678}})
}

// openEngine opens a server reading transcripts under tr. Its SubagentStart waits only briefly
// for spawning turns (tests that write none would otherwise wait the full bound each time);
// TestSpawnRecordAwaited sets the real bound.
func openEngine(t *testing.T, tr tree) *proxy.Server {
	return MustOpenServer(t, func(s *proxy.Server) {
		s.Engine.Config.TranscriptRoots = []string{tr.root}
		s.Engine.Config.SpawnRecordWait = 5 * time.Millisecond
	})
}

func mustSession(t *testing.T, s *proxy.Server, id string) kv.Session {
	t.Helper()
	sess, err := s.Engine.Store.GetSession(t.Context(), "default", id)
	if err != nil {
		t.Fatalf("session %s: %v", id, err)
	}
	return sess
}

func mustRun(t *testing.T, s *proxy.Server, id string) kv.Run {
	t.Helper()
	r, err := s.Engine.Store.GetRun(t.Context(), "default", id)
	if err != nil {
		t.Fatalf("run %s: %v", id, err)
	}
	return r
}

func TestInheritAtSubagentStart(t *testing.T) {
	tr := newTree(t, "S")
	s := openEngine(t, tr)
	hook(t, s, ev(tr, "S", "SessionStart", map[string]any{"source": "startup"}))
	appendLines(t, tr.transcript, userLine("u1", "Port the parser to Go. MARK-7781. Never touch vendor/."), assistantLine("a1", "Reading parse.c now."))
	hook(t, s, ev(tr, "S", "UserPromptSubmit", map[string]any{"prompt": "Port the parser to Go. MARK-7781. Never touch vendor/."}))
	hook(t, s, spawnEv(tr, "S", "toolu_1", "Explore", "Find every caller of parse()", ""))
	got := hook(t, s, startEv(tr, "S", "agent1", "Explore"))

	for _, want := range []string{"## Inherited from Parent Session", "MARK-7781", "Reading parse.c now.", "Never touch vendor/"} {
		if !strings.Contains(got, want) {
			t.Errorf("inherited block lacks %q:\n%s", want, got)
		}
	}
	child := mustSession(t, s, "S:agent1")
	if child.ParentID != "S" || child.Depth != 1 || child.Objective != "Find every caller of parse()" || child.AgentType != "Explore" {
		t.Fatalf("child: got %+v", child)
	}
	if r := mustRun(t, s, "toolu_1"); r.ChildID != "S:agent1" || r.Status != kv.RunRunning || r.Provisional {
		t.Fatalf("run: got %+v", r)
	}
	// A repeated SubagentStart is idempotent: same reply, no second pairing.
	if again := hook(t, s, startEv(tr, "S", "agent1", "Explore")); again != got {
		t.Fatalf("repeated SubagentStart: reply changed")
	}

	// The sub-agent finishes: SubagentStop then PostToolUse record the result.
	sub := filepath.Join(filepath.Dir(tr.transcript), "S", "subagents", "agent-agent1.jsonl")
	appendLines(t, sub, userLine("c1", "Find every caller of parse()"), assistantLine("c2", "Three callers."))
	hook(t, s, ev(tr, "S", "SubagentStop", map[string]any{"agent_id": "agent1", "agent_type": "Explore", "agent_transcript_path": sub, "last_assistant_message": "Three callers."}))
	hook(t, s, resultEv(tr, "S", "toolu_1", "agent1", "Three callers: a, b, c."))
	r := mustRun(t, s, "toolu_1")
	if r.Status != "completed" || r.Result != "Three callers: a, b, c." || r.Tokens != 1234 || r.DurationMs != 5678 {
		t.Fatalf("finished run: got %+v", r)
	}
	if c := mustSession(t, s, "S:agent1"); c.Status != kv.StatusEnded || c.TurnCount != 2 {
		t.Fatalf("finished child: got status %s turns %d", c.Status, c.TurnCount)
	}
}

func TestNothingToInherit(t *testing.T) {
	tr := newTree(t, "S")
	s := openEngine(t, tr)
	if got := hook(t, s, startEv(tr, "S", "agent1", "Explore")); got != "" {
		t.Fatalf("parent with nothing: got %q, want no context", got)
	}
}

func TestInheritDisabled(t *testing.T) {
	tr := newTree(t, "S")
	s := MustOpenServer(t, func(s *proxy.Server) {
		s.Engine.Config.TranscriptRoots = []string{tr.root}
		s.Engine.Config.Passive = true
	})
	hook(t, s, ev(tr, "S", "UserPromptSubmit", map[string]any{"prompt": "objective here"}))
	hook(t, s, spawnEv(tr, "S", "toolu_1", "Explore", "task", ""))
	if got := hook(t, s, startEv(tr, "S", "agent1", "Explore")); got != "" {
		t.Fatalf("inherit disabled: got %q", got)
	}
	if c := mustSession(t, s, "S:agent1"); c.ParentID != "S" {
		t.Fatalf("lineage is still recorded when inheritance is off: got %+v", c)
	}
}

// Two parallel spawns of the same type from different issuers (the root and a sub-agent): the
// start order is a guess, marked provisional, and corrected by the spawn results.
func TestProvisionalPairingCorrected(t *testing.T) {
	tr := newTree(t, "S")
	s := openEngine(t, tr)
	hook(t, s, ev(tr, "S", "UserPromptSubmit", map[string]any{"prompt": "root objective"}))
	hook(t, s, spawnEv(tr, "S", "toolu_mid", "general-purpose", "middle task", ""))
	hook(t, s, startEv(tr, "S", "mid", "general-purpose"))

	// Root spawns X (older), the sub-agent "mid" spawns Y; both Explore.
	hook(t, s, spawnEv(tr, "S", "toolu_X", "Explore", "task X from root", ""))
	hook(t, s, spawnEv(tr, "S", "toolu_Y", "Explore", "task Y from mid", "mid"))
	// Y's sub-agent starts first: paired (wrongly) with the oldest candidate, X.
	hook(t, s, startEv(tr, "S", "agentY", "Explore"))
	if r := mustRun(t, s, "toolu_X"); r.ChildID != "S:agentY" || !r.Provisional {
		t.Fatalf("guess: got %+v, want X provisionally paired with agentY", r)
	}
	hook(t, s, startEv(tr, "S", "agentX", "Explore"))

	// The results say which is which.
	hook(t, s, resultEv(tr, "S", "toolu_Y", "agentY", "Y done"))
	hook(t, s, resultEv(tr, "S", "toolu_X", "agentX", "X done"))

	x, y := mustRun(t, s, "toolu_X"), mustRun(t, s, "toolu_Y")
	if x.ChildID != "S:agentX" || x.Provisional || y.ChildID != "S:agentY" || y.Provisional {
		t.Fatalf("after correction: X %+v, Y %+v", x, y)
	}
	cy, cx := mustSession(t, s, "S:agentY"), mustSession(t, s, "S:agentX")
	if cy.ParentID != "S:mid" || cy.Depth != 2 || cy.Objective != "task Y from mid" {
		t.Fatalf("agentY: got parent %q depth %d objective %q", cy.ParentID, cy.Depth, cy.Objective)
	}
	if cx.ParentID != "S" || cx.Depth != 1 || cx.Objective != "task X from root" {
		t.Fatalf("agentX: got parent %q depth %d objective %q", cx.ParentID, cx.Depth, cx.Objective)
	}
}

// Different types never pair with each other, whatever the start order.
func TestPairByType(t *testing.T) {
	tr := newTree(t, "S")
	s := openEngine(t, tr)
	hook(t, s, spawnEv(tr, "S", "toolu_A", "Explore", "explore it", ""))
	hook(t, s, spawnEv(tr, "S", "toolu_B", "Plan", "plan it", ""))
	hook(t, s, startEv(tr, "S", "b", "Plan"))
	hook(t, s, startEv(tr, "S", "a", "Explore"))
	if a, b := mustRun(t, s, "toolu_A"), mustRun(t, s, "toolu_B"); a.ChildID != "S:a" || b.ChildID != "S:b" || a.Provisional || b.Provisional {
		t.Fatalf("got A %+v B %+v", a, b)
	}
}

// The compaction agent's SubagentStop creates no session and no run.
func TestCompactionAgentIgnored(t *testing.T) {
	tr := newTree(t, "S")
	s := openEngine(t, tr)
	hook(t, s, ev(tr, "S", "SubagentStop", map[string]any{"agent_id": "acompact1", "agent_type": "", "last_assistant_message": "summary"}))
	if _, err := s.Engine.Store.GetSession(t.Context(), "default", "S:acompact1"); err == nil {
		t.Fatal("compaction agent recorded as a session")
	}
	runs, _ := s.Engine.Store.ListRuns(t.Context(), "default", kv.RunFilter{})
	if len(runs) != 0 {
		t.Fatalf("got %d runs", len(runs))
	}
}

// Without session_id (older Claude Code) the parent is the most recent active session of the
// project, and the guess is recorded.
func TestInferredParent(t *testing.T) {
	tr := newTree(t, "S")
	s := openEngine(t, tr)
	hook(t, s, ev(tr, "S", "UserPromptSubmit", map[string]any{"prompt": "objective OBJ-1"}))
	got := hook(t, s, map[string]any{"hook_event_name": "SubagentStart", "cwd": "/work/app", "agent_id": "old1", "agent_type": "Explore"})
	c := mustSession(t, s, "S:old1")
	if c.ParentID != "S" || !c.ParentInferred {
		t.Fatalf("got %+v", c)
	}
	if !strings.Contains(got, "OBJ-1") {
		t.Fatalf("inferred parent's block lacks its objective: %q", got)
	}
}

func TestIngest(t *testing.T) {
	t.Run("PartialLineAndShrink", func(t *testing.T) {
		tr := newTree(t, "S")
		s := openEngine(t, tr)
		appendLines(t, tr.transcript, userLine("u1", "one"))
		// A partial last record is left for the next read.
		f, _ := os.OpenFile(tr.transcript, os.O_APPEND|os.O_WRONLY, 0o644)
		f.WriteString(userLine("u2", "two")[:20])
		f.Close()
		hook(t, s, ev(tr, "S", "UserPromptSubmit", map[string]any{"prompt": "one"}))
		if n := mustSession(t, s, "S").TurnCount; n != 1 {
			t.Fatalf("after partial line: got %d turns, want 1", n)
		}
		// The file is replaced by a shorter one holding u1 again and u3: re-read, no duplicate.
		os.Remove(tr.transcript)
		appendLines(t, tr.transcript, userLine("u1", "one"), userLine("u3", "three"))
		hook(t, s, ev(tr, "S", "Stop", nil))
		turns, _ := s.Engine.Store.Turns(t.Context(), "default", "S", 0, 0)
		if len(turns) != 2 || turns[0].SourceID != "u1" || turns[1].SourceID != "u3" {
			t.Fatalf("after replace: got %+v", turns)
		}
		hook(t, s, ev(tr, "S", "Stop", nil))
		if n := mustSession(t, s, "S").TurnCount; n != 2 {
			t.Fatalf("repeat read: got %d turns, want 2", n)
		}
	})
	t.Run("MissingFile", func(t *testing.T) {
		tr := newTree(t, "S")
		s := openEngine(t, tr)
		hook(t, s, ev(tr, "S", "UserPromptSubmit", map[string]any{"prompt": "p"}))
		appendLines(t, tr.transcript, userLine("u1", "one"))
		hook(t, s, ev(tr, "S", "Stop", nil))
		if n := mustSession(t, s, "S").TurnCount; n != 1 {
			t.Fatalf("got %d turns after the file appeared", n)
		}
	})
	t.Run("ErrOutsideRoots", func(t *testing.T) {
		tr := newTree(t, "S")
		s := openEngine(t, tr)
		outside := filepath.Join(t.TempDir(), "secret.jsonl")
		appendLines(t, outside, userLine("u1", "secret"))
		// A symlink inside the root pointing outside is refused too.
		link := filepath.Join(filepath.Dir(tr.transcript), "L.jsonl")
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		for i, p := range []string{outside, link, filepath.Join(tr.root, "..", "..", filepath.Base(filepath.Dir(outside)), "secret.jsonl")} {
			sid := fmt.Sprintf("X%d", i)
			hook(t, s, map[string]any{"session_id": sid, "transcript_path": p, "cwd": "/w", "hook_event_name": "UserPromptSubmit", "prompt": "p"})
			if n := mustSession(t, s, sid).TurnCount; n != 0 {
				t.Fatalf("%s: read %d turns from outside the roots", p, n)
			}
		}
	})
	t.Run("ReadCap", func(t *testing.T) {
		tr := newTree(t, "S")
		s := MustOpenServer(t, func(s *proxy.Server) {
			s.Engine.Config.TranscriptRoots = []string{tr.root}
			s.Engine.Config.HookReadBytes, s.Engine.Config.MaxReadBytes = 300, 300
		})
		appendLines(t, tr.transcript, userLine("big", strings.Repeat("x", 1000)), userLine("u1", "a"), userLine("u2", "b"), userLine("u3", "c"))
		// More than a hook reads: the rest is read in the background, 300 bytes at a time.
		hook(t, s, ev(tr, "S", "Stop", nil))
		var turns []kv.Turn
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if turns, _ = s.Engine.Store.Turns(t.Context(), "default", "S", 0, 0); len(turns) >= 3 {
				break
			}
		}
		var ids []string
		for _, tt := range turns {
			ids = append(ids, tt.SourceID)
		}
		if strings.Join(ids, ",") != "u1,u2,u3" {
			t.Fatalf("with a 300-byte cap: got turns %v, want the oversized record skipped and the rest read", ids)
		}
	})
}

func toolUseLine(uuid, toolUseID, text string) string {
	return fmt.Sprintf(`{"type":"assistant","uuid":%q,"timestamp":"2026-11-01T10:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":%q},{"type":"tool_use","id":%q,"name":"Agent","input":{"prompt":"x","subagent_type":"Explore"}}]}}`, uuid, text, toolUseID)
}

// Claude Code writes its transcript asynchronously: the spawning turn can land after the
// sub-agent started. SubagentStart waits for it (boundedly) so the tail holds the parent's latest
// work.
func TestSpawnRecordAwaited(t *testing.T) {
	tr := newTree(t, "S")
	s := MustOpenServer(t, func(s *proxy.Server) {
		s.Engine.Config.TranscriptRoots = []string{tr.root}
		s.Engine.Config.SpawnRecordWait = 2 * time.Second
	})
	appendLines(t, tr.transcript, userLine("u1", "Port the parser."))
	hook(t, s, ev(tr, "S", "UserPromptSubmit", map[string]any{"prompt": "Port the parser."}))
	hook(t, s, spawnEv(tr, "S", "toolu_late", "Explore", "find callers", ""))
	go func() {
		time.Sleep(100 * time.Millisecond)
		appendLines(t, tr.transcript, toolUseLine("a1", "toolu_late", "LATE-TURN: delegating the search."))
	}()
	got := hook(t, s, startEv(tr, "S", "agent1", "Explore"))
	if !strings.Contains(got, "LATE-TURN") {
		t.Fatalf("the inherited tail lacks the spawning turn written after SubagentStart arrived:\n%s", got)
	}
}

// The last candidate left after a guess is a guess too: the earlier guess may have taken its
// spawn. Both are corrected by the results.
func TestPairingByEliminationIsProvisional(t *testing.T) {
	tr := newTree(t, "S")
	s := openEngine(t, tr)
	hook(t, s, ev(tr, "S", "UserPromptSubmit", map[string]any{"prompt": "root objective"}))
	hook(t, s, spawnEv(tr, "S", "toolu_a1", "general-purpose", "middle task", ""))
	hook(t, s, startEv(tr, "S", "a1", "general-purpose"))
	hook(t, s, spawnEv(tr, "S", "toolu_B", "Explore", "task B from root", ""))
	hook(t, s, spawnEv(tr, "S", "toolu_C", "Explore", "task C from a1", "a1"))
	hook(t, s, startEv(tr, "S", "a2", "Explore")) // guessed: B (truly C's)
	hook(t, s, startEv(tr, "S", "a3", "Explore")) // by elimination: C (truly B's)
	if c := mustRun(t, s, "toolu_C"); c.ChildID != "S:a3" || !c.Provisional {
		t.Fatalf("pairing by elimination after a guess: got %+v, want provisional", c)
	}
	hook(t, s, resultEv(tr, "S", "toolu_C", "a2", "C done"))
	hook(t, s, resultEv(tr, "S", "toolu_B", "a3", "B done"))
	b, c := mustRun(t, s, "toolu_B"), mustRun(t, s, "toolu_C")
	if b.ChildID != "S:a3" || b.Provisional || c.ChildID != "S:a2" || c.Provisional {
		t.Fatalf("after results: B %+v, C %+v", b, c)
	}
	if a2, a3 := mustSession(t, s, "S:a2"), mustSession(t, s, "S:a3"); a2.ParentID != "S:a1" || a3.ParentID != "S" || a2.Depth != 2 || a3.Depth != 1 {
		t.Fatalf("parents after correction: a2 %q/%d, a3 %q/%d", a2.ParentID, a2.Depth, a3.ParentID, a3.Depth)
	}
}
