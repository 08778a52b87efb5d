package main_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestCLI_Help: every command and subcommand answers -h and --help with its usage on stdout
// and exit 0, and asks the sidecar nothing (HEIRLOOM_URL points at a server that counts
// requests).
func TestCLI_Help(t *testing.T) {
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer srv.Close()
	env := append(baseEnv(t), "HEIRLOOM_URL="+srv.URL)
	for _, cmd := range [][]string{
		{"serve"}, {"hook"}, {"hook", "claude-code"}, {"sessions"}, {"sessions", "delete"}, {"runs"},
		{"runs", "show"}, {"explain"}, {"doctor"}, {"search"}, {"watch"}, {"reindex"}, {"checkpoint"}, {"mcp"}, {"install"},
		{"install", "claude-code"}, {"install", "opencode"}, {"install", "openclaw"}, {"uninstall"},
		{"uninstall", "claude-code"}, {"uninstall", "opencode"}, {"uninstall", "openclaw"}, {"install", "service"},
		{"uninstall", "service"}, {"config"},
		{"config", "show"}, {"config", "example"},
	} {
		for _, h := range []string{"-h", "--help"} {
			args := append(append([]string(nil), cmd...), h)
			stdout, stderr, code := runCLIStdin(t, env, "", args...)
			if code != 0 || !strings.Contains(stdout, "Usage") && !strings.Contains(stdout, "usage") {
				t.Errorf("heirloom %s: exit %d, stdout %q, stderr %q; want its usage on stdout and exit 0", strings.Join(args, " "), code, first(stdout, 200), first(stderr, 200))
			}
		}
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("asking for help sent %d requests to the sidecar", n)
	}
	// A mistake is still one: exit 2, said on stderr.
	if _, stderr, code := runCLI(t, env, "runs", "--no-such-flag"); code != 2 || !strings.Contains(stderr, "no-such-flag") {
		t.Errorf("runs --no-such-flag: exit %d, stderr %q; want 2 and why", code, stderr)
	}
	// After "--", -h belongs to the wrapped hook command, not to heirloom.
	if stdout, _, code := runCLIStdin(t, env, "{}", "hook", "claude-code", "--", "true", "-h"); code != 0 || strings.Contains(stdout, "Usage") {
		t.Errorf("hook claude-code -- true -h: exit %d, stdout %q; want the hook's reply", code, stdout)
	}
}

