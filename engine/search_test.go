package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/search"
)

// openSearchEngine opens an engine over a real store indexed by search's analyzer (openEngine's,
// reading no transcripts); both close at cleanup.
func openSearchEngine(t *testing.T) *engine.Engine {
	t.Helper()
	return openEngine(t, cct.Tree{Root: t.TempDir()}, nil)
}

func putSession(t *testing.T, e *engine.Engine, id, parent, harness, project string) {
	t.Helper()
	sess := kv.Session{Scope: "default", ID: id, NativeID: id, ParentID: parent, Harness: harness, Project: project, Status: kv.StatusActive}
	if err := e.Store.PutSession(t.Context(), sess); err != nil {
		t.Fatal(err)
	}
}

func addTurns(t *testing.T, e *engine.Engine, id string, turns ...kv.Turn) {
	t.Helper()
	if _, err := e.Store.AppendTurns(t.Context(), "default", id, turns, kv.TranscriptPos{}); err != nil {
		t.Fatal(err)
	}
}

// allPages runs q page by page, calling between after every page but the last, and returns
// the hits as "session/turn".
func allPages(t *testing.T, e *engine.Engine, q engine.SearchQuery, between func()) []string {
	t.Helper()
	var out []string
	for page := 0; ; page++ {
		res, err := e.Search(t.Context(), q)
		if err != nil {
			t.Fatalf("search %+v: %v", q, err)
		}
		for _, h := range res.Hits {
			out = append(out, fmt.Sprintf("%s/%d", h.Session.ID, h.Turn))
		}
		if res.Cursor == "" {
			return out
		}
		if page > 500 {
			t.Fatal("pages do not end")
		}
		if between != nil {
			between()
		}
		q.Cursor = res.Cursor
	}
}

// TestSearch_PagesWhileWriting: through the real store and engine, pages taken while turns
// keep arriving (better matches, new sessions, a session's family growing) hold exactly what
// the first page's snapshot matched, in its order, each once; filters included.
func TestSearch_PagesWhileWriting(t *testing.T) {
	queries := []engine.SearchQuery{
		{Query: "depl*"},
		{Query: "deploy OR rollback"},
		{Query: "depl* -rollback"},
		{Query: "depl*", Session: "p"},
		{Query: "depl*", Harness: "claude-code", Role: "assistant"},
		{Query: "ticket", Since: time.Unix(1e9+600, 0)},
	}
	for _, q := range queries {
		for _, limit := range []int{1, 4} {
			e := seedSearch(t)
			q.Limit = search.MaxLimit
			full := allPages(t, e, q, nil)
			if len(full) == 0 || len(full) >= search.MaxLimit {
				t.Fatalf("%+v: %d hits", q, len(full))
			}
			q.Limit = limit
			n := 0
			got := allPages(t, e, q, func() {
				n++
				// A better match in every session, a new child of p, and a new session.
				for _, id := range []string{"p", "c", "o"} {
					addTurns(t, e, id, kv.Turn{Role: "assistant", Text: "deploy deployment deploy rollback ticket", At: time.Unix(1e9+1e6, 0)})
				}
				kid := fmt.Sprint("k", n)
				putSession(t, e, kid, "p", "claude-code", "/src/app")
				addTurns(t, e, kid, kv.Turn{Role: "assistant", Text: "deploy deploy ticket", At: time.Unix(1e9+1e6, 0)})
				putSession(t, e, fmt.Sprint("n", n), "", "opencode", "/src/new")
				addTurns(t, e, fmt.Sprint("n", n), kv.Turn{Role: "user", Text: "deploy ticket", At: time.Unix(1e9+1e6, 0)})
			})
			if !slices.Equal(got, full) {
				t.Errorf("%+v, pages of %d:\n%v\nwant %v", q, limit, got, full)
			}
			// A new search sees what arrived.
			q.Limit = search.MaxLimit
			if after := allPages(t, e, q, nil); len(after) <= len(full) && q.Since.IsZero() {
				t.Errorf("%+v: a new search has %d hits, want more than %d", q, len(after), len(full))
			}
		}
	}
}

