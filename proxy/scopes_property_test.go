package proxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/proxy"
)

// TestScopesNeverLeak (issue 16, item 6): random operations in two memory scopes, alpha and
// beta (sessions with turns, sub-agents with their runs, checkpoints, deliveries), each scope's
// words and ids its own; then every reader, asked in one scope, never returns the other's data:
// the session list, a session of the other scope by its key, its lineage, transcript and blocks,
// the runs, search (the API's and the MCP tool's), a sub-agent's inherited block (the plugins'
// inject), a new session's recovered checkpoint, and the viewer's status. Several seeds.
func TestScopesNeverLeak(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { scopesNeverLeak(t, seed) })
	}
}

func scopesNeverLeak(t *testing.T, seed uint64) {
	s := MustOpenServer(t, nil)
	e := s.Engine
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(seed, 7))
	scopes := []string{"alpha", "beta"}
	// word is a token of scope sc only: its turns say it, no other scope's ever does.
	word := func(sc string, i int) string { return fmt.Sprintf("%sword%d", sc[:2], i) }
	keys := map[string][]string{}     // scope → its sessions
	children := map[string][]string{} // scope → its sub-agents
	consume := func(ev adapters.Event) {
		t.Helper()
		if err := e.Consume(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	for op := range 60 {
		sc := scopes[rng.IntN(2)]
		project := "/srv/shared" // one project for both: recovery must still keep to its scope
		switch k := rng.IntN(4); {
		case k == 0 || len(keys[sc]) == 0: // a session with turns
			key := fmt.Sprintf("%s-s%d", sc, op)
			ev := adapters.Event{Harness: "opencode", Scope: sc, Kind: adapters.KindSessionStart, SessionID: key, Cwd: project}
			consume(ev)
			ev.Kind = adapters.KindTurns
			ev.Turns = []adapters.Turn{
				{ID: key + "-u", Role: "user", Text: "Work on " + word(sc, op) + " and keep " + word(sc, op+1000) + " stable."},
				{ID: key + "-a", Role: "assistant", Text: "Found " + word(sc, op) + " in the ledger code."},
			}
			consume(ev)
			keys[sc] = append(keys[sc], key)
		case k == 1: // a sub-agent of one of its sessions, with its run
			parent := keys[sc][rng.IntN(len(keys[sc]))]
			child := fmt.Sprintf("%s-c%d", sc, op)
			spawn := adapters.Event{Harness: "opencode", Scope: sc, Kind: adapters.KindSpawn, SessionID: parent,
				Spawn: &adapters.Spawn{ToolUseID: sc + fmt.Sprint("-call", op), ChildSessionID: child, Prompt: "Check " + word(sc, op)}}
			consume(spawn)
			consume(adapters.Event{Harness: "opencode", Scope: sc, Kind: adapters.KindSessionStart, SessionID: child, ParentSessionID: parent, Cwd: project})
			children[sc] = append(children[sc], child)
		case k == 2: // a checkpoint
			key := keys[sc][rng.IntN(len(keys[sc]))]
			post(t, s, "/api/sessions/"+url.PathEscape(key)+"/checkpoints?scope="+sc, "")
		default: // a delivery to a sub-agent (the plugin's inject)
			if len(children[sc]) > 0 {
				child := children[sc][rng.IntN(len(children[sc]))]
				post(t, s, "/api/inject", fmt.Sprintf(`{"harness":"opencode","session":%q,"scope":%q}`, child, sc))
			}
		}
	}

	// Each scope has a checkpoint in the shared project, so the recovery below has one to find.
	for _, sc := range scopes {
		post(t, s, "/api/sessions/"+url.PathEscape(keys[sc][0])+"/checkpoints?scope="+sc, "")
	}
	for i, sc := range scopes {
		other := scopes[1-i]
		own := func(what, text string) {
			t.Helper()
			if !strings.Contains(text, sc[:2]+"word") {
				t.Errorf("scope %s: %s shows none of its own words (the check would be empty):\n%.400s", sc, what, text)
			}
		}
		leaks := func(what, text string) {
			t.Helper()
			for _, id := range append(append([]string(nil), keys[other]...), children[other]...) {
				if strings.Contains(text, id) {
					t.Errorf("scope %s: %s shows %s's session %s", sc, what, other, id)
				}
			}
			if strings.Contains(text, other[:2]+"word") {
				t.Errorf("scope %s: %s shows %s's words:\n%.600s", sc, what, other, text)
			}
		}
		q := "?scope=" + sc
		list := getText(t, s, "/api/sessions"+q+"&limit=1000")
		leaks("the session list", list)
		if !strings.Contains(list, keys[sc][0]) {
			t.Errorf("scope %s: its own session list lacks %s", sc, keys[sc][0])
		}
		leaks("the runs", getText(t, s, "/api/runs"+q+"&limit=1000"))
		for _, key := range keys[sc] {
			for _, p := range []string{"", "/lineage", "/transcript", "/blocks"} {
				leaks("GET "+key+p, getText(t, s, "/api/sessions/"+url.PathEscape(key)+p+q))
			}
		}
		for _, key := range append(keys[other], children[other]...) {
			if status := getStatus(t, s, "/api/sessions/"+url.PathEscape(key)+q); status != http.StatusNotFound {
				t.Errorf("scope %s: %s's session %s answers %d", sc, other, key, status)
			}
		}
		for n := range 60 {
			w := word(other, n)
			// The other scope's words are in its turns only: any hit here is a leak.
			var r struct{ Hits []json.RawMessage }
			if err := json.Unmarshal([]byte(post(t, s, "/api/sessions/search", fmt.Sprintf(`{"query":%q,"scope":%q}`, w, sc))), &r); err != nil || len(r.Hits) > 0 {
				t.Errorf("scope %s: a search for %s's word %s: %d hits (%v)", sc, other, w, len(r.Hits), err)
			}
			if n%10 == 0 {
				if got := mcpCall(t, s, "session_search", map[string]any{"query": w, "scope": sc}); !strings.Contains(got, "No turns match") {
					t.Errorf("scope %s: the MCP search for %s's word %s:\n%.600s", sc, other, w, got)
				}
			}
		}
		for _, child := range children[sc] {
			block := post(t, s, "/api/inject", fmt.Sprintf(`{"harness":"opencode","session":%q,"scope":%q}`, child, sc))
			leaks("the inherited block of "+child, block)
			own("the inherited block of "+child, block)
		}
		// A new session of this scope in the shared project recovers a checkpoint of its own
		// scope only.
		fresh := fmt.Sprintf("%s-fresh", sc)
		consume(adapters.Event{Harness: "opencode", Scope: sc, Kind: adapters.KindSessionStart, SessionID: fresh, Cwd: "/srv/shared"})
		recovered := post(t, s, "/api/inject", fmt.Sprintf(`{"harness":"opencode","session":%q,"scope":%q,"directory":"/srv/shared"}`, fresh, sc))
		leaks("the recovered block of a new session", recovered)
		own("the recovered block of a new session", recovered)
	}
}

// post posts body (JSON; "" for none) to path on s and returns the reply, failing t on a status
// other than 200.
func post(t *testing.T, s *proxy.Server, path, body string) string {
	t.Helper()
	resp, err := http.Post(s.URL()+path, "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	return string(raw)
}

// getText is GET path's reply, failing t on a status other than 200.
func getText(t *testing.T, s *proxy.Server, path string) string {
	t.Helper()
	resp, err := http.Get(s.URL() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, raw)
	}
	return string(raw)
}

// getStatus is GET path's status.
func getStatus(t *testing.T, s *proxy.Server, path string) int {
	t.Helper()
	resp, err := http.Get(s.URL() + path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// mcpCall calls MCP tool name with args on s's /mcp and returns the reply.
func mcpCall(t *testing.T, s *proxy.Server, name string, args map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("MCP %s: %d %s", name, resp.StatusCode, raw)
	}
	return string(raw)
}
