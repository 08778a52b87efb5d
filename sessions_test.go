package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

// runCLI runs the heirloom binary with args and env, returning stdout, stderr and the exit code.
func runCLI(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runCLIStdin(t, env, "", args...)
}

// sessionID is a Claude Code–style session id, long enough to be shortened in tables.
const sessionID = "49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7"

// TestSessionsCommand records a session through the real hook endpoint and lists it.
func TestSessionsCommand(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"), baseEnv(t))
	for _, body := range []string{
		sessionStart(sessionID, "/tmp"),
		fmt.Sprintf(`{"session_id":%q,"cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"build the thing\nand test it"}`, sessionID),
	} {
		if status, reply := postHook(t, s.url, body); status != http.StatusOK {
			t.Fatalf("hook: got %d %s", status, reply)
		}
	}
	env := append(baseEnv(t), "HEIRLOOM_URL="+s.url)

	t.Run("Table", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, env, "sessions")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != 2 {
			t.Fatalf("got %d lines, want a header and one session:\n%s", len(lines), stdout)
		}
		if !regexp.MustCompile(`^ID +HARNESS +STATUS +TURNS +UPDATED +TITLE$`).MatchString(lines[0]) {
			t.Errorf("header: got %q", lines[0])
		}
		// The objective is the first prompt, on one line; UPDATED is relative.
		row := regexp.MustCompile(`^49bc4f7b +claude-code +active +0 +(just now|\d+s ago) +build the thing and test it$`)
		if !row.MatchString(lines[1]) {
			t.Errorf("row: got %q, want %v", lines[1], row)
		}
		// Columns line up.
		if strings.Index(lines[0], "HARNESS") != strings.Index(lines[1], "claude-code") {
			t.Errorf("columns not aligned:\n%s", stdout)
		}
	})
	t.Run("JSON", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, env, "sessions", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var got struct {
			Sessions []map[string]any `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, stdout)
		}
		if len(got.Sessions) != 1 {
			t.Fatalf("got %d sessions, want 1", len(got.Sessions))
		}
		sess := got.Sessions[0]
		for key, want := range map[string]any{
			"id": sessionID, "harness": "claude-code", "status": "active", "project": "/tmp",
			"objective": "build the thing\nand test it", "parent_id": "", "turn_count": float64(0),
		} {
			if sess[key] != want {
				t.Errorf("%s: got %#v, want %#v", key, sess[key], want)
			}
		}
	})
	t.Run("Filtered", func(t *testing.T) {
		stdout, _, code := runCLI(t, env, "sessions", "--harness", "opencode")
		if code != 0 || firstLineOf(stdout) != "no sessions match" {
			t.Fatalf("got exit %d %q, want 0 and no sessions match", code, stdout)
		}
		stdout, _, _ = runCLI(t, env, "sessions", "--project", "/tmp", "--status", "active")
		if !strings.Contains(stdout, "49bc4f7b") {
			t.Fatalf("--project /tmp: got %q", stdout)
		}
	})
	t.Run("Tree", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, env, "sessions", "--tree")
		if code != 0 || !strings.Contains(stdout, "49bc4f7b") || strings.Contains(stdout, "├─") {
			t.Fatalf("got exit %d %q %s", code, stdout, stderr)
		}
	})
	t.Run("ErrBadLimit", func(t *testing.T) {
		_, stderr, code := runCLI(t, env, "sessions", "--limit", "0")
		if code != 1 || !strings.Contains(stderr, "limit") {
			t.Fatalf("got exit %d %q, want 1 naming limit", code, stderr)
		}
		_, _, code = runCLI(t, env, "sessions", "extra")
		if code != 2 {
			t.Fatalf("positional argument: got exit %d, want 2", code)
		}
	})
	t.Run("NoRuns", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, env, "runs")
		if code != 0 || firstLineOf(stdout) != "no runs yet" {
			t.Fatalf("got exit %d %q %s, want 0 and no runs yet", code, stdout, stderr)
		}
		stdout, _, _ = runCLI(t, env, "runs", "--json")
		if strings.TrimSpace(stdout) != `{"runs":[]}` {
			t.Fatalf("--json: got %q", stdout)
		}
	})
}

// TestSessionsTree seeds a data dir with a sub-agent tree and its runs, then reads it through
// serve, the API and the CLI.
func TestSessionsTree(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	ctx := t.Context()
	store := kv.NewStore(dataDir)
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	put := func(id, parent, agentType, title string) {
		t.Helper()
		sess := kv.Session{Scope: "default", ID: id, Harness: "claude-code", ParentID: parent, AgentType: agentType, Title: title, Status: kv.StatusActive}
		if err := store.PutSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	run := func(id, parent, child, typ, status, desc string) {
		t.Helper()
		_, err := store.UpdateRun(ctx, "default", id, func(r *kv.Run, _ bool) error {
			*r = kv.Run{Scope: "default", ID: id, Harness: "claude-code", RootID: sessionID, ParentID: parent, ChildID: child, Type: typ, Status: status, Description: desc, DurationMs: 90_000}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := sessionID+":a02df2ef9ee472336", sessionID+":a73685d8901dc53f2", sessionID+":a1ba2876fa63b44e9"
	put(sessionID, "", "", "ship the feature")
	put(a, sessionID, "Explore", "look around")
	put(c, a, "general-purpose", "dig deeper")
	put(b, sessionID, "Plan", "make a plan")
	run("toolu_01AAAAAAAAAAAAAAAAAAAAAAAA", sessionID, a, "Explore", kv.RunCompleted, "look around")
	run("toolu_01BBBBBBBBBBBBBBBBBBBBBBBB", sessionID, b, "Plan", kv.RunRunning, "make a plan")
	run("toolu_01CCCCCCCCCCCCCCCCCCCCCCCC", a, c, "general-purpose", kv.RunFailed, "dig deeper")
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, dataDir, baseEnv(t))
	env := append(baseEnv(t), "HEIRLOOM_URL="+s.url)

	stdout, stderr, code := runCLI(t, env, "sessions", "--tree")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Logf("sessions --tree:\n%s", stdout)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^49bc4f7b +claude-code +active +0 +\S.* ship the feature$`),
		regexp.MustCompile(`(?m)^├─ a02df2ef +Explore +completed +0 +.* look around$`),
		regexp.MustCompile(`(?m)^│  └─ a1ba2876 +general-purpose +failed +0 +.* dig deeper$`),
		regexp.MustCompile(`(?m)^└─ a73685d8 +Plan +running +0 +.* make a plan$`),
	} {
		if !want.MatchString(stdout) {
			t.Errorf("tree lacks a line matching %v", want)
		}
	}
	stdout, _, code = runCLI(t, env, "sessions", "--tree", "--json")
	var lineages []map[string]any
	if err := json.Unmarshal([]byte(stdout), &lineages); code != 0 || err != nil || len(lineages) != 1 {
		t.Fatalf("--tree --json: exit %d, %v, %d lineages:\n%s", code, err, len(lineages), stdout)
	}

	stdout, stderr, code = runCLI(t, env, "runs")
	if code != 0 {
		t.Fatalf("runs: exit %d: %s", code, stderr)
	}
	t.Logf("runs:\n%s", stdout)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`^ID +TYPE +STATUS +CHILD +CREATED +DURATION +DESCRIPTION\n`),
		regexp.MustCompile(`(?m)^toolu_01CCCCCC +general-purpose +failed +49bc4f7b:a1ba2876 +\S.* +1m30s +dig deeper$`),
	} {
		if !want.MatchString(stdout) {
			t.Errorf("runs table lacks %v", want)
		}
	}
	stdout, _, _ = runCLI(t, env, "runs", "--status", "running", "--root", sessionID)
	if strings.Count(strings.TrimSpace(stdout), "\n") != 1 || !strings.Contains(stdout, "toolu_01BBBBBB") {
		t.Errorf("runs --status running: got %q, want one run", stdout)
	}
	stdout, _, _ = runCLI(t, env, "runs", "--root", "nobody")
	if firstLineOf(stdout) != "no runs match" {
		t.Errorf("runs --root nobody: got %q", stdout)
	}
}

