package proxy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

// epoch is when the seeded store's clock starts.
var epoch = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// mustOpenSeeded opens a server whose store clock steps one second per write, and seeds it:
//
//	r (claude-code, /src/app → /real/app, 5 turns)
//	├─ r:a  Explore, spawned by run toolu_a (completed)
//	│  └─ r:a:b  general-purpose, spawned by run toolu_b (running)
//	└─ (run toolu_c, pending)
//	o (opencode, ended, /src/other)
//
// plus a session in scope "other". Newest first: o, r:a:b, r:a, r (r's turns were appended
// before the sub-agents were seen).
func mustOpenSeeded(t testing.TB, configure func(*proxy.Server)) *proxy.Server {
	t.Helper()
	s := MustOpenServer(t, func(s *proxy.Server) {
		var n atomic.Int64
		s.Engine.Store.Now = func() time.Time { return epoch.Add(time.Duration(n.Add(1)) * time.Second) }
		if configure != nil {
			configure(s)
		}
	})
	ctx := t.Context()
	put := func(sess kv.Session) {
		t.Helper()
		if sess.Harness == "" {
			sess.Harness = "claude-code"
		}
		if sess.Status == "" {
			sess.Status = kv.StatusActive
		}
		if err := s.Engine.Store.PutSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	run := func(r kv.Run) {
		t.Helper()
		r.Scope, r.Harness, r.RootID = "default", "claude-code", "r"
		if _, err := s.Engine.Store.UpdateRun(ctx, "default", r.ID, func(stored *kv.Run, _ bool) error { *stored = r; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	put(kv.Session{Scope: "default", ID: "r", NativeID: "r", Project: "/src/app", ProjectNorm: "/real/app", Objective: "build the thing"})
	var turns []kv.Turn
	for i := range 5 {
		turns = append(turns, kv.Turn{SourceID: fmt.Sprint("u", i), Role: "user", Text: fmt.Sprint("turn ", i), Files: []string{"main.go"}})
	}
	if _, err := s.Engine.Store.AppendTurns(ctx, "default", "r", turns, kv.TranscriptPos{Path: "/t/r.jsonl", Offset: 500}); err != nil {
		t.Fatal(err)
	}
	put(kv.Session{Scope: "default", ID: "r:a", NativeID: "a", ParentID: "r", Depth: 1, Project: "/src/app", ProjectNorm: "/real/app", Title: "look around", AgentType: "Explore", Status: kv.StatusEnded})
	put(kv.Session{Scope: "default", ID: "r:a:b", NativeID: "b", ParentID: "r:a", Depth: 2, Project: "/src/app", AgentType: "general-purpose"})
	put(kv.Session{Scope: "default", ID: "o", Harness: "opencode", Project: "/src/other", ProjectNorm: "/src/other", Status: kv.StatusEnded})
	put(kv.Session{Scope: "other", ID: "x"})
	run(kv.Run{ID: "toolu_a", ParentID: "r", ChildID: "r:a", Type: "Explore", Status: kv.RunCompleted, Result: "found it", StartedAt: epoch, EndedAt: epoch.Add(time.Minute),
		Depth: 1, EndReason: kv.EndCompleted, Turns: 4})
	run(kv.Run{ID: "toolu_b", ParentID: "r:a", ChildID: "r:a:b", Type: "general-purpose", Status: kv.RunRunning, StartedAt: epoch})
	run(kv.Run{ID: "toolu_c", ParentID: "r", Description: "write tests", Status: kv.RunPending})
	return s
}

// get sends GET path and decodes a 200 reply into v; it returns the status and, for an error
// reply, its code.
func get(t *testing.T, s *proxy.Server, path string, header map[string]string, v any) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, val := range header {
		req.Header.Set(k, val)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("GET %s: Content-Type %q, want application/json", path, ct)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error, Code string }
		if err := json.Unmarshal(raw, &e); err != nil || e.Code == "" || e.Error == "" {
			t.Fatalf("GET %s: error reply %q is not {error, code}", path, raw)
		}
		return resp.StatusCode, e.Code + ": " + e.Error
	}
	if v != nil {
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("GET %s: decode %q: %v", path, raw, err)
		}
	}
	return resp.StatusCode, ""
}

func sessionIDs(list []proxy.APISession) []string {
	ids := []string{}
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

func runIDs(list []proxy.APIRun) []string {
	ids := []string{}
	for _, r := range list {
		ids = append(ids, r.ID)
	}
	return ids
}

func TestAPI_ListSessions(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	tests := []struct {
		query string
		want  []string // nil: an error reply
		code  string   // the error's code and a word of its message
	}{
		{"", []string{"o", "r:a:b", "r:a", "r"}, ""},
		{"?harness=opencode", []string{"o"}, ""},
		{"?project=/src/app", []string{"r:a:b", "r:a", "r"}, ""},
		{"?project=/real/app", []string{"r:a", "r"}, ""},
		{"?project=/src/app/", []string{"r:a:b", "r:a", "r"}, ""},
		{"?project=/src/app&limit=2", []string{"r:a:b", "r:a"}, ""},
		{"?project=/nowhere", []string{}, ""},
		{"?parent=r", []string{"r:a"}, ""},
		{"?parent=r%3Aa", []string{"r:a:b"}, ""},
		{"?status=ended", []string{"o", "r:a"}, ""},
		{"?status=active&top_level=true", []string{"r"}, ""},
		{"?top_level=true", []string{"o", "r"}, ""},
		{"?top_level=false", []string{"o", "r:a:b", "r:a", "r"}, ""},
		{"?limit=1", []string{"o"}, ""},
		{"?limit=1000", []string{"o", "r:a:b", "r:a", "r"}, ""},
		{"?scope=other", []string{"x"}, ""},
		{"?scope=nobody", []string{}, ""},
		{"?harness=", []string{"o", "r:a:b", "r:a", "r"}, ""},
		{"?limit=0", nil, "invalid: limit"},
		{"?limit=1001", nil, "invalid: limit"},
		{"?limit=-1", nil, "invalid: limit"},
		{"?limit=ten", nil, "invalid: limit"},
		{"?status=running", nil, "invalid: status"},
		{"?top_level=yes", nil, "invalid: top_level"},
		{"?harnes=opencode", nil, "invalid: unknown parameter \"harnes\""},
		{"?limit=1&limit=2", nil, "invalid: limit"},
		{"?harness=%zz", nil, "invalid: query"},
		{"?scope=a%00b", nil, "invalid: scope"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			var got proxy.SessionsReply
			status, code := get(t, s, "/api/sessions"+tt.query, nil, &got)
			if tt.want == nil {
				if status != 400 || !strings.HasPrefix(code, tt.code) {
					t.Fatalf("got %d %q, want 400 %q…", status, code, tt.code)
				}
				return
			}
			if status != 200 {
				t.Fatalf("got %d %q, want 200", status, code)
			}
			if ids := sessionIDs(got.Sessions); !reflect.DeepEqual(ids, tt.want) {
				t.Fatalf("ids: got %q, want %q", ids, tt.want)
			}
		})
	}
}

func TestAPI_GetSession(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	t.Run("OK", func(t *testing.T) {
		var got proxy.SessionReply
		if status, code := get(t, s, "/api/sessions/r", nil, &got); status != 200 {
			t.Fatalf("got %d %q", status, code)
		}
		want := proxy.APISession{
			Scope: "default", ID: "r", Harness: "claude-code", NativeID: "r", Project: "/src/app",
			ProjectNorm: "/real/app", Objective: "build the thing", Status: "active",
			CreatedAt: epoch.Add(1 * time.Second), UpdatedAt: epoch.Add(2 * time.Second), TurnCount: 5,
			Files: []string{"main.go"}, Transcript: proxy.APITranscriptPos{Path: "/t/r.jsonl", Offset: 500},
		}
		if !reflect.DeepEqual(got.Session, want) {
			t.Fatalf("session:\n got %+v\nwant %+v", got.Session, want)
		}
		if got.Run != nil || got.Children != 1 {
			t.Fatalf("run, children: got %+v, %d; want null, 1", got.Run, got.Children)
		}
	})
	// Sub-agent keys hold ':'; they route whether the client escapes it or not.
	for _, path := range []string{"/api/sessions/r:a", "/api/sessions/r%3Aa", "/api/sessions/" + url.PathEscape("r:a")} {
		t.Run("Colon"+path, func(t *testing.T) {
			var got proxy.SessionReply
			if status, code := get(t, s, path, nil, &got); status != 200 {
				t.Fatalf("got %d %q", status, code)
			}
			if got.Session.ID != "r:a" || got.Session.AgentType != "Explore" || got.Children != 1 {
				t.Fatalf("got %+v", got)
			}
			if got.Run == nil || got.Run.ID != "toolu_a" || got.Run.Status != "completed" || got.Run.Result != "found it" {
				t.Fatalf("run: got %+v, want toolu_a completed", got.Run)
			}
		})
	}
	t.Run("ErrNotFound", func(t *testing.T) {
		for _, path := range []string{"/api/sessions/nope:1", "/api/sessions/r?scope=other", "/api/sessions/a%2Fb"} {
			status, code := get(t, s, path, nil, nil)
			if status != 404 || !strings.HasPrefix(code, "not_found: session ") {
				t.Errorf("%s: got %d %q, want 404 naming the session", path, status, code)
			}
		}
		if _, code := get(t, s, "/api/sessions/nope:1", nil, nil); !strings.Contains(code, "nope:1") {
			t.Errorf("message %q: want it to name nope:1", code)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, path := range []string{"/api/sessions/a%00b", "/api/sessions/r?from=1", "/api/sessions/%ff"} {
			if status, code := get(t, s, path, nil, nil); status != 400 || !strings.HasPrefix(code, "invalid") {
				t.Errorf("%s: got %d %q, want 400 invalid", path, status, code)
			}
		}
	})
}

func TestAPI_Transcript(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	page := func(query string) ([]uint64, *uint64) {
		t.Helper()
		var got proxy.TranscriptReply
		if status, code := get(t, s, "/api/sessions/r/transcript"+query, nil, &got); status != 200 {
			t.Fatalf("%s: got %d %q", query, status, code)
		}
		seqs := []uint64{}
		for _, turn := range got.Turns {
			seqs = append(seqs, turn.Seq)
		}
		return seqs, got.Next
	}
	t.Run("Paging", func(t *testing.T) {
		var all []uint64
		query := "?limit=2"
		for pages := 0; ; pages++ {
			seqs, next := page(query)
			all = append(all, seqs...)
			if next == nil {
				if pages != 2 {
					t.Fatalf("got %d pages after the first, want 2", pages)
				}
				break
			}
			query = fmt.Sprintf("?limit=2&from=%d", *next)
		}
		if want := []uint64{0, 1, 2, 3, 4}; !reflect.DeepEqual(all, want) {
			t.Fatalf("seqs: got %v, want %v", all, want)
		}
	})
	t.Run("Default", func(t *testing.T) {
		var got proxy.TranscriptReply
		get(t, s, "/api/sessions/r/transcript", nil, &got)
		if len(got.Turns) != 5 || got.Next != nil {
			t.Fatalf("got %d turns, next %v; want 5, null", len(got.Turns), got.Next)
		}
		want := proxy.APITurn{Seq: 2, SourceID: "u2", Role: "user", Text: "turn 2", Tool: "", Files: []string{"main.go"}}
		if !reflect.DeepEqual(got.Turns[2], want) {
			t.Fatalf("turn:\n got %+v\nwant %+v", got.Turns[2], want)
		}
	})
	t.Run("PastTheEnd", func(t *testing.T) {
		if seqs, next := page("?from=5"); len(seqs) != 0 || next != nil {
			t.Fatalf("got %v, %v; want no turns, next null", seqs, next)
		}
		if seqs, _ := page("?from=18446744073709551615"); len(seqs) != 0 {
			t.Fatalf("got %v, want no turns", seqs)
		}
	})
	t.Run("ColonNoTurnsYet", func(t *testing.T) {
		var got proxy.TranscriptReply
		if status, code := get(t, s, "/api/sessions/r%3Aa/transcript", nil, &got); status != 200 || len(got.Turns) != 0 || got.Next != nil {
			t.Fatalf("got %d %q %+v, want 200 and an empty page", status, code, got)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		for _, tt := range []struct {
			path   string
			status int
			code   string
		}{
			{"/api/sessions/nope/transcript", 404, "not_found: session nope"},
			{"/api/sessions/r/transcript?from=-1", 400, "invalid: from"},
			{"/api/sessions/r/transcript?from=x", 400, "invalid: from"},
			{"/api/sessions/r/transcript?limit=1001", 400, "invalid: limit"},
			{"/api/sessions/r/transcript?to=3", 400, "invalid: unknown parameter"},
		} {
			if status, code := get(t, s, tt.path, nil, nil); status != tt.status || !strings.HasPrefix(code, tt.code) {
				t.Errorf("%s: got %d %q, want %d %q…", tt.path, status, code, tt.status, tt.code)
			}
		}
	})
}

func TestAPI_Lineage(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	lineage := func(key string) proxy.LineageReply {
		t.Helper()
		var got proxy.LineageReply
		if status, code := get(t, s, "/api/sessions/"+key+"/lineage", nil, &got); status != 200 {
			t.Fatalf("%s: got %d %q", key, status, code)
		}
		return got
	}
	t.Run("Root", func(t *testing.T) {
		got := lineage("r")
		if got.Session.ID != "r" || len(got.Ancestors) != 0 || got.Truncated {
			t.Fatalf("got session %s, %d ancestors, truncated %v", got.Session.ID, len(got.Ancestors), got.Truncated)
		}
		if len(got.Descendants) != 1 {
			t.Fatalf("descendants: got %d, want 1", len(got.Descendants))
		}
		a := got.Descendants[0]
		if a.Session.ID != "r:a" || a.Run == nil || a.Run.ID != "toolu_a" || len(a.Children) != 1 {
			t.Fatalf("first level: got %s run %+v, %d children", a.Session.ID, a.Run, len(a.Children))
		}
		b := a.Children[0]
		if b.Session.ID != "r:a:b" || b.Run == nil || b.Run.ID != "toolu_b" || b.Run.Status != "running" || b.Children == nil || len(b.Children) != 0 {
			t.Fatalf("second level: got %s run %+v, children %v", b.Session.ID, b.Run, b.Children)
		}
	})
	t.Run("Middle", func(t *testing.T) {
		got := lineage("r%3Aa")
		if ids := sessionIDs(got.Ancestors); !reflect.DeepEqual(ids, []string{"r"}) {
			t.Fatalf("ancestors: got %q, want [r]", ids)
		}
		if len(got.Descendants) != 1 || got.Descendants[0].Session.ID != "r:a:b" {
			t.Fatalf("descendants: got %+v", got.Descendants)
		}
	})
	t.Run("Leaf", func(t *testing.T) {
		got := lineage("r:a:b")
		if ids := sessionIDs(got.Ancestors); !reflect.DeepEqual(ids, []string{"r", "r:a"}) {
			t.Fatalf("ancestors: got %q, want root first", ids)
		}
		if got.Descendants == nil || len(got.Descendants) != 0 {
			t.Fatalf("descendants: got %v, want []", got.Descendants)
		}
	})
	t.Run("Cycle", func(t *testing.T) {
		// A damaged link (x's parent is y, y's is x) must not loop the walk.
		for _, p := range [][2]string{{"x", "y"}, {"y", "x"}} {
			sess := kv.Session{Scope: "default", ID: p[0], ParentID: p[1], Harness: "claude-code", Status: kv.StatusActive}
			if err := s.Engine.Store.PutSession(t.Context(), sess); err != nil {
				t.Fatal(err)
			}
		}
		got := lineage("x")
		if !got.Truncated || len(got.Ancestors) != 1 || len(got.Descendants) != 0 {
			t.Fatalf("got ancestors %q, %d descendants, truncated %v; want [y], 0, true", sessionIDs(got.Ancestors), len(got.Descendants), got.Truncated)
		}
	})
	t.Run("Deep", func(t *testing.T) {
		// A chain longer than the bound is cut both ways, and says so.
		prev := ""
		for i := range 70 {
			id := fmt.Sprint("d", i)
			sess := kv.Session{Scope: "default", ID: id, ParentID: prev, Depth: i, Harness: "claude-code", Status: kv.StatusActive}
			if err := s.Engine.Store.PutSession(t.Context(), sess); err != nil {
				t.Fatal(err)
			}
			prev = id
		}
		got := lineage("d69")
		if len(got.Ancestors) != 64 || got.Ancestors[63].ID != "d68" || !got.Truncated {
			t.Fatalf("got %d ancestors, truncated %v; want 64 ending at d68, true", len(got.Ancestors), got.Truncated)
		}
		got = lineage("d0")
		depth := 0
		for level := got.Descendants; len(level) > 0; level = level[0].Children {
			depth++
		}
		if depth != 64 || !got.Truncated {
			t.Fatalf("got %d levels, truncated %v; want 64, true", depth, got.Truncated)
		}
		if got := lineage("d5"); got.Truncated || len(got.Ancestors) != 5 {
			t.Fatalf("d5: got %d ancestors, truncated %v; want 5, false", len(got.Ancestors), got.Truncated)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if status, code := get(t, s, "/api/sessions/nope/lineage", nil, nil); status != 404 || !strings.Contains(code, "nope") {
			t.Fatalf("got %d %q, want 404 naming nope", status, code)
		}
	})
}

func TestAPI_ListRuns(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	tests := []struct {
		query string
		want  []string // nil: a 400
	}{
		{"", []string{"toolu_c", "toolu_b", "toolu_a"}},
		{"?root=r", []string{"toolu_c", "toolu_b", "toolu_a"}},
		{"?root=o", []string{}},
		{"?parent=r", []string{"toolu_c", "toolu_a"}},
		{"?parent=r:a", []string{"toolu_b"}},
		{"?child=r%3Aa%3Ab", []string{"toolu_b"}},
		{"?status=pending", []string{"toolu_c"}},
		{"?status=some-harness-word", nil}, // no run has it: a mistake, not an empty list
		{"?harness=bogus", nil},
		{"?limit=2", []string{"toolu_c", "toolu_b"}},
		{"?scope=other", []string{}},
		{"?limit=0", nil},
		{"?type=Explore", []string{"toolu_a"}},
		{"?harness=claude-code&status=running", []string{"toolu_b"}},
		{"?harness=opencode", []string{}},
		{"?session=r", []string{"toolu_c", "toolu_b", "toolu_a"}}, // a top-level session: its tree
		{"?session=r:a", []string{"toolu_b"}},                     // a sub-agent: what it spawned
		{"?session=r:a:b", []string{}},
		{"?session=r&status=pending", []string{"toolu_c"}},
		{"?since=2026-10-01", []string{"toolu_c", "toolu_b", "toolu_a"}},
		{"?since=2099-01-01", []string{}},
		{"?since=yesterday", nil},
		{"?session=r&root=r", nil},
		{"?kind=Explore", nil},
		{"?prefix=toolu_", []string{"toolu_a", "toolu_b", "toolu_c"}}, // by id
		{"?prefix=toolu_b", []string{"toolu_b"}},
		{"?prefix=toolu_&limit=1", []string{"toolu_a"}},
		{"?prefix=call_", []string{}},
		{"?prefix=toolu_&status=pending", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			var got proxy.RunsReply
			status, code := get(t, s, "/api/runs"+tt.query, nil, &got)
			if tt.want == nil {
				if status != 400 || !strings.HasPrefix(code, "invalid") {
					t.Fatalf("got %d %q, want 400 invalid", status, code)
				}
				return
			}
			if status != 200 {
				t.Fatalf("got %d %q", status, code)
			}
			if ids := runIDs(got.Runs); !reflect.DeepEqual(ids, tt.want) {
				t.Fatalf("ids: got %q, want %q", ids, tt.want)
			}
		})
	}
	t.Run("Shape", func(t *testing.T) {
		var got proxy.RunsReply
		get(t, s, "/api/runs?child=r:a", nil, &got)
		want := proxy.APIRun{
			Scope: "default", ID: "toolu_a", Harness: "claude-code", RootID: "r", ParentID: "r",
			ChildID: "r:a", Type: "Explore", Status: "completed", Result: "found it",
			CreatedAt: got.Runs[0].CreatedAt, StartedAt: epoch, EndedAt: epoch.Add(time.Minute),
			Depth: 1, EndReason: "completed", Turns: 4,
		}
		if len(got.Runs) != 1 || !reflect.DeepEqual(got.Runs[0], want) || got.Runs[0].CreatedAt.IsZero() {
			t.Fatalf("run:\n got %+v\nwant %+v", got.Runs, want)
		}
	})
}

// TestAPI_GetRun: one run with its cast: condensed to fit chars, or with full=true the whole
// result while it is kept.
func TestAPI_GetRun(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	long := "HEAD-MARK " + strings.Repeat("a line of the long result.\n", 2000) + "TAIL-MARK"
	if _, err := s.Engine.Store.UpdateRun(t.Context(), "default", "toolu_long", func(r *kv.Run, _ bool) error {
		r.Scope, r.Harness, r.RootID, r.ParentID, r.ChildID = "default", "claude-code", "r", "r", "r:l"
		r.Description, r.Status, r.EndReason, r.Result, r.EndedAt = "long survey", kv.RunCompleted, kv.EndCompleted, long, epoch
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var got proxy.RunReply
	if status, code := get(t, s, "/api/runs/toolu_a", nil, &got); status != 200 {
		t.Fatalf("got %d %q", status, code)
	}
	if got.Run.ID != "toolu_a" || !strings.HasPrefix(got.Cast, "[Subagent Result: Explore]\nStatus: completed\nCondensation: Level 1 (passthrough)\nfound it\n---\n") {
		t.Errorf("run %s, cast:\n%s", got.Run.ID, got.Cast)
	}
	get(t, s, "/api/runs/toolu_long?chars=2000", nil, &got)
	if n := inject.Len(got.Cast); n > 2000 || !strings.Contains(got.Cast, "Condensation: Level 3 (head/tail)") || !strings.Contains(got.Cast, "HEAD-MARK") || !strings.Contains(got.Cast, "TAIL-MARK") {
		t.Errorf("cast in 2000 chars (%d):\n%s", n, got.Cast)
	}
	get(t, s, "/api/runs/toolu_long?full=true", nil, &got)
	if !strings.Contains(got.Cast, long) || !strings.Contains(got.Cast, "Condensation: Level 1 (passthrough)") {
		t.Errorf("full cast is %d chars, want the whole result", len(got.Cast))
	}
	for path, want := range map[string]int{
		"/api/runs/nope":                404,
		"/api/runs/toolu_a?chars=10":    400,
		"/api/runs/toolu_a?chars=x":     400,
		"/api/runs/toolu_a?full=maybe":  400,
		"/api/runs/toolu_a?scope=other": 404,
		"/api/runs/toolu_a?limit=1":     400,
	} {
		if status, code := get(t, s, path, nil, nil); status != want {
			t.Errorf("%s: got %d %q, want %d", path, status, code, want)
		}
	}
}

func TestAPI_Methods(t *testing.T) {
	s := MustOpenServer(t, nil)
	for _, path := range []string{"/api/sessions", "/api/sessions/r:a", "/api/sessions/r/transcript", "/api/sessions/r/lineage", "/api/runs", "/api/runs/toolu_a"} {
		allowed := "GET, HEAD"
		if path == "/api/sessions/r:a" {
			allowed = "GET, HEAD, DELETE" // a session may be deleted
		}
		for _, method := range []string{"POST", "PUT", "DELETE", "PATCH"} {
			if strings.Contains(allowed, method) {
				continue
			}
			status, got, hdr := do(t, method, s.URL()+path, "{}", nil)
			if status != 405 || got["code"] != "method_not_allowed" || hdr.Get("Allow") != allowed {
				t.Errorf("%s %s: got %d %v Allow %q, want 405 method_not_allowed, Allow %s", method, path, status, got, hdr.Get("Allow"), allowed)
			}
		}
	}
	status, _, hdr := do(t, "HEAD", s.URL()+"/api/sessions", "", nil)
	if status != 200 || hdr.Get("Content-Type") != "application/json" {
		t.Errorf("HEAD: got %d %q", status, hdr.Get("Content-Type"))
	}
	status, got, _ := do(t, "GET", s.URL()+"/api/nope", "", nil)
	if status != 404 || got["code"] != "not_found" {
		t.Errorf("unknown route: got %d %v", status, got)
	}
}

func TestAPI_CallerChecks(t *testing.T) {
	s := mustOpenSeeded(t, func(s *proxy.Server) { s.Token = "sekret" })
	for _, path := range []string{"/api/sessions", "/api/sessions/r", "/api/sessions/r/transcript", "/api/sessions/r/lineage", "/api/runs"} {
		if status, code := get(t, s, path, nil, nil); status != 401 || !strings.HasPrefix(code, "unauthorized") {
			t.Errorf("%s without token: got %d %q, want 401", path, status, code)
		}
		if status, _ := get(t, s, path, map[string]string{"Authorization": "Bearer wrong"}, nil); status != 401 {
			t.Errorf("%s with a wrong token: got %d, want 401", path, status)
		}
		if status, code := get(t, s, path, map[string]string{"Authorization": "Bearer sekret"}, nil); status != 200 {
			t.Errorf("%s with the token: got %d %q, want 200", path, status, code)
		}
	}
	status, got, _ := do(t, "GET", s.URL()+"/api/sessions", "", map[string]string{"Authorization": "Bearer sekret", "Host": "evil.example:7433"})
	if status != 403 || got["code"] != "forbidden" {
		t.Errorf("foreign Host: got %d %v, want 403", status, got)
	}
}

func TestAPI_StoreClosed(t *testing.T) {
	s := MustOpenServer(t, nil)
	if err := s.Engine.Store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/sessions", "/api/sessions/r", "/api/runs"} {
		if status, code := get(t, s, path, nil, nil); status != 503 || !strings.HasPrefix(code, "unavailable") {
			t.Errorf("%s: got %d %q, want 503 unavailable", path, status, code)
		}
	}
}

// TestAPI_LineageAcrossScopes: an OpenClaw parent under agent main with a sub-agent spawned
// under agent ops. The parent's lineage lists the child (in scope ops, with the parent's run),
// the child's lists the parent as its ancestor, and each session's reply counts and finds
// what the other scope holds.
func TestAPI_LineageAcrossScopes(t *testing.T) {
	s := MustOpenServer(t, nil)
	ctx := t.Context()
	for _, sess := range []kv.Session{
		{Scope: "main", ID: "agent:main:main", Harness: "openclaw", Status: kv.StatusActive},
		{Scope: "ops", ID: "agent:ops:subagent:1", Harness: "openclaw", Status: kv.StatusActive, ParentID: "agent:main:main", ParentScope: "main", Depth: 1},
	} {
		if err := s.Engine.Store.PutSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	run := kv.Run{Scope: "main", ID: "agent:ops:subagent:1", Harness: "openclaw", RootID: "agent:main:main", ParentID: "agent:main:main",
		ChildID: "agent:ops:subagent:1", ChildScope: "ops", Status: kv.RunRunning}
	if _, err := s.Engine.Store.UpdateRun(ctx, "main", run.ID, func(r *kv.Run, _ bool) error { *r = run; return nil }); err != nil {
		t.Fatal(err)
	}
	var parent proxy.LineageReply
	if status, code := get(t, s, "/api/sessions/agent:main:main/lineage?scope=main", nil, &parent); status != 200 {
		t.Fatalf("parent's lineage: %d %q", status, code)
	}
	if len(parent.Descendants) != 1 {
		t.Fatalf("parent's descendants: %+v, want the child in ops", parent.Descendants)
	}
	if d := parent.Descendants[0]; d.Session.Scope != "ops" || d.Session.ParentScope != "main" || d.Run == nil || d.Run.ChildScope != "ops" {
		t.Errorf("the child as its parent's lineage shows it: session %+v, run %+v", d.Session, d.Run)
	}
	var child proxy.LineageReply
	if status, code := get(t, s, "/api/sessions/agent:ops:subagent:1/lineage?scope=ops", nil, &child); status != 200 {
		t.Fatalf("child's lineage: %d %q", status, code)
	}
	if len(child.Ancestors) != 1 || child.Ancestors[0].ID != "agent:main:main" || child.Ancestors[0].Scope != "main" {
		t.Errorf("child's ancestors: %+v, want its parent in main", child.Ancestors)
	}
	var p proxy.SessionReply
	if status, code := get(t, s, "/api/sessions/agent:main:main?scope=main", nil, &p); status != 200 || p.Children != 1 {
		t.Errorf("parent: %d %q, %d children; want 1", status, code, p.Children)
	}
	var c proxy.SessionReply
	if status, code := get(t, s, "/api/sessions/agent:ops:subagent:1?scope=ops", nil, &c); status != 200 || c.Run == nil || c.Run.Scope != "main" {
		t.Errorf("child: %d %q, run %+v; want its parent's run, in main", status, code, c.Run)
	}
}

// TestAPI_FilterValues: a filter value heirloom does not know is a 400 naming what it takes, the
// same way for every filter; a status a harness reported for a finished run is taken.
func TestAPI_FilterValues(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	r := kv.Run{Scope: "default", ID: "call_x", Harness: "opencode", RootID: "r", ParentID: "r", Status: "timed_out"}
	if _, err := s.Engine.Store.UpdateRun(t.Context(), "default", r.ID, func(stored *kv.Run, _ bool) error { *stored = r; return nil }); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/api/runs?status=weird":               `invalid: status: got "weird", want one of pending, running`,
		"/api/runs?harness=bogus":              `invalid: harness: got "bogus", want one of claude-code, opencode, openclaw, codex`,
		"/api/sessions?harness=bogus":          `invalid: harness: got "bogus", want one of claude-code, opencode, openclaw, codex`,
		"/api/sessions?status=weird":           `invalid: status: got "weird", want one of active, ended`,
		"/api/runs?status=timed_out":           "",
		"/api/sessions?harness=codex":          "",
		"/api/sessions?prefix=r:":              "",
		"/api/sessions?prefix=r&status=active": "invalid: prefix: give it alone",
	} {
		status, code := get(t, s, path, nil, nil)
		switch {
		case want == "" && status != 200:
			t.Errorf("%s: %d %q, want 200", path, status, code)
		case want != "" && (status != 400 || !strings.HasPrefix(code, want)):
			t.Errorf("%s: %d %q, want 400 %q", path, status, code, want)
		}
	}
	var got proxy.SessionsReply
	if status, code := get(t, s, "/api/sessions?prefix=r:a", nil, &got); status != 200 || len(got.Sessions) != 2 {
		t.Errorf("prefix r:a: %d %q, %d sessions; want r:a and r:a:b", status, code, len(got.Sessions))
	}
}

// TestAPI_Blocks: a session's deliveries, newest first, with or without their text; an unknown
// session is a 404 and a bad text value a 400.
func TestAPI_Blocks(t *testing.T) {
	s := mustOpenSeeded(t, nil)
	for i, text := range []string{"first block", "second block"} {
		b := kv.Block{Scope: "default", SessionID: "r:a", At: epoch.Add(time.Duration(i) * time.Minute), Via: "subagent_start",
			Headings: []string{"## Inherited from Parent Session"}, Chars: len(text), ParentID: "r", Provisional: i == 1, Text: text}
		if err := s.Engine.Store.RecordBlock(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	var got proxy.BlocksReply
	if status, code := get(t, s, "/api/sessions/r:a/blocks", nil, &got); status != 200 {
		t.Fatalf("%d %q", status, code)
	}
	if len(got.Blocks) != 2 || got.Blocks[0].Text != "second block" || got.Blocks[0].Pairing != "provisional" || got.Blocks[1].Pairing != "confirmed" || got.Session.ID != "r:a" {
		t.Errorf("blocks: %+v", got)
	}
	got = proxy.BlocksReply{}
	if get(t, s, "/api/sessions/r:a/blocks?text=false&limit=1", nil, &got); len(got.Blocks) != 1 || got.Blocks[0].Text != "" || got.Blocks[0].Chars == 0 {
		t.Errorf("text=false, limit=1: %+v", got)
	}
	if status, _ := get(t, s, "/api/sessions/nobody/blocks", nil, nil); status != 404 {
		t.Errorf("an unknown session: %d, want 404", status)
	}
	if status, _ := get(t, s, "/api/sessions/r:a/blocks?text=maybe", nil, nil); status != 400 {
		t.Errorf("text=maybe: %d, want 400", status)
	}
}