// seedSearch opens an engine whose store holds p, its child c and o (another harness and
// project), with 60 turns of deploy words among them.
func seedSearch(t *testing.T) *engine.Engine {
	e := openSearchEngine(t)
	putSession(t, e, "p", "", "claude-code", "/src/app")
	putSession(t, e, "c", "p", "claude-code", "/src/app")
	putSession(t, e, "o", "", "opencode", "/src/other")
	words := []string{"deploy", "deployed", "deployment", "deploys", "rollback"}
	roles := []string{"user", "assistant", "tool"}
	for i := range 60 {
		var b strings.Builder
		for j := range 1 + i%6 {
			b.WriteString(words[(i+j)%len(words)] + " ")
		}
		b.WriteString("ticket " + fmt.Sprint(i))
		id := []string{"p", "c", "o"}[i%3]
		addTurns(t, e, id, kv.Turn{Role: roles[i%len(roles)], Text: b.String(), At: time.Unix(int64(1e9+i*60), 0)})
	}
	return e
}

// TestSearch_PagesWhileStreaming: a streamed record that grows between pages (UpsertTurns
// replaces its turn) stays in the later pages with its new text, and the other turns keep
// their places: the pages hold every hit of the first page's snapshot, each once.
func TestSearch_PagesWhileStreaming(t *testing.T) {
	e := openSearchEngine(t)
	putSession(t, e, "p", "", "opencode", "/src/app")
	for i := range 12 {
		addTurns(t, e, "p", kv.Turn{SourceID: fmt.Sprint("m", i), Role: "assistant", Text: fmt.Sprintf("deploy step %d", i)})
	}
	q := engine.SearchQuery{Query: "deploy", Limit: search.MaxLimit}
	full := allPages(t, e, q, nil)
	q.Limit = 3
	grown := 0
	got := allPages(t, e, q, func() {
		// The last records, not shown yet, grow.
		grown++
		turn := kv.Turn{SourceID: fmt.Sprint("m", 12-grown), Role: "assistant", Text: fmt.Sprintf("deploy step %d, and then some", 12-grown)}
		if _, _, err := e.Store.UpsertTurns(t.Context(), "default", "p", []kv.Turn{turn}); err != nil {
			t.Fatal(err)
		}
	})
	if len(got) != len(full) {
		t.Fatalf("pages while streaming: %v\nwant the hits of %v", got, full)
	}
	slices.Sort(got)
	slices.Sort(full)
	if !slices.Equal(got, full) {
		t.Errorf("pages while streaming: %v\nwant %v", got, full)
	}
}

// TestSearch_PagesWhileDeleting: a session deleted between pages (its postings gone) leaves
// later pages without its turns, and the others where they were: none repeated or skipped.
func TestSearch_PagesWhileDeleting(t *testing.T) {
	for _, query := range []string{"depl*", "deploy rollback", "ticket"} {
		e := seedSearch(t)
		q := engine.SearchQuery{Query: query, Limit: search.MaxLimit}
		full := allPages(t, e, q, nil)
		q.Limit = 2
		deleted := false
		got := allPages(t, e, q, func() {
			if !deleted {
				if _, err := e.Store.DeleteSession(t.Context(), "default", "o"); err != nil {
					t.Fatal(err)
				}
				deleted = true
			}
		})
		var want []string
		for i, h := range full {
			if i < 2 || !strings.HasPrefix(h, "o/") {
				want = append(want, h)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: pages while deleting:\n%v\nwant %v", query, got, want)
		}
	}
}

// TestSearch_OwnTrafficUnindexed: heirloom's own MCP replies, as Claude Code's transcript keeps
// them (a tool_result without the tool's name), are stored but never found by a search.
func TestSearch_OwnTrafficUnindexed(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	result := `{"type":"user","uuid":"r1","timestamp":"2026-11-01T10:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":[{"type":"text","text":"[heirloom session_search] 1 turn matches \"QZXV\":\n[1] session T · turn 4 · user\n    the **QZXV** codename"}]}]}}`
	cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "What did the other session call it?"), result, cct.AssistantLine("a1", "It is QZXV."))
	mustHook(t, e, cct.Event(tr, S, "Stop", nil))
	turns, err := e.Store.Turns(t.Context(), "default", S, 0, 0)
	if err != nil || len(turns) != 3 || !turns[1].Unindexed || turns[0].Unindexed || turns[2].Unindexed {
		t.Fatalf("stored turns %+v, %v: want three, the tool result unindexed", turns, err)
	}
	res, err := e.Search(t.Context(), engine.SearchQuery{Query: "QZXV"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Hits[0].Turn != 2 {
		t.Errorf("hits %+v: want only the assistant's own turn 2", res.Hits)
	}
}