// TestSessionsNoSidecar: with nothing listening, both commands fail fast with exit 1 and say how
// to start heirloom.
func TestSessionsNoSidecar(t *testing.T) {
	url := "http://" + freeAddr(t)
	env := append(baseEnv(t), "HEIRLOOM_URL="+url)
	for _, cmd := range []string{"sessions", "runs"} {
		start := time.Now()
		stdout, stderr, code := runCLI(t, env, cmd)
		want := "heirloom: no heirloom at " + url + ": start it with `heirloom serve`\n"
		if code != 1 || stderr != want || stdout != "" {
			t.Errorf("%s: got exit %d stdout %q stderr %q, want 1 and %q", cmd, code, stdout, stderr, want)
		}
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Errorf("%s: took %s with nothing listening", cmd, elapsed)
		}
	}
}

// TestSessionsToken: against a sidecar with a token, the CLI sends HEIRLOOM_TOKEN, and says to
// set it when it is missing.
func TestSessionsToken(t *testing.T) {
	serveEnv := append(baseEnv(t), "HEIRLOOM_TOKEN=sekret")
	s := startServe(t, filepath.Join(t.TempDir(), "data"), serveEnv)
	env := append(baseEnv(t), "HEIRLOOM_URL="+s.url)
	_, stderr, code := runCLI(t, env, "sessions")
	if code != 1 || !strings.Contains(stderr, "unauthorized") || !strings.Contains(stderr, "HEIRLOOM_TOKEN") {
		t.Fatalf("without token: got exit %d %q", code, stderr)
	}
	stdout, stderr, code := runCLI(t, append(env, "HEIRLOOM_TOKEN=sekret"), "sessions")
	if code != 0 || firstLineOf(stdout) != "no sessions yet" {
		t.Fatalf("with token: got exit %d %q %q", code, stdout, stderr)
	}
}