// TestCLI_FindsTheSidecar: with no HEIRLOOM_URL, a client command reaches the sidecar where the
// server's own configuration says it listens: HEIRLOOM_LISTEN, or the config file's listen (a
// wildcard address reached on loopback); --url wins over both.
func TestCLI_FindsTheSidecar(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"), baseEnv(t))
	addr := strings.TrimPrefix(s.url, "http://")
	_, port, _ := strings.Cut(addr, ":")
	if status, reply := postHook(t, s.url, sessionStart(sessionID, "/tmp")); status != http.StatusOK {
		t.Fatalf("hook: %d %s", status, reply)
	}
	found := func(name string, env []string, args ...string) {
		t.Helper()
		stdout, stderr, code := runCLI(t, env, append([]string{"sessions"}, args...)...)
		if code != 0 || !strings.Contains(stdout, "49bc4f7b") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want the session listed", name, code, stdout, stderr)
		}
	}
	found("HEIRLOOM_LISTEN", append(baseEnv(t), "HEIRLOOM_LISTEN="+addr))
	home := t.TempDir()
	cfg := filepath.Join(home, ".config", "heirloom", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("listen: 0.0.0.0:"+port+"\ntoken: from-the-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	found("the config file's listen", []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")})
	found("--url", append(baseEnv(t), "HEIRLOOM_LISTEN=127.0.0.1:1"), "--url", s.url)
	if _, stderr, code := runCLI(t, append(baseEnv(t), "HEIRLOOM_LISTEN="+freeAddr(t)), "sessions"); code != 1 || !strings.Contains(stderr, "no heirloom at http://127.0.0.1:") {
		t.Errorf("no sidecar where the config says: exit %d, stderr %q", code, stderr)
	}
}

// TestCLI_ShortIDs: the short ids `heirloom sessions` prints name sessions everywhere a key is
// taken; an id several sessions shorten to is an error naming them.
func TestCLI_ShortIDs(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"), baseEnv(t))
	twin := "49bc4f7b-0000-4000-8000-000000000000" // shortens like sessionID
	for _, id := range []string{sessionID, twin, "5ab0c1d2-89e8-4c4e-a7e6-0a6b981a5be7"} {
		for _, body := range []string{
			sessionStart(id, "/tmp"),
			fmt.Sprintf(`{"session_id":%q,"cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"objective of %s"}`, id, id),
		} {
			if status, reply := postHook(t, s.url, body); status != http.StatusOK {
				t.Fatalf("hook: %d %s", status, reply)
			}
		}
	}
	env := append(baseEnv(t), "HEIRLOOM_URL="+s.url)
	stdout, stderr, code := runCLI(t, env, "checkpoint", "5ab0c1d2")
	if code != 0 || !strings.Contains(stdout, "5ab0c1d2-89e8-4c4e-a7e6-0a6b981a5be7") {
		t.Errorf("checkpoint by short id: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	_, stderr, code = runCLI(t, env, "checkpoint", "49bc4f7b")
	if code != 1 || !strings.Contains(stderr, "names 2 sessions") || !strings.Contains(stderr, twin) {
		t.Errorf("an ambiguous short id: exit %d, stderr %q; want an error naming both", code, stderr)
	}
	if _, stderr, code = runCLI(t, env, "sessions", "delete", "nope"); code != 1 || !strings.Contains(stderr, "session nope not found") {
		t.Errorf("delete of an unknown id: exit %d, stderr %q", code, stderr)
	}
	stdout, stderr, code = runCLI(t, env, "sessions", "delete", "5ab0c1d2")
	if code != 0 || !strings.Contains(stdout, "deleted session 5ab0c1d2-89e8-4c4e-a7e6-0a6b981a5be7") {
		t.Errorf("delete by short id: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// The hooks stored no turns (no transcript), so no hit; an unresolved id would be a 404.
	if stdout, stderr, code = runCLI(t, env, "search", "objective", "--session", "49bc4f7b-0000"); code != 0 || stderr != "" {
		t.Errorf("search --session by an id's start: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestCLI_FilterValues: a filter value no record can have is an error saying what the filter
// takes, the same way for every filter, not an empty list.
func TestCLI_FilterValues(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"), baseEnv(t))
	env := append(baseEnv(t), "HEIRLOOM_URL="+s.url)
	for _, args := range [][]string{
		{"runs", "--status", "weird"}, {"runs", "--harness", "bogus"}, {"sessions", "--harness", "bogus"},
		{"sessions", "--status", "weird"}, {"search", "x", "--harness", "bogus"},
	} {
		_, stderr, code := runCLI(t, env, args...)
		if code != 1 || !strings.Contains(stderr, `got "`) || !strings.Contains(stderr, "want one of") {
			t.Errorf("%s: exit %d, stderr %q; want an error naming the values it takes", strings.Join(args, " "), code, stderr)
		}
	}
}

func first(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// runCLIStdin is runCLI with stdin.
func runCLIStdin(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(heirloomBin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// TestJunkIDsAreNoSessions (issue 16, item 7): through the built binary, a hook call whose
// session_id is not valid UTF-8 (listed as "s\ufffd" before) or holds a control character gets
// a 400, and so does a plugin call (/api/inject, /api/spawn-check) naming such an id or one
// over adapters.MaxIDBytes; no session and no run is stored for any of them.
func TestJunkIDsAreNoSessions(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"), baseEnv(t))
	for _, body := range []string{
		"{\"hook_event_name\":\"SessionStart\",\"session_id\":\"s\xff\",\"source\":\"startup\"}",
		`{"hook_event_name":"Stop","session_id":"s\u0001"}`,
	} {
		if status, reply := postHook(t, s.url, body); status != http.StatusBadRequest {
			t.Errorf("hook %q: %d %s, want 400", body, status, reply)
		}
	}
	// The plugins' calls take the same ids (OpenCode's and OpenClaw's plugins ask them).
	for _, c := range []struct{ path, body string }{
		{"/api/inject", "{\"harness\":\"opencode\",\"session\":\"ses_\xff\"}"},
		{"/api/inject", `{"harness":"openclaw","session":"agent:main:subagent:x","parent":"agent:main:\u0007"}`},
		{"/api/spawn-check?harness=opencode&session=ses_%01", `{"tool":"task","call_id":"call_1"}`},
		{"/api/spawn-check?harness=opencode&session=ses_ok", `{"tool":"task","call_id":"` + strings.Repeat("c", 600) + `"}`},
	} {
		resp, err := http.Post(s.url+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"code":"invalid"`) {
			t.Errorf("POST %s %q: %d %s, want 400 invalid", c.path, c.body, resp.StatusCode, b)
		}
	}
	stdout, stderr, code := runCLI(t, append(baseEnv(t), "HEIRLOOM_URL="+s.url), "sessions")
	if code != 0 || !strings.Contains(stdout, "no sessions yet") {
		t.Errorf("sessions after junk ids: exit %d\n%s%s", code, stdout, stderr)
	}
	if got := getBody(t, s.url+"/api/runs"); got != `{"runs":[]}` {
		t.Errorf("runs after junk ids: %s, want none", got)
	}
}

// TestStrayCallsAreNoSessions (issue 16, item 7): through the built binary, hook calls that
// start no session (Stop, SessionEnd, a spawn, SubagentStart, SubagentStop) naming a session
// heirloom never saw, with no transcript behind it, are answered {} at once and store nothing:
// GET /api/sessions and GET /api/runs list nothing. A session that was running before heirloom
// started (its transcript under the roots holds turns) is recorded at its first Stop, with
// those turns.
func TestStrayCallsAreNoSessions(t *testing.T) {
	env := baseEnv(t)
	s := startServe(t, filepath.Join(t.TempDir(), "data"), env)
	const stray = "0badc0de-0000-4000-8000-000000000001"
	for _, body := range []string{
		`{"hook_event_name":"Stop","session_id":"` + stray + `","transcript_path":"/nonexistent/x.jsonl","cwd":"/tmp"}`,
		`{"hook_event_name":"SessionEnd","session_id":"` + stray + `","cwd":"/tmp"}`,
		`{"hook_event_name":"PreToolUse","session_id":"` + stray + `","tool_name":"Agent","tool_use_id":"toolu_x","tool_input":{"prompt":"p","subagent_type":"Explore"}}`,
		`{"hook_event_name":"SubagentStart","session_id":"` + stray + `","agent_id":"a0123456789abcdef","agent_type":"Explore"}`,
		`{"hook_event_name":"SubagentStop","session_id":"` + stray + `","agent_id":"a0123456789abcdef","agent_type":"Explore"}`,
	} {
		start := time.Now()
		status, reply := postHook(t, s.url, body)
		if status != http.StatusOK || strings.TrimSpace(reply) != "{}" {
			t.Errorf("hook %s: %d %s, want 200 {}", body, status, reply)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("hook %s took %s", body, d)
		}
	}
	for _, path := range []string{"/api/sessions", "/api/runs"} {
		if got := getBody(t, s.url+path); got != `{"sessions":[]}` && got != `{"runs":[]}` {
			t.Errorf("GET %s after stray calls: %s, want an empty list", path, got)
		}
	}

	const running = "0badc0de-0000-4000-8000-000000000002"
	transcript := filepath.Join(envHome(env), ".claude", "projects", "-tmp", running+".jsonl")
	if err := os.MkdirAll(filepath.Dir(transcript), 0o755); err != nil {
		t.Fatal(err)
	}
	lines := `{"type":"user","uuid":"u1","timestamp":"2026-11-01T10:00:00Z","message":{"role":"user","content":"Port the parser. EARLYMARK."}}` + "\n" +
		`{"type":"assistant","uuid":"a1","timestamp":"2026-11-01T10:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"Reading parse.c."}]}}` + "\n"
	if err := os.WriteFile(transcript, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if status, reply := postHook(t, s.url, fmt.Sprintf(`{"hook_event_name":"Stop","session_id":%q,"transcript_path":%q,"cwd":"/tmp"}`, running, transcript)); status != http.StatusOK {
		t.Fatalf("Stop of a session already running: %d %s", status, reply)
	}
	if got := getBody(t, s.url+"/api/sessions/"+running+"/transcript"); !strings.Contains(got, "EARLYMARK") || !strings.Contains(got, "Reading parse.c.") {
		t.Errorf("transcript of a session first heard of at its Stop: %s", got)
	}
	if got := getBody(t, s.url+"/api/sessions"); strings.Contains(got, stray) || !strings.Contains(got, running) {
		t.Errorf("sessions: %s, want %s alone", got, running)
	}
}

// getBody GETs url and returns the body, trimmed; a status other than 200 fails the test.
func getBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	return strings.TrimSpace(string(b))
}

// envHome is the HOME env names.
func envHome(env []string) string {
	for _, kv := range env {
		if home, ok := strings.CutPrefix(kv, "HOME="); ok {
			return home
		}
	}
	return ""
}
