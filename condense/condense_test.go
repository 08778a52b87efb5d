package condense_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/condense"
)

// standin is a loopback stand-in for a chat-completions endpoint: it records what it was asked
// and answers with answer's content (or status, or after delay).
type standin struct {
	*httptest.Server
	mu       sync.Mutex
	requests []chatRequest
	auth     []string
	paths    []string

	content string        // the assistant message's content
	status  int           // 0: 200
	delay   time.Duration // wait this long before answering (or until the client gives up)
	raw     string        // when set, the whole reply body instead of a chat completion
}

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	ResponseFormat struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

func newStandin(t *testing.T, content string) *standin {
	t.Helper()
	s := &standin{content: content}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req chatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.paths = append(s.paths, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		if s.delay > 0 {
			select {
			case <-time.After(s.delay):
			case <-r.Context().Done():
				return
			}
		}
		if s.status != 0 {
			http.Error(w, "overloaded", s.status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if s.raw != "" {
			w.Write([]byte(s.raw))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": req.Model,
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": s.content}}},
		})
	}))
	t.Cleanup(s.Close)
	return s
}

const answer = `{"summary": "The off-by-one cent comes from rounding twice.", "conclusions": ["Round once, at the end."], "file_paths": ["cart/total.go", "pricing/round.go"], "action_items": ["Add a test for 101 items."], "errors": [], "key_data": ["3 call sites", "commit 4e1f"]}`

const rendered = `Summary: The off-by-one cent comes from rounding twice.
Conclusions:
- Round once, at the end.
File paths:
- cart/total.go
- pricing/round.go
Action items:
- Add a test for 101 items.
Key data:
- 3 call sites
- commit 4e1f`

func TestCondense(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		s := newStandin(t, answer)
		c := &condense.Client{URL: s.URL + "/v1", Model: "small", Token: "sk-test"}
		got, err := c.Condense(t.Context(), "Find why totals are off.", "a long result")
		if err != nil {
			t.Fatal(err)
		}
		if got != rendered {
			t.Errorf("got\n%s\nwant\n%s", got, rendered)
		}
		if len(s.requests) != 1 {
			t.Fatalf("%d requests, want 1", len(s.requests))
		}
		req := s.requests[0]
		if s.paths[0] != "POST /v1/chat/completions" || s.auth[0] != "Bearer sk-test" || req.Model != "small" || req.ResponseFormat.Type != "json_object" {
			t.Errorf("request: %s, auth %q, model %q, response_format %q", s.paths[0], s.auth[0], req.Model, req.ResponseFormat.Type)
		}
		if len(req.Messages) != 2 || req.Messages[0].Role != "system" || !strings.Contains(req.Messages[1].Content, "Find why totals are off.") || !strings.Contains(req.Messages[1].Content, "a long result") {
			t.Errorf("messages: %+v", req.Messages)
		}
	})
	t.Run("FencedAnswer", func(t *testing.T) {
		s := newStandin(t, "Here it is:\n```json\n"+answer+"\n```")
		c := &condense.Client{URL: s.URL + "/v1/chat/completions", Model: "m"}
		got, err := c.Condense(t.Context(), "t", "r")
		if err != nil || got != rendered {
			t.Fatalf("got %q, %v", got, err)
		}
		if s.paths[0] != "POST /v1/chat/completions" || s.auth[0] != "" {
			t.Errorf("request %s with auth %q: want the URL as given and no token", s.paths[0], s.auth[0])
		}
	})
	t.Run("LongInputClipped", func(t *testing.T) {
		s := newStandin(t, answer)
		c := &condense.Client{URL: s.URL, Model: "m"}
		long := "START " + strings.Repeat("x", 1<<20) + " END"
		if _, err := c.Condense(t.Context(), "t", long); err != nil {
			t.Fatal(err)
		}
		sent := s.requests[0].Messages[1].Content
		if len(sent) > condense.MaxInputBytes+1024 || !strings.Contains(sent, "START") || !strings.Contains(sent, "END") || !strings.Contains(sent, "bytes left out") {
			t.Errorf("sent %d bytes; want at most about %d, with both ends and the omission line", len(sent), condense.MaxInputBytes)
		}
	})
}