// TestSessionsScope records an OpenClaw spawn through the plugin's hook endpoint: the sessions are
// filed under the key's agentId, listed with --scope and absent from the configured scope.
func TestSessionsScope(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"), baseEnv(t))
	const parent, child = "agent:main:parentb", "agent:main:subagent:030f5da4-ab00-499e-b6af-e63e2b24b61c"
	body := fmt.Sprintf(`{"hook":"subagent_spawned","event":{"runId":"r1","childSessionKey":%q,"agentId":"main","label":"child-research","mode":"run"},"ctx":{"runId":"r1","childSessionKey":%q,"requesterSessionKey":%q}}`, child, child, parent)
	resp, err := http.Post(s.url+"/hooks/openclaw", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("hook: got %d", resp.StatusCode)
	}
	env := append(baseEnv(t), "HEIRLOOM_URL="+s.url)
	stdout, stderr, code := runCLI(t, env, "sessions", "--scope", "main", "--tree")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "openclaw") || !strings.Contains(lines[2], "└─") || !strings.Contains(lines[2], "child-research") {
		t.Fatalf("got\n%s\nwant the parent with the labelled child beneath it", stdout)
	}
	stdout, _, _ = runCLI(t, env, "sessions")
	if firstLineOf(stdout) != "no sessions yet" || !strings.Contains(stdout, "--scope main") {
		t.Errorf("configured scope: got\n%s\nwant no sessions and the hint to add --scope", stdout)
	}
}

// firstLineOf returns the first line of out: an empty listing's verdict, before any hint.
func firstLineOf(out string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return line
}
