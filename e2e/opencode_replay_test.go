package e2e

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/opencode"
	"github.com/heirloom-dev/heirloom/kv"
)

// The recorded OpenCode 1.18.33 stream: a parent whose prompt made the model call task, the
// child session, then a compaction of the parent.
const (
	ocParent = "ses_dfee8c2b7ffeDIVbTSn7Vxnglr"
	ocChild  = "ses_dfee8c20bffe2ObghB2h3tjcX3"
)

// sseReplayServer serves a recorded /event stream once per connection, then holds the
// connection open with heartbeats; /session answers an empty list (the stream is the truth).
func sseReplayServer(tb testing.TB, frames [][]byte) (*httptest.Server, *atomic.Int32) {
	var connects atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/event":
			connects.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			for _, f := range frames {
				w.Write([]byte("data: "))
				w.Write(f)
				w.Write([]byte("\n\n"))
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case "/session":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("[]"))
		default:
			http.NotFound(w, r)
		}
	}))
	tb.Cleanup(srv.Close)
	return srv, &connects
}

// sseFrames splits a recorded SSE stream into the payloads of its data lines.
func sseFrames(tb testing.TB, path string) [][]byte {
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var frames [][]byte
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if p, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			frames = append(frames, p)
		}
	}
	return frames
}

// TestOpenCodeReplay replays the recorded stream through the real OpenCode client into the real
// engine and store, and checks sessions, lineage, turns, the run and the compaction epoch; then
// that a plugin asking /api/inject for the child gets the parent's context.
func TestOpenCodeReplay(t *testing.T) {
	frames := sseFrames(t, "../adapters/opencode/testdata/parent-child-compact.sse")
	upstream, connects := sseReplayServer(t, frames)
	s := mustOpenServer(t, nil)
	client := opencode.NewClient(upstream.URL, s.Engine)
	if err := client.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })

	ctx := t.Context()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p, err := s.Engine.Store.GetSession(ctx, "default", ocParent)
		if err == nil && p.Compactions > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the compaction never arrived (connects %d, stats %+v)", connects.Load(), client.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	st := client.Stats()
	if st.Malformed != 0 || st.SinkErrors != 0 {
		t.Fatalf("client stats: %+v", st)
	}
	parent, _ := s.Engine.Store.GetSession(ctx, "default", ocParent)
	child, err := s.Engine.Store.GetSession(ctx, "default", ocChild)
	if err != nil {
		t.Fatal(err)
	}
	if parent.Harness != "opencode" || parent.ParentID != "" || parent.Compactions != 1 || parent.Title == "" || parent.Objective == "" {
		t.Errorf("parent: %+v", parent)
	}
	if child.ParentID != ocParent || child.Depth != 1 || child.Compactions != 0 || child.Objective == "" {
		t.Errorf("child: %+v", child)
	}
	runs, _ := s.Engine.Store.ListRuns(ctx, "default", kv.RunFilter{})
	if len(runs) != 1 || runs[0].ChildID != ocChild || runs[0].ParentID != ocParent || runs[0].Status != kv.RunCompleted || !strings.Contains(runs[0].Result, "42") {
		t.Errorf("runs: %+v", runs)
	}
	if runs[0].Prompt != child.Objective {
		t.Errorf("child objective %q, want the task prompt %q", child.Objective, runs[0].Prompt)
	}
	turns, _ := s.Engine.Store.Turns(ctx, "default", ocParent, 0, 0)
	var roles []string
	seen := map[string]bool{}
	for _, tt := range turns {
		roles = append(roles, tt.Role)
		if seen[tt.SourceID] {
			t.Errorf("turn %s stored twice", tt.SourceID)
		}
		seen[tt.SourceID] = true
	}
	if len(turns) < 3 || turns[0].Role != "user" || !strings.Contains(strings.Join(roles, ","), "assistant") || !strings.Contains(strings.Join(roles, ","), "tool") {
		t.Errorf("parent turns by role: %v", roles)
	}

	// A plugin asking for the child's system context gets the parent's.
	resp, err := http.Post(s.URL()+"/api/inject", "application/json", strings.NewReader(`{"harness":"opencode","session":"`+ocChild+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(body.String(), "Inherited from Parent Session") || !strings.Contains(body.String(), parent.Objective[:min(20, len(parent.Objective))]) {
		t.Errorf("inject for the child: %d %s", resp.StatusCode, body.String())
	}
}