// TestCondense_Failures checks that every way the endpoint can fail is an error, returned
// within the timeout: the caller then falls back to level 3.
func TestCondense_Failures(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*standin)
	}{
		{"Timeout", func(s *standin) { s.delay = 5 * time.Second }},
		{"Status", func(s *standin) { s.status = http.StatusServiceUnavailable }},
		{"NotACompletion", func(s *standin) { s.raw = "<html>gateway</html>" }},
		{"NoChoices", func(s *standin) { s.raw = `{"choices": []}` }},
		{"NotJSON", func(s *standin) { s.content = "The result says the totals are fine." }},
		{"EmptySummary", func(s *standin) { s.content = `{"summary": " ", "conclusions": ["x"]}` }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStandin(t, answer)
			tc.set(s)
			c := &condense.Client{URL: s.URL, Model: "m", Timeout: 200 * time.Millisecond}
			start := time.Now()
			got, err := c.Condense(t.Context(), "t", "r")
			if err == nil {
				t.Fatalf("got %q and no error", got)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("the failure took %s; the timeout is 200ms", d)
			}
			t.Logf("error: %v", err)
		})
	}
	t.Run("Unreachable", func(t *testing.T) {
		s := newStandin(t, answer)
		url := s.URL
		s.Close()
		if _, err := (&condense.Client{URL: url, Model: "m", Timeout: time.Second}).Condense(t.Context(), "t", "r"); err == nil {
			t.Fatal("no error from a closed port")
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		s := newStandin(t, answer)
		s.delay = 5 * time.Second
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(50*time.Millisecond, cancel)
		if _, err := (&condense.Client{URL: s.URL, Model: "m"}).Condense(ctx, "t", "r"); err == nil {
			t.Fatal("no error when the caller gave up")
		}
	})
	if _, err := (&condense.Client{}).Condense(t.Context(), "t", "r"); err == nil {
		t.Error("no error without url and model")
	}
}

// TestCondense_NoRedirect: a redirect from the endpoint is an error, never followed: a 307
// would send the result, body and all, to another address.
func TestCondense_NoRedirect(t *testing.T) {
	elsewhere := newStandin(t, answer)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	if got, err := (&condense.Client{URL: redirector.URL, Model: "m", Timeout: time.Second}).Condense(t.Context(), "t", "the result"); err == nil {
		t.Errorf("got %q and no error from a 307", got)
	}
	elsewhere.mu.Lock()
	defer elsewhere.mu.Unlock()
	if len(elsewhere.requests) != 0 {
		t.Errorf("the redirect was followed: the other address got %d requests", len(elsewhere.requests))
	}
}

func TestSummaryText(t *testing.T) {
	s := condense.Summary{Summary: "  two\nlines  ", Errors: []string{"", "e1"}, KeyData: make([]string, 20)}
	for i := range s.KeyData {
		s.KeyData[i] = strings.Repeat("k", 700)
	}
	got := s.Text()
	if !strings.HasPrefix(got, "Summary: two lines\nErrors:\n- e1\nKey data:\n") {
		t.Errorf("got:\n%s", got)
	}
	if n := strings.Count(got, "\n- k"); n != 12 {
		t.Errorf("%d key data items, want 12", n)
	}
	if strings.Contains(got, strings.Repeat("k", 601)) {
		t.Errorf("an item is longer than 600 bytes")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(answer)
	f.Add("```json\n{\"summary\": \"x\"}\n```")
	f.Add("{")
	f.Add(`{"summary": "\xff", "errors": [1]}`)
	f.Fuzz(func(t *testing.T, content string) {
		raw, _ := json.Marshal(map[string]any{"choices": []map[string]any{{"message": map[string]any{"content": content}}}})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(raw) }))
		defer srv.Close()
		got, err := (&condense.Client{URL: srv.URL, Model: "m", Timeout: time.Second}).Condense(context.Background(), "t", "r")
		if err == nil && !strings.HasPrefix(got, "Summary: ") {
			t.Fatalf("no error and %q", got)
		}
	})
}
