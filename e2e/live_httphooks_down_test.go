package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/claude"
	"github.com/heirloom-dev/heirloom/e2e/messagesapi"
)

// installedHTTPHookTimeout is the "timeout" (seconds) `heirloom install claude-code --hooks
// http` writes on every http hook; the test reads it back from the installed settings.
const installedHTTPHookTimeout = 2 * time.Second

// shimTimeout is how long the hook binary, which install writes for SessionStart and
// SessionEnd, waits for the sidecar by default (hookshim.DefaultTimeout).
const shimTimeout = 1500 * time.Millisecond

// TestLiveHTTPHooksDown runs the real Claude Code with the hooks `heirloom install claude-code
// --hooks http` writes, while no heirloom answers them: first at a loopback port nobody
// listens on, then at a server that accepts every connection and never replies. Either way the
// run must fail open: exit 0 with the model's answer, no word of the failed hooks in anything
// that reached the model, and (with the hung server) every http hook given up within the
// timeout install wrote, so the whole run stays within what those timeouts allow.
func TestLiveHTTPHooksDown(t *testing.T) {
	claude.Bin(t)
	var closedRun time.Duration
	t.Run("Closed", func(t *testing.T) {
		closedRun = runHooksDown(t, "http://"+freeAddr(t)).Duration
	})
	t.Run("Hung", func(t *testing.T) {
		hung := startHungServer(t)
		res := runHooksDown(t, hung.URL())
		calls := hung.Calls()
		var httpCalls int
		for _, c := range calls {
			t.Logf("hung server: %s %s %q held %v", c.Method, c.Path, c.Event, c.Held.Round(time.Millisecond))
			// Claude Code gives up on an http hook within its timeout; the hook binary, which
			// install writes for SessionStart and SessionEnd, gives up within its own.
			limit, who := installedHTTPHookTimeout, "Claude Code's http hook"
			if c.Event == "SessionStart" || c.Event == "SessionEnd" {
				limit, who = shimTimeout, "the hook binary"
			} else {
				httpCalls++
			}
			if c.Held < 0 || c.Held > limit+time.Second {
				t.Errorf("%s for %s held the hung server %v: want it given up within %v", who, c.Event, c.Held, limit)
			}
		}
		if !hasEvent(calls, "UserPromptSubmit") {
			t.Fatalf("the hung server never saw UserPromptSubmit: the http hooks did not run (calls %+v)", calls)
		}
		// Every call waits at most its timeout: the http hooks 2 s each, the hook binary its own.
		// Past that, the run may take what a run with nothing listening took, and some slack for
		// a loaded machine.
		budget := closedRun + time.Duration(httpCalls)*installedHTTPHookTimeout + 2*shimTimeout + 10*time.Second
		if res.Duration > budget {
			t.Errorf("run took %v with %d http hooks hung; the hook timeouts allow %v", res.Duration.Round(time.Millisecond), httpCalls, budget)
		}
	})
}

