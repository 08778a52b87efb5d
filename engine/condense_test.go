package engine_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/condense"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
)

// TestCondense_Redacted: what goes to the level-2 endpoint, outside heirloom, is redacted: a key
// a sub-agent found and returned, or one its task names, never reaches it.
func TestCondense_Redacted(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	standin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"message": map[string]any{"role": "assistant", "content": `{"summary": "found a key"}`}}}})
	}))
	t.Cleanup(standin.Close)

	secret := "sk-" + "ant-api03-" + strings.Repeat("Ab1_", 12)
	taskSecret := "sk-" + "ant-api03-" + strings.Repeat("Zx9-", 12)
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, func(e *engine.Engine) {
		shortRuns(time.Hour, time.Hour, time.Hour)(e)
		e.Config.Runs.MaxResultTokens = 500
		e.Condenser = &condense.Client{URL: standin.URL, Model: "m", Timeout: 5 * time.Second}
	})
	started(t, e, tr, S)
	mustHook(t, e, cct.Spawn(tr, S, "toolu_1", "Explore", "check the key "+taskSecret+" still works", ""))
	mustHook(t, e, cct.Start(tr, S, "a1", "Explore"))
	mustHook(t, e, cct.Result(tr, S, "toolu_1", "a1", longResult+"\nAPI key found in .env: ANTHROPIC_API_KEY="+secret+"\nand bare: "+secret))
	waitRun(t, e, "toolu_1", "summarised", func(r kv.Run) bool { return r.Summary != "" })

	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("the endpoint was asked %d times, want once", len(bodies))
	}
	for _, s := range []string{secret, taskSecret, "Ab1_Ab1_", "Zx9-Zx9-"} {
		if strings.Contains(bodies[0], s) {
			t.Errorf("the endpoint got %q:\n%s", s, bodies[0])
		}
	}
	if !strings.Contains(bodies[0], "API key found in .env") || !strings.Contains(bodies[0], "FIRST-LINE") {
		t.Errorf("the endpoint did not get the rest of the result:\n%.600s", bodies[0])
	}
}
