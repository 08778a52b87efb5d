package standin_test

import (
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/internal/standin"
	"github.com/heirloom-dev/heirloom/e2e/internal/standin/standintest"
)

// request and reply make a small API for the tests: {"prompt", "stream"}
// answered with {"text"} or a stream of "delta" events and [DONE].
type request struct {
	Prompt string `json:"prompt"`
	Stream bool   `json:"stream"`
	standin.Received
}

type reply struct {
	Text string
	Err  *standin.Error
	Bad  bool // cannot be encoded
}

type format struct{}

func (format) Failure(r reply) *standin.Error { return r.Err }

func (format) Write(w http.ResponseWriter, r *http.Request, req request, p reply) error {
	if p.Bad {
		return errors.New("cannot encode")
	}
	if !req.Stream {
		standin.WriteJSON(w, http.StatusOK, map[string]string{"text": p.Text})
		return nil
	}
	st := standin.NewStream(r.Context(), w)
	for _, c := range standin.Chunks(p.Text) {
		if !st.Send("delta", map[string]string{"text": c}) {
			return nil
		}
	}
	st.Send("", []byte("[DONE]"))
	return nil
}

func (format) ErrorBody(e standin.Error) any {
	return map[string]string{"type": cmp.Or(e.Type, "server_error"), "message": e.Message}
}

// newServer returns an unstarted test API server answering script.
func newServer(script func(request) reply) *standin.Server[request, reply] {
	routes := map[string]standin.Route{"GET /v1/other": func(w http.ResponseWriter, body []byte) {
		standin.WriteJSON(w, http.StatusOK, map[string]int{"bytes": len(body)})
	}}
	return standin.New("/v1/model", routes, format{}, script)
}

func echo(r request) reply { return reply{Text: "echo " + r.Prompt} }

func TestServer_Requests(t *testing.T) {
	s := standintest.Start(t, newServer(echo))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, b := standintest.Do(t, http.MethodPost, s.URL()+"/v1/model", `{"prompt":"hi"}`, map[string]string{"X-Test": "1"})
			if resp.StatusCode != http.StatusOK || !strings.Contains(b, `"echo hi"`) {
				t.Errorf("got %d %s", resp.StatusCode, b)
			}
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, r := range s.Requests() {
		seen[r.Seq] = true
		if r.Prompt != "hi" || r.Header.Get("X-Test") != "1" || string(r.Raw) != `{"prompt":"hi"}` {
			t.Errorf("logged request %+v", r)
		}
	}
	if len(seen) != 8 || !seen[1] || !seen[8] {
		t.Errorf("sequence numbers %v, want 1..8", seen)
	}
}

func TestServer_Calls(t *testing.T) {
	s := standintest.Start(t, newServer(echo))
	if resp, b := standintest.Do(t, http.MethodGet, s.URL()+"/v1/other", "abc", nil); resp.StatusCode != 200 || !strings.Contains(b, `"bytes":3`) {
		t.Errorf("route: got %d %s", resp.StatusCode, b)
	}
	resp, b := standintest.Do(t, http.MethodGet, s.URL()+"/elsewhere?x=1", "", nil)
	if resp.StatusCode != 404 || !strings.Contains(b, `"type":"not_found_error"`) {
		t.Errorf("unknown path: got %d %s", resp.StatusCode, b)
	}
	resp, b = standintest.Post(t, s.URL()+"/v1/model", "{not json")
	if resp.StatusCode != 400 || !strings.Contains(b, `"type":"invalid_request_error"`) {
		t.Errorf("bad body: got %d %s", resp.StatusCode, b)
	}
	calls := s.Calls()
	if len(calls) != 3 || calls[0].Path != "/v1/other" || calls[0].Status != 200 || string(calls[0].Body) != "abc" ||
		calls[1].Path != "/elsewhere" || calls[1].RawQuery != "x=1" || calls[1].Status != 404 || calls[2].Status != 400 {
		t.Errorf("calls %+v", calls)
	}
	if len(s.Requests()) != 0 {
		t.Errorf("requests %+v, want none", s.Requests())
	}
}

func TestServer_Errors(t *testing.T) {
	s := standintest.Start(t, newServer(func(r request) reply {
		if r.Prompt == "fail" {
			return reply{Err: &standin.Error{Status: 400, Type: "invalid_request_error", Message: "no"}}
		}
		return reply{Bad: true}
	}))
	resp, b := standintest.Post(t, s.URL()+"/v1/model", `{"prompt":"fail"}`)
	if resp.StatusCode != 400 || b != `{"message":"no","type":"invalid_request_error"}`+"\n" {
		t.Errorf("script's error: got %d %s", resp.StatusCode, b)
	}
	resp, b = standintest.Post(t, s.URL()+"/v1/model", `{"prompt":"x"}`)
	if resp.StatusCode != 500 || !strings.Contains(b, `"type":"server_error"`) || !strings.Contains(b, "cannot encode") {
		t.Errorf("write error: got %d %s", resp.StatusCode, b)
	}
}

func TestServer_Stream(t *testing.T) {
	text := strings.Repeat("héllo wörld ", 3)
	s := standintest.Start(t, newServer(func(request) reply { return reply{Text: text} }))
	resp, b := standintest.Post(t, s.URL()+"/v1/model", `{"stream":true}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q", ct)
	}
	events := standintest.Events(t, b)
	var got strings.Builder
	for _, e := range events[:len(events)-1] {
		var d struct{ Text string }
		if e.Name != "delta" || json.Unmarshal([]byte(e.Data), &d) != nil {
			t.Fatalf("event %+v", e)
		}
		got.WriteString(d.Text)
	}
	if got.String() != text || len(events) < 3 {
		t.Errorf("streamed %q in %d events, want %q in several", got.String(), len(events)-1, text)
	}
	if last := events[len(events)-1]; last != (standintest.Event{Data: "[DONE]"}) {
		t.Errorf("last event %+v, want data: [DONE]", last)
	}
}

func TestServer_Lifecycle(t *testing.T) {
	t.Run("CloseWithoutStart", func(t *testing.T) {
		s := newServer(echo)
		s.Close()
		s.Close()
		if err := s.Start(); err == nil {
			t.Error("Start after Close succeeded")
		}
	})
	t.Run("StartTwice", func(t *testing.T) {
		s := standintest.Start(t, newServer(echo))
		if err := s.Start(); err == nil {
			t.Error("second Start succeeded")
		}
		s.Close()
		s.Close()
		if s.URL() == "" {
			t.Error("URL cleared by Close")
		}
		if _, err := http.Post(s.URL()+"/v1/model", "application/json", strings.NewReader("{}")); err == nil {
			t.Error("request after Close succeeded")
		}
	})
	t.Run("CloseWithRequestInFlight", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		s := standintest.Start(t, newServer(func(request) reply { <-release; return reply{Text: "late"} }))
		done := make(chan error, 1)
		go func() {
			resp, err := http.Post(s.URL()+"/v1/model", "application/json", strings.NewReader(`{"stream":true}`))
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			done <- err
		}()
		for len(s.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		closed := make(chan struct{})
		go func() { s.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("Close waited for a script still running")
		}
		if err := <-done; err == nil {
			t.Error("client got a whole reply, want the connection closed")
		}
	})
}
