package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
	"github.com/heirloom-dev/heirloom/e2e/opencode"
	"github.com/heirloom-dev/heirloom/proxy"
)

// ocSearchTool is session_search as OpenCode names the tool of the MCP server "heirloom".
const ocSearchTool = "heirloom_session_search"

// TestLiveMCPOpenCode runs the real OpenCode with heirloom's plugin and MCP server registered by
// the real `heirloom install opencode` (the user's global config), and a real heirloom following
// OpenCode's event stream. Session A states a fact and stays open (OpenCode sessions do not
// end); session B's model calls session_search for it through OpenCode's MCP client, and the
// hit, A's prompt with the fact marked, must reach B's next model request.
func TestLiveMCPOpenCode(t *testing.T) {
	opencode.Bin(t)
	bin := heirloomBin(t)
	fact := newMarker(t)
	api := chatapi.New(func(r chatapi.Request) chatapi.Reply {
		first := r.FirstUserText()
		switch {
		case r.IsSideRequest():
			return chatapi.Text("side")
		case strings.Contains(first, "SESSION-B") && len(r.ToolResults()) == 0:
			return chatapi.CallTool(ocSearchTool, map[string]any{"query": fact})
		case strings.Contains(first, "SESSION-B"):
			return chatapi.Text("B-DONE")
		}
		return chatapi.Text("noted")
	})
	if err := api.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)

	// heirloom first, following the port OpenCode will listen on, so that OpenCode's MCP client
	// finds /mcp when it starts.
	ocHome, hHome := t.TempDir(), t.TempDir()
	ocPort := freePort(t)
	h := startServe(t, serveOptions{Home: hHome, Env: []string{fmt.Sprintf("HEIRLOOM_ADAPTERS__OPENCODE__SERVERS=http://127.0.0.1:%d", ocPort)}})
	install := exec.Command(bin, "install", "opencode")
	install.Env = []string{"HOME=" + ocHome, "PATH=" + os.Getenv("PATH"), "HEIRLOOM_URL=" + h.URL}
	if out, err := install.CombinedOutput(); err != nil || !strings.Contains(string(out), "registered heirloom's MCP server") {
		t.Fatalf("heirloom install opencode: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(ocHome, ".config", "opencode", "opencode.json")); err != nil || !strings.Contains(string(b), h.URL+"/mcp") {
		t.Fatalf("global opencode.json: %v\n%s", err, b)
	}
	oc := opencode.Serve(t, t.Context(), opencode.Options{
		ProviderURL: api.BaseURL(), Home: ocHome, Port: ocPort,
		Env: map[string]string{"HEIRLOOM_URL": h.URL},
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("heirloom serve output:\n%s", h.Logs())
			t.Logf("model requests:%s", ocRequestSummary(api.Requests()))
		}
	})

	a := oc.CreateSession(t, t.Context(), "session A")
	oc.Prompt(t, t.Context(), a.ID, "SESSION-A: the rollout codename is "+fact+".")
	// heirloom learns A's turns from OpenCode's stream: wait until its index holds the fact.
	client := &proxy.Client{URL: h.URL}
	body, _ := json.Marshal(proxy.SearchRequest{Query: fact})
	deadline := time.Now().Add(ocWaitTimeout)
	for {
		var reply proxy.SearchReply
		_, err := client.Post(t.Context(), "/api/sessions/search", nil, body, &reply)
		if err == nil && len(reply.Hits) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("heirloom never indexed session A's prompt (last error %v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	b := oc.CreateSession(t, t.Context(), "session B")
	oc.Prompt(t, t.Context(), b.ID, "SESSION-B: what is the rollout codename the other session uses?")

	var offered, answered *chatapi.Request
	reqs := api.Requests()
	for i, r := range reqs {
		if r.IsSideRequest() || !strings.Contains(r.FirstUserText(), "SESSION-B") {
			continue
		}
		if len(r.ToolResults()) == 0 && offered == nil {
			offered = &reqs[i]
		} else if len(r.ToolResults()) > 0 {
			answered = &reqs[i]
		}
	}
	if offered == nil || !offered.HasTool(ocSearchTool) {
		var names []string
		if offered != nil {
			for _, tool := range offered.Tools {
				names = append(names, tool.Function.Name)
			}
		}
		t.Fatalf("session B's first request does not offer %s (tools: %v): OpenCode did not load heirloom's MCP server", ocSearchTool, names)
	}
	if answered == nil {
		t.Fatal("no request of session B carries the search's tool result")
	}
	text := answered.ToolResults()[0].Content.Text()
	t.Logf("what reached session B's model from session_search:\n%s", text)
	if !strings.Contains(text, "**"+fact+"**") || !strings.Contains(text, "the rollout codename is") || !strings.Contains(text, "session "+a.ID) {
		t.Errorf("the search result that reached the model lacks session A (%s) and its fact %s marked:\n%s", a.ID, fact, text)
	}
}

// freePort returns a loopback port nobody listens on right now.
func freePort(tb testing.TB) int {
	tb.Helper()
	addr := freeAddr(tb)
	var port int
	if _, err := fmt.Sscanf(addr[strings.LastIndex(addr, ":")+1:], "%d", &port); err != nil {
		tb.Fatalf("port of %s: %v", addr, err)
	}
	return port
}
