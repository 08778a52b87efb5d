package responsesapi_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/responsesapi"
)

// TestServer: a request is decoded and logged, and the reply streams as Codex reads it:
// response.created, each output item added then done (a spawn_agent call in its namespace),
// then response.completed with the usage InputTokens gives.
func TestServer(t *testing.T) {
	s := responsesapi.New(func(r responsesapi.Request) responsesapi.Reply {
		if r.LastUserText() != "spawn please" {
			return responsesapi.Text("unexpected")
		}
		reply := responsesapi.Spawn("child task")
		reply.Text = "on it"
		return reply
	})
	s.InputTokens = func(responsesapi.Request) int { return 12345 }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := `{"model":"m","stream":true,"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"HOOK CONTEXT"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"spawn please"}]}],"tools":[{"type":"namespace","name":"multi_agent_v1","tools":[{"type":"function","name":"spawn_agent"}]}]}`
	req, _ := http.NewRequest(http.MethodPost, s.BaseURL()+"/responses", strings.NewReader(body))
	req.Header.Set("X-Codex-Turn-Metadata", `{"thread_id":"t1","thread_source":"subagent"}`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []string
	var items []map[string]any
	var usage map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("frame %q: %v", data, err)
		}
		typ, _ := ev["type"].(string)
		events = append(events, typ)
		if typ == "response.output_item.done" {
			items = append(items, ev["item"].(map[string]any))
		}
		if typ == "response.completed" {
			usage, _ = ev["response"].(map[string]any)["usage"].(map[string]any)
		}
	}
	if got := strings.Join(events, ","); !strings.HasPrefix(got, "response.created,response.output_item.added,response.output_text.delta") || !strings.HasSuffix(got, "response.output_item.done,response.completed") {
		t.Errorf("events %s", got)
	}
	if len(items) != 2 || items[0]["type"] != "message" || items[1]["name"] != "spawn_agent" || items[1]["namespace"] != "multi_agent_v1" || !strings.Contains(items[1]["arguments"].(string), "child task") {
		t.Errorf("items %v: want the text, then spawn_agent in multi_agent_v1", items)
	}
	if usage["input_tokens"] != float64(12345) {
		t.Errorf("usage %v, want input_tokens 12345", usage)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].DeveloperText() != "HOOK CONTEXT" || !reqs[0].HasTool("spawn_agent") {
		t.Fatalf("logged %d requests; developer text %q", len(reqs), reqs[0].DeveloperText())
	}
	if th := reqs[0].TurnMetadata()["thread_id"]; th != "t1" {
		t.Errorf("turn metadata thread %v", th)
	}
}