// runHooksDown installs heirloom's http hooks for url into a private HOME with the real
// `heirloom install`, runs one `claude -p` prompt against the Messages stand-in, and checks it
// failed open.
func runHooksDown(t *testing.T, url string) claude.Result {
	t.Helper()
	home := t.TempDir()
	hookBin(t) // beside heirloom, so install writes it for SessionStart and SessionEnd
	// --mcp=false: this test is about the hooks; an MCP server registered at a dead address is
	// the MCP tests' business.
	install := exec.Command(heirloomBin(t), "install", "claude-code", "--hooks", "http", "--url", url, "--mcp=false")
	install.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkInstalledHTTPHooks(t, raw, url)

	marker := newMarker(t)
	api := startStandin(t, func(r messagesapi.Request) messagesapi.Reply {
		if r.IsSideRequest() {
			return messagesapi.Text("side")
		}
		return messagesapi.Text("DONE-" + marker)
	})
	start := time.Now()
	res := claude.Run(t, t.Context(), claude.Options{
		BaseURL: api.URL(), Home: home, Prompt: "answer with the marker " + marker,
		// Settings nil: the file install wrote stays. The hook binary finds the "sidecar" here.
		Env:     map[string]string{"HEIRLOOM_URL": url},
		Timeout: time.Minute,
	})
	t.Logf("claude -p with hooks at %s: %v (wall %v)", url, res.Duration.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if res.ExitCode != 0 || res.IsError || res.Text != "DONE-"+marker {
		t.Fatalf("exit %d, error %v, result %q; want exit 0 and %q\nstdout: %s\nstderr: %s", res.ExitCode, res.IsError, res.Text, "DONE-"+marker, res.Stdout, res.Stderr)
	}
	reqs := agentTurns(api.Requests())
	if len(reqs) == 0 {
		t.Fatal("no model request reached the stand-in")
	}
	host := strings.TrimPrefix(url, "http://")
	for _, r := range reqs {
		// What the harness added to the conversation (hook context lands in the messages, not
		// in the system prompt, which documents hooks in general).
		var msgs strings.Builder
		for _, m := range r.Messages {
			msgs.WriteString(m.Content.Text() + "\n")
		}
		text := strings.ToLower(msgs.String())
		for _, bad := range []string{strings.ToLower(host), "/hooks/claude-code", "hook error", "hook failed", "userpromptsubmit", "econnrefused", "connection refused", "timed out", "timeout"} {
			if strings.Contains(text, bad) {
				t.Errorf("request %d carries %q: a failed hook reached the model; its messages:\n%s", r.Seq, bad, msgs.String())
			}
		}
	}
	assertOffline(t, api)
	return res
}

// checkInstalledHTTPHooks fails t unless raw (the installed settings.json) posts
// UserPromptSubmit to url with the timeout the test's budget assumes, and runs the hook binary
// for SessionStart.
func checkInstalledHTTPHooks(t *testing.T, raw []byte, url string) {
	t.Helper()
	type hook struct {
		Type    string  `json:"type"`
		URL     string  `json:"url"`
		Command string  `json:"command"`
		Timeout float64 `json:"timeout"`
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []hook `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(raw, &settings); err != nil {
		t.Fatalf("installed settings: %v\n%s", err, raw)
	}
	first := func(event string) hook {
		if groups := settings.Hooks[event]; len(groups) > 0 && len(groups[0].Hooks) > 0 {
			return groups[0].Hooks[0]
		}
		return hook{}
	}
	ups := first("UserPromptSubmit")
	if ups.Type != "http" || ups.URL != url+"/hooks/claude-code" || time.Duration(ups.Timeout*float64(time.Second)) != installedHTTPHookTimeout {
		t.Fatalf("installed UserPromptSubmit hook %+v: want http to %s/hooks/claude-code with timeout %v\n%s", ups, url, installedHTTPHookTimeout, raw)
	}
	if ss := first("SessionStart"); ss.Type != "command" || !strings.Contains(ss.Command, hookBin(t)) {
		t.Fatalf("installed SessionStart hook %+v: want the hook binary\n%s", ss, raw)
	}
}

// hungServer accepts every connection, reads the request and never answers, recording how long
// each caller waited before it gave up and closed the connection.
type hungServer struct {
	ln    net.Listener
	mu    sync.Mutex
	calls []hungCall
	conns []net.Conn
	wg    sync.WaitGroup
}

// hungCall is one request the hung server held.
type hungCall struct {
	Method, Path string
	Event        string        // the hook_event_name of the JSON body, if any
	Held         time.Duration // from the request's arrival until the caller closed; -1 if it never did
}

// startHungServer starts a hungServer on a free loopback port, closed at the end of the test.
func startHungServer(t *testing.T) *hungServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hungServer{ln: ln}
	h.wg.Go(h.accept)
	t.Cleanup(h.close)
	return h
}

// URL is the server's base URL.
func (h *hungServer) URL() string { return "http://" + h.ln.Addr().String() }

func (h *hungServer) accept() {
	for {
		conn, err := h.ln.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		h.conns = append(h.conns, conn)
		h.mu.Unlock()
		h.wg.Go(func() { h.hold(conn) })
	}
}

// hold reads one request from conn, then waits for the caller to close it.
func (h *hungServer) hold(conn net.Conn) {
	r := bufio.NewReader(conn)
	req, err := http.ReadRequest(r)
	if err != nil {
		return
	}
	arrived := time.Now()
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	var payload struct {
		Event string `json:"hook_event_name"`
	}
	_ = json.Unmarshal(body, &payload)
	h.mu.Lock()
	i := len(h.calls)
	h.calls = append(h.calls, hungCall{Method: req.Method, Path: req.URL.Path, Event: payload.Event, Held: -1})
	h.mu.Unlock()
	_, _ = io.Copy(io.Discard, r) // returns when the caller closes (or the test does)
	h.mu.Lock()
	if h.calls[i].Held < 0 {
		h.calls[i].Held = time.Since(arrived)
	}
	h.mu.Unlock()
}

// Calls returns the requests held so far.
func (h *hungServer) Calls() []hungCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hungCall(nil), h.calls...)
}

func (h *hungServer) close() {
	h.ln.Close()
	h.mu.Lock()
	for _, c := range h.conns {
		c.Close()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// hasEvent reports whether one of calls carried event.
func hasEvent(calls []hungCall, event string) bool {
	for _, c := range calls {
		if c.Event == event {
			return true
		}
	}
	return false
}
