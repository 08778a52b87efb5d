package kv_test

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

// newCheckpoint returns a valid periodic checkpoint of session in project /p, without ID or
// CreatedAt.
func newCheckpoint(scope, session string) kv.Checkpoint {
	return kv.Checkpoint{
		Scope: scope, SessionID: session, Harness: "claude-code",
		Project: "/home/u/p", ProjectNorm: "/p", Trigger: kv.TriggerPeriodic,
	}
}

// mustPutCheckpoint stores c and returns it as stored.
func mustPutCheckpoint(tb testing.TB, s *kv.Store, c kv.Checkpoint) kv.Checkpoint {
	tb.Helper()
	got, err := s.PutCheckpoint(tb.Context(), c)
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

// putAt stores a checkpoint of session in project created at, and returns its ID.
func putAt(tb testing.TB, s *kv.Store, scope, session, project string, at time.Time) string {
	tb.Helper()
	c := newCheckpoint(scope, session)
	c.ProjectNorm, c.CreatedAt = project, at
	return mustPutCheckpoint(tb, s, c).ID
}

func assertCheckpoint(t *testing.T, got, want kv.Checkpoint) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("checkpoint:\n got %+v\nwant %+v", got, want)
	}
}

// assertCheckpointIDs checks the checkpoints' IDs, in order.
func assertCheckpointIDs(t *testing.T, got []kv.Checkpoint, want ...string) {
	t.Helper()
	ids := make([]string, len(got))
	for i, c := range got {
		ids[i] = c.ID
	}
	if !slicesEqual(ids, want) {
		t.Fatalf("checkpoint ids: got %q, want %q", ids, want)
	}
}

// assertCheckpointKeys checks that the checkpoint indexes agree with the records, and that
// there are n records, each with its session and age entries and nProject project entries.
func assertCheckpointKeys(t *testing.T, s *kv.Store, n, nProject int) {
	t.Helper()
	got := kv.CheckpointKeys(t, s)
	want := map[byte]int{'k': n, 'h': n, 'e': n, 'j': nProject}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%c keys: got %d, want %d (all: %v)", p, got[p], w, got)
		}
	}
}

// fullCheckpoint has every field set.
func fullCheckpoint() kv.Checkpoint {
	return kv.Checkpoint{
		Scope: "main", SessionID: "sess-1", Harness: "claude-code",
		Project: "/home/u/./proj", ProjectNorm: "/home/u/proj", Trigger: kv.TriggerPreCompaction,
		Epoch: 2, Prompts: 17, TurnSeq: 123,
		Digest: kv.Digest{
			Objective: "make the parser total",
			Prompts:   []string{"fix the parser", "keep the API stable"},
			Decisions: []kv.Statement{{Text: "use a table-driven lexer"}},
			Constraints: []kv.Statement{
				{Text: "never break the wire format"},
				{Text: "keep the API stable", Inferred: true},
			},
			Files:         []string{"parse.go", "lex.go"},
			LastAssistant: "I replaced the switch with a table…",
			OpenRuns:      []kv.RunDigest{{RunID: "toolu_2", Description: "scan tests", Status: kv.RunPending}},
			FinishedRuns: []kv.RunDigest{{
				RunID: "toolu_1", ChildID: "sess-1:agent-a", Description: "find callers",
				Status: kv.RunCompleted, Result: "3 callers in cmd/",
			}},
		},
	}
}

func TestPutCheckpoint(t *testing.T) {
	ctx := t.Context()
	t.Run("RoundTrip", func(t *testing.T) {
		s := MustOpenStore(t)
		in := fullCheckpoint()
		got := mustPutCheckpoint(t, s, in)
		want := in
		want.CreatedAt = epoch.Add(time.Second) // stamped from Now: none given
		want.ID = got.ID
		if got.ID == "" {
			t.Fatal("ID: got empty, want one assigned")
		}
		assertCheckpoint(t, got, want)
		stored, err := s.GetCheckpoint(ctx, "main", got.ID)
		if err != nil {
			t.Fatal(err)
		}
		assertCheckpoint(t, stored, want)
		latest, err := s.LatestCheckpoint(ctx, "main", "sess-1")
		if err != nil {
			t.Fatal(err)
		}
		assertCheckpoint(t, latest, want)
		assertCheckpointKeys(t, s, 1, 1)
	})
	t.Run("EmptySlicesReadBackNil", func(t *testing.T) {
		s := MustOpenStore(t)
		in := newCheckpoint("main", "x")
		in.Digest = kv.Digest{Prompts: []string{}, Decisions: []kv.Statement{}, OpenRuns: []kv.RunDigest{}}
		got := mustPutCheckpoint(t, s, in)
		stored, err := s.GetCheckpoint(ctx, "main", got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(stored.Digest, kv.Digest{}) {
			t.Fatalf("digest: got %+v, want the zero Digest", stored.Digest)
		}
	})
	t.Run("CreatedAtGivenInUTC", func(t *testing.T) {
		s := MustOpenStore(t)
		in := newCheckpoint("main", "x")
		in.CreatedAt = time.Now().In(time.FixedZone("x", 3600)) // with a monotonic reading
		got := mustPutCheckpoint(t, s, in)
		if !got.CreatedAt.Equal(in.CreatedAt) || got.CreatedAt.Location() != time.UTC {
			t.Fatalf("CreatedAt: got %v, want %v in UTC", got.CreatedAt, in.CreatedAt)
		}
		stored, err := s.GetCheckpoint(ctx, "main", got.ID)
		if err != nil {
			t.Fatal(err)
		}
		assertCheckpoint(t, stored, got)
	})
	t.Run("NoProject", func(t *testing.T) {
		// Without a normalised project a checkpoint is stored, but not indexed for recovery.
		s := MustOpenStore(t)
		in := newCheckpoint("main", "x")
		in.ProjectNorm = ""
		got := mustPutCheckpoint(t, s, in)
		if _, err := s.GetCheckpoint(ctx, "main", got.ID); err != nil {
			t.Fatal(err)
		}
		assertCheckpointKeys(t, s, 1, 0)
	})
	t.Run("CallerIDReplaces", func(t *testing.T) {
		s := MustOpenStore(t)
		in := newCheckpoint("main", "a")
		in.ID = "mine"
		first := mustPutCheckpoint(t, s, in)
		if first.ID != "mine" {
			t.Fatalf("ID: got %q, want the caller's %q", first.ID, "mine")
		}
		// Same ID, moved to another session, project and time: the indexes follow.
		in.SessionID, in.ProjectNorm, in.Trigger = "b", "/q", kv.TriggerExplicit
		second := mustPutCheckpoint(t, s, in)
		if !second.CreatedAt.After(first.CreatedAt) {
			t.Fatalf("CreatedAt: got %v, want after %v", second.CreatedAt, first.CreatedAt)
		}
		assertCheckpointKeys(t, s, 1, 1)
		if _, err := s.LatestCheckpoint(ctx, "main", "a"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("old session: got %v, want ErrNotFound", err)
		}
		got, err := s.LatestCheckpoint(ctx, "main", "b")
		if err != nil {
			t.Fatal(err)
		}
		assertCheckpoint(t, got, second)
		if _, err := s.LatestProjectCheckpoint(ctx, "main", "/p", time.Time{}, ""); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("old project: got %v, want ErrNotFound", err)
		}
		// Replacing without a project drops the project entry.
		in.ProjectNorm = ""
		mustPutCheckpoint(t, s, in)
		assertCheckpointKeys(t, s, 1, 0)
	})
	t.Run("Invalid", func(t *testing.T) {
		s := MustOpenStore(t)
		bad := newCheckpoint("main", "x")
		bad.Trigger = "sometimes"
		if _, err := s.PutCheckpoint(ctx, bad); err == nil || !strings.Contains(err.Error(), "sometimes") {
			t.Fatalf("got %v, want an error naming the trigger", err)
		}
		assertCheckpointKeys(t, s, 0, 0)
	})
}

func TestCheckpoint_Validate(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(c *kv.Checkpoint)
		want   string // in the error; "" means valid
	}{
		{"OK", func(c *kv.Checkpoint) {}, ""},
		{"OKWithID", func(c *kv.Checkpoint) { c.ID = "x" }, ""},
		{"OKNoProject", func(c *kv.Checkpoint) { c.ProjectNorm, c.Project = "", "" }, ""},
		{"OKEveryTrigger", func(c *kv.Checkpoint) { c.Trigger = kv.TriggerAgent }, ""},
		{"OKExplicit", func(c *kv.Checkpoint) { c.Trigger = kv.TriggerExplicit }, ""},
		{"OKPreCompaction", func(c *kv.Checkpoint) { c.Trigger = kv.TriggerPreCompaction }, ""},
		{"OKBefore1970", func(c *kv.Checkpoint) { c.CreatedAt = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC) }, ""},
		{"ErrScopeRequired", func(c *kv.Checkpoint) { c.Scope = "" }, "scope required"},
		{"ErrScopeNUL", func(c *kv.Checkpoint) { c.Scope = "a\x00b" }, "NUL"},
		{"ErrSessionRequired", func(c *kv.Checkpoint) { c.SessionID = "" }, "session"},
		{"ErrSessionNUL", func(c *kv.Checkpoint) { c.SessionID = "a\x00" }, "session"},
		{"ErrIDNUL", func(c *kv.Checkpoint) { c.ID = "a\x00" }, "id contains NUL"},
		{"ErrProjectNUL", func(c *kv.Checkpoint) { c.ProjectNorm = "/p\x00" }, "project"},
		{"ErrTriggerRequired", func(c *kv.Checkpoint) { c.Trigger = "" }, "trigger"},
		{"ErrTriggerUnknown", func(c *kv.Checkpoint) { c.Trigger = "Periodic" }, "trigger \"Periodic\""},
		{"ErrNegativeEpoch", func(c *kv.Checkpoint) { c.Epoch = -1 }, "negative"},
		{"ErrNegativePrompts", func(c *kv.Checkpoint) { c.Prompts = -1 }, "negative"},
		{"ErrCreatedTooEarly", func(c *kv.Checkpoint) { c.CreatedAt = time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC) }, "created at"},
		{"ErrCreatedTooLate", func(c *kv.Checkpoint) { c.CreatedAt = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }, "created at"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCheckpoint("main", "x")
			tt.change(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("got %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestCheckpoints_IDs(t *testing.T) {
	ctx := t.Context()
	t.Run("OrderedByTime", func(t *testing.T) {
		s := MustOpenStore(t)
		var ids []string
		for range 5 {
			ids = append(ids, mustPutCheckpoint(t, s, newCheckpoint("main", "x")).ID)
		}
		if !sort.StringsAreSorted(ids) {
			t.Fatalf("ids: got %q, want ascending", ids)
		}
		list, err := s.Checkpoints(ctx, "main", "x", 0)
		if err != nil {
			t.Fatal(err)
		}
		assertCheckpointIDs(t, list, ids[4], ids[3], ids[2], ids[1], ids[0])
	})
	t.Run("SameNanosecond", func(t *testing.T) {
		// A stopped clock: every checkpoint gets the same CreatedAt, and still a unique ID in
		// write order; newest first is the reverse of that order.
		s := MustOpenStore(t)
		s.Now = func() time.Time { return epoch }
		var ids []string
		for range 20 {
			c := mustPutCheckpoint(t, s, newCheckpoint("main", "x"))
			if !c.CreatedAt.Equal(epoch) {
				t.Fatalf("CreatedAt: got %v, want %v", c.CreatedAt, epoch)
			}
			ids = append(ids, c.ID)
		}
		if !sort.StringsAreSorted(ids) || !unique(ids) {
			t.Fatalf("ids: got %q, want unique and ascending", ids)
		}
		list, err := s.Checkpoints(ctx, "main", "x", 3)
		if err != nil {
			t.Fatal(err)
		}
		assertCheckpointIDs(t, list, ids[19], ids[18], ids[17])
		latest, err := s.LatestCheckpoint(ctx, "main", "x")
		if err != nil || latest.ID != ids[19] {
			t.Fatalf("latest: got %q, %v; want %q", latest.ID, err, ids[19])
		}
		// A caller's ID shaped like the next assigned one is skipped, not overwritten.
		taken := newCheckpoint("main", "y")
		taken.ID = nextID(t, ids[19])
		mustPutCheckpoint(t, s, taken)
		c := mustPutCheckpoint(t, s, newCheckpoint("main", "x"))
		if c.ID == taken.ID || c.ID < taken.ID {
			t.Fatalf("id after a taken one: got %q, want after %q", c.ID, taken.ID)
		}
		assertCheckpointKeys(t, s, 22, 22)
	})
}

// nextID returns the assigned ID that follows id ("<T>-<N>" → "<T>-<N+1>").
func nextID(t *testing.T, id string) string {
	t.Helper()
	if len(id) != 25 || id[16] != '-' {
		t.Fatalf("id %q: want 16 hex digits, '-', 8 hex digits", id)
	}
	var n uint32
	if _, err := fmt.Sscanf(id[17:], "%08x", &n); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s-%08x", id[:16], n+1)
}

func unique(ids []string) bool {
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			return false
		}
		seen[id] = true
	}
	return true
}

func TestCheckpoints(t *testing.T) {
	ctx := t.Context()
	s := MustOpenStore(t)
	at := func(h int) time.Time { return epoch.Add(time.Duration(h) * time.Hour) }
	// Written out of order: listing is by CreatedAt, newest first.
	a2 := putAt(t, s, "main", "a", "/p", at(2))
	a3 := putAt(t, s, "main", "a", "/p", at(3))
	a1 := putAt(t, s, "main", "a", "/p", at(1))
	ab := putAt(t, s, "main", "ab", "/p", at(9)) // a session whose id extends "a"
	putAt(t, s, "mainx", "a", "/p", at(9))       // the same session id in another scope
	putAt(t, s, "mai", "a", "/p", at(9))

	for _, tt := range []struct {
		name    string
		session string
		limit   int
		want    []string
	}{
		{"All", "a", 0, []string{a3, a2, a1}},
		{"Limit", "a", 2, []string{a3, a2}},
		{"NegativeLimit", "a", -1, []string{a3, a2, a1}},
		{"Prefix", "ab", 0, []string{ab}},
		{"None", "nobody", 0, []string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Checkpoints(ctx, "main", tt.session, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("got nil, want a non-nil list")
			}
			assertCheckpointIDs(t, got, tt.want...)
		})
	}
	t.Run("Latest", func(t *testing.T) {
		got, err := s.LatestCheckpoint(ctx, "main", "a")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != a3 || !got.CreatedAt.Equal(at(3)) {
			t.Fatalf("latest: got %s at %v, want %s at %v", got.ID, got.CreatedAt, a3, at(3))
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.LatestCheckpoint(ctx, "main", "nobody")
		if !errors.Is(err, kv.ErrNotFound) || !strings.Contains(err.Error(), "main/nobody") {
			t.Fatalf("latest: got %v, want ErrNotFound naming main/nobody", err)
		}
		_, err = s.GetCheckpoint(ctx, "main", "nope")
		if !errors.Is(err, kv.ErrNotFound) || !strings.Contains(err.Error(), "main/nope") {
			t.Fatalf("get: got %v, want ErrNotFound naming main/nope", err)
		}
		if _, err := s.GetCheckpoint(ctx, "mainx", a3); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("get in another scope: got %v, want ErrNotFound", err)
		}
	})
	t.Run("BadArgs", func(t *testing.T) {
		if _, err := s.Checkpoints(ctx, "", "a", 0); err == nil {
			t.Error("empty scope: got nil error")
		}
		if _, err := s.LatestCheckpoint(ctx, "main", ""); err == nil || errors.Is(err, kv.ErrNotFound) {
			t.Errorf("empty session: got %v, want an argument error", err)
		}
		if _, err := s.GetCheckpoint(ctx, "main", "a\x00"); err == nil {
			t.Error("NUL id: got nil error")
		}
	})
}

func TestLatestProjectCheckpoint(t *testing.T) {
	ctx := t.Context()
	s := MustOpenStore(t)
	at := func(m int) time.Time { return epoch.Add(time.Duration(m) * time.Minute) }
	oldest := putAt(t, s, "main", "s1", "/p", at(10))
	mid := putAt(t, s, "main", "s2", "/p", at(20))
	putAt(t, s, "main", "s3", "/p", at(30))
	s3b := putAt(t, s, "main", "s3", "/p", at(40))  // the newest of /p in main
	s4 := putAt(t, s, "main", "s4", "/p/q", at(50)) // a project under /p, newer
	putAt(t, s, "main", "s5", "/", at(50))          // a project /p is under, newer
	putAt(t, s, "main", "s6", "/P", at(50))         // case differs
	putAt(t, s, "other", "s7", "/p", at(60))        // ANOTHER SCOPE, same project, newest of all
	putAt(t, s, "mainx", "s8", "/p", at(60))        // a scope whose name extends "main"
	putAt(t, s, "mai", "s9", "/p", at(60))          // a scope "main" extends
	noProj := newCheckpoint("main", "s10")          // no project: never recovered
	noProj.ProjectNorm, noProj.CreatedAt = "", at(70)
	mustPutCheckpoint(t, s, noProj)

	for _, tt := range []struct {
		name    string
		scope   string
		project string
		since   time.Time
		exclude string
		want    string // "" means ErrNotFound
	}{
		{"NoBound", "main", "/p", time.Time{}, "", s3b},
		{"Newest", "main", "/p", at(0), "", s3b},
		{"ExactlyAtSince", "main", "/p", at(40), "", s3b},
		{"JustAfterNewest", "main", "/p", at(40).Add(time.Nanosecond), "", ""},
		{"ExcludeNewestSession", "main", "/p", at(0), "s3", mid},
		{"ExcludeOther", "main", "/p", at(0), "s2", s3b},
		{"ExcludeAtEdge", "main", "/p", at(20), "s3", mid},
		{"ExcludeAtEdgeJustAfter", "main", "/p", at(20).Add(time.Nanosecond), "s3", ""},
		{"OldestAtSince", "main", "/p", at(10), "", s3b},
		{"OnlyOldInWindow", "main", "/p", at(10), "s3", mid},
		{"SubProject", "main", "/p/q", at(0), "", s4},
		{"JustBeforeSinceExcluded", "main", "/p", at(10).Add(time.Nanosecond), "s3", mid},
		{"OtherProjectUnknown", "main", "/nowhere", time.Time{}, "", ""},
		{"OtherScopeOnly", "nobody", "/p", time.Time{}, "", ""},
		{"SinceBeforeKeyRange", "main", "/p", time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC), "", s3b},
		{"SinceAfterKeyRange", "main", "/p", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.LatestProjectCheckpoint(ctx, tt.scope, tt.project, tt.since, tt.exclude)
			if tt.want == "" {
				if !errors.Is(err, kv.ErrNotFound) {
					t.Fatalf("got %s (%s/%s), %v; want ErrNotFound", got.ID, got.Scope, got.SessionID, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Scope != tt.scope {
				t.Fatalf("scope: got %q, want %q", got.Scope, tt.scope)
			}
			if got.ID != tt.want {
				t.Fatalf("got %s (session %s), want %s", got.ID, got.SessionID, tt.want)
			}
		})
	}
	t.Run("OldestOnlyAtItsEdge", func(t *testing.T) {
		// s1's only checkpoint is found once s2 and s3 are out of the way: alone in a store
		// of its own, at since exactly, and not a nanosecond later.
		s := MustOpenStore(t)
		c := newCheckpoint("main", "s1")
		c.ID, c.CreatedAt = oldest, at(10)
		mustPutCheckpoint(t, s, c)
		if got, err := s.LatestProjectCheckpoint(ctx, "main", "/p", at(10), ""); err != nil || got.ID != oldest {
			t.Fatalf("at since: got %q, %v; want %q", got.ID, err, oldest)
		}
		if _, err := s.LatestProjectCheckpoint(ctx, "main", "/p", at(10).Add(time.Nanosecond), ""); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("a nanosecond later: got %v, want ErrNotFound", err)
		}
		if _, err := s.LatestProjectCheckpoint(ctx, "main", "/p", at(0), "s1"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("excluded: got %v, want ErrNotFound", err)
		}
	})

	t.Run("AnotherScopeNeverReturned", func(t *testing.T) {
		// Every query of main that can find anything finds a checkpoint of main, whatever the
		// window: the newer checkpoints of other, mainx and mai in the same project never come
		// back.
		for m := range 80 {
			got, err := s.LatestProjectCheckpoint(ctx, "main", "/p", at(m), "")
			if errors.Is(err, kv.ErrNotFound) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Scope != "main" {
				t.Fatalf("since %v: got a checkpoint of scope %q", at(m), got.Scope)
			}
		}
		got, err := s.LatestProjectCheckpoint(ctx, "other", "/p", time.Time{}, "")
		if err != nil || got.SessionID != "s7" {
			t.Fatalf("other scope: got %+v, %v; want its own s7", got, err)
		}
	})
	t.Run("ManyExcludedEntries", func(t *testing.T) {
		s := MustOpenStore(t)
		want := putAt(t, s, "main", "older", "/p", at(0))
		for i := range 300 {
			putAt(t, s, "main", "self", "/p", at(1).Add(time.Duration(i)*time.Second))
		}
		got, err := s.LatestProjectCheckpoint(ctx, "main", "/p", at(0), "self")
		if err != nil || got.ID != want {
			t.Fatalf("got %q, %v; want %q", got.ID, err, want)
		}
	})
	t.Run("BadArgs", func(t *testing.T) {
		if _, err := s.LatestProjectCheckpoint(ctx, "main", "", time.Time{}, ""); err == nil || errors.Is(err, kv.ErrNotFound) {
			t.Errorf("empty project: got %v, want an argument error", err)
		}
		if _, err := s.LatestProjectCheckpoint(ctx, "", "/p", time.Time{}, ""); err == nil || errors.Is(err, kv.ErrNotFound) {
			t.Errorf("empty scope: got %v, want an argument error", err)
		}
	})
}

func TestPruneCheckpoints(t *testing.T) {
	ctx := t.Context()
	at := func(h int) time.Time { return epoch.Add(time.Duration(h) * time.Hour) }
	cutoff := at(100)

	// fill stores, in scope main: session a with 5 old checkpoints, b with 2 old, c with 2 old
	// and 2 new, d with 1 new; scope other with 4 old of a session also named a. It returns
	// the IDs by session ("other/a" for the other scope).
	fill := func(t *testing.T, s *kv.Store) map[string][]string {
		ids := map[string][]string{}
		put := func(scope, session string, h int) {
			key := session
			if scope != "main" {
				key = scope + "/" + session
			}
			ids[key] = append(ids[key], putAt(t, s, scope, session, "/p", at(h)))
		}
		for h := range 5 {
			put("main", "a", h)
		}
		put("main", "b", 10)
		put("main", "b", 11)
		put("main", "c", 20)
		put("main", "c", 21)
		put("main", "c", 200)
		put("main", "c", 201)
		put("main", "d", 300)
		for h := range 4 {
			put("other", "a", h)
		}
		return ids
	}
	list := func(t *testing.T, s *kv.Store, scope, session string) []kv.Checkpoint {
		t.Helper()
		got, err := s.Checkpoints(ctx, scope, session, 0)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	prune := func(t *testing.T, s *kv.Store, scope string, keep, want int) {
		t.Helper()
		n, err := s.PruneCheckpoints(ctx, scope, cutoff, keep)
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Fatalf("deleted: got %d, want %d", n, want)
		}
	}

	t.Run("KeepNewestPerSession", func(t *testing.T) {
		s := MustOpenStore(t)
		ids := fill(t, s)
		assertCheckpointKeys(t, s, 16, 16)
		prune(t, s, "main", 2, 3+0+2) // a: 3 of 5; b: none (2 kept); c: both old (2 new kept)
		assertCheckpointIDs(t, list(t, s, "main", "a"), ids["a"][4], ids["a"][3])
		assertCheckpointIDs(t, list(t, s, "main", "b"), ids["b"][1], ids["b"][0])
		assertCheckpointIDs(t, list(t, s, "main", "c"), ids["c"][3], ids["c"][2])
		assertCheckpointIDs(t, list(t, s, "main", "d"), ids["d"][0])
		o := ids["other/a"]
		assertCheckpointIDs(t, list(t, s, "other", "a"), o[3], o[2], o[1], o[0]) // untouched
		assertCheckpointKeys(t, s, 11, 11)
		for _, id := range ids["a"][:3] {
			if _, err := s.GetCheckpoint(ctx, "main", id); !errors.Is(err, kv.ErrNotFound) {
				t.Fatalf("pruned %s: got %v, want ErrNotFound", id, err)
			}
		}
		// Recovery no longer finds pruned ones; a second prune has nothing to do.
		got, err := s.LatestProjectCheckpoint(ctx, "main", "/p", at(0), "")
		if err != nil || got.SessionID != "d" {
			t.Fatalf("recovery: got %+v, %v; want session d", got, err)
		}
		if _, err := s.LatestProjectCheckpoint(ctx, "main", "/p", time.Time{}, ""); err != nil {
			t.Fatal(err)
		}
		prune(t, s, "main", 2, 0)
	})
	t.Run("KeepNone", func(t *testing.T) {
		s := MustOpenStore(t)
		ids := fill(t, s)
		prune(t, s, "main", 0, 5+2+2)
		assertCheckpointIDs(t, list(t, s, "main", "a"))
		assertCheckpointIDs(t, list(t, s, "main", "b"))
		assertCheckpointIDs(t, list(t, s, "main", "c"), ids["c"][3], ids["c"][2])
		assertCheckpointKeys(t, s, 7, 7)
	})
	t.Run("KeepMoreThanAny", func(t *testing.T) {
		s := MustOpenStore(t)
		fill(t, s)
		prune(t, s, "main", 10, 0)
		assertCheckpointKeys(t, s, 16, 16)
	})
	t.Run("AllScopes", func(t *testing.T) {
		s := MustOpenStore(t)
		ids := fill(t, s)
		prune(t, s, "", 1, 4+1+2+3) // main: a 4, b 1, c 2; other: a 3
		assertCheckpointIDs(t, list(t, s, "main", "a"), ids["a"][4])
		assertCheckpointIDs(t, list(t, s, "other", "a"), ids["other/a"][3])
		assertCheckpointKeys(t, s, 6, 6)
	})
	t.Run("PrefixScopeUntouched", func(t *testing.T) {
		s := MustOpenStore(t)
		putAt(t, s, "mainx", "a", "/p", at(0))
		putAt(t, s, "mai", "a", "/p", at(0))
		putAt(t, s, "main", "a", "/p", at(0))
		prune(t, s, "main", 0, 1)
		assertCheckpointKeys(t, s, 2, 2)
	})
	t.Run("ZeroOlderThanDeletesNothing", func(t *testing.T) {
		s := MustOpenStore(t)
		fill(t, s)
		if n, err := s.PruneCheckpoints(ctx, "", time.Time{}, 0); err != nil || n != 0 {
			t.Fatalf("got %d, %v; want 0, nil", n, err)
		}
		assertCheckpointKeys(t, s, 16, 16)
	})
	t.Run("ManyBatches", func(t *testing.T) {
		// More entries than one batch examines, across sessions and scopes, interleaved in time.
		s := MustOpenStore(t)
		const sessions, each = 7, 100
		for i := range each {
			for j := range sessions {
				scope := "main"
				if j == sessions-1 {
					scope = "zz"
				}
				putAt(t, s, scope, fmt.Sprintf("s%d", j), fmt.Sprintf("/p%d", j%2),
					epoch.Add(time.Duration(i*sessions+j)*time.Second))
			}
		}
		cut := epoch.Add(time.Duration(60*sessions) * time.Second) // the first 60 of each session
		n, err := s.PruneCheckpoints(ctx, "", cut, 50)
		if err != nil {
			t.Fatal(err)
		}
		if want := sessions * 50; n != want { // keep 50 newest: the 40 new ones and 10 old ones
			t.Fatalf("deleted: got %d, want %d", n, want)
		}
		for j := range sessions {
			scope := "main"
			if j == sessions-1 {
				scope = "zz"
			}
			got := list(t, s, scope, fmt.Sprintf("s%d", j))
			if len(got) != 50 || !got[49].CreatedAt.Equal(epoch.Add(time.Duration(50*sessions+j)*time.Second)) {
				t.Fatalf("session s%d: got %d checkpoints, oldest %v", j, len(got), got[len(got)-1].CreatedAt)
			}
		}
		assertCheckpointKeys(t, s, sessions*50, sessions*50)
	})
	t.Run("BadArgs", func(t *testing.T) {
		s := MustOpenStore(t)
		fill(t, s)
		if _, err := s.PruneCheckpoints(ctx, "main", cutoff, -1); err == nil {
			t.Error("negative keep: got nil error")
		}
		if _, err := s.PruneCheckpoints(ctx, "a\x00b", cutoff, 1); err == nil {
			t.Error("NUL scope: got nil error")
		}
		assertCheckpointKeys(t, s, 16, 16)
	})
	t.Run("WhileWriting", func(t *testing.T) {
		// Pruning runs beside writers; neither loses anything the other should keep.
		s := MustOpenStore(t)
		for i := range 600 {
			putAt(t, s, "main", fmt.Sprintf("old%d", i%3), "/p", at(0).Add(time.Duration(i)*time.Second))
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			for range 100 {
				c := newCheckpoint("main", "new")
				c.CreatedAt = at(500)
				if _, err := s.PutCheckpoint(ctx, c); err != nil {
					t.Error(err)
					return
				}
			}
		})
		n, err := s.PruneCheckpoints(ctx, "main", cutoff, 3)
		wg.Wait()
		if err != nil || n != 600-9 {
			t.Fatalf("got %d, %v; want %d, nil", n, err, 600-9)
		}
		if got := list(t, s, "main", "new"); len(got) != 100 {
			t.Fatalf("new: got %d checkpoints, want 100", len(got))
		}
		assertCheckpointKeys(t, s, 109, 109)
	})
}

func TestCheckpoints_ConcurrentWriters(t *testing.T) {
	const writers, each = 8, 50
	for _, tt := range []struct {
		name  string
		clock func() time.Time
	}{
		{"SteppingClock", stepClock()},
		{"StoppedClock", func() time.Time { return epoch }}, // every write in the same nanosecond
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			s := MustOpenStore(t)
			s.Now = tt.clock
			var (
				wg  sync.WaitGroup
				mu  sync.Mutex
				ids []string
			)
			for w := range writers {
				wg.Go(func() {
					for i := range each {
						// Half the writers share one session, so its checkpoints race each other.
						session := "shared"
						if w%2 == 1 {
							session = fmt.Sprintf("w%d", w)
						}
						c := newCheckpoint("main", session)
						c.Prompts = i
						got, err := s.PutCheckpoint(ctx, c)
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						ids = append(ids, got.ID)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(ids) != writers*each || !unique(ids) {
				t.Fatalf("ids: got %d, unique %v; want %d unique", len(ids), unique(ids), writers*each)
			}
			shared, err := s.Checkpoints(ctx, "main", "shared", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(shared) != writers/2*each {
				t.Fatalf("shared session: got %d checkpoints, want %d", len(shared), writers/2*each)
			}
			for i := 1; i < len(shared); i++ {
				a, b := shared[i-1], shared[i]
				if a.CreatedAt.Before(b.CreatedAt) || (a.CreatedAt.Equal(b.CreatedAt) && a.ID <= b.ID) {
					t.Fatalf("shared session: %s (%v) listed before %s (%v), want newest first", a.ID, a.CreatedAt, b.ID, b.CreatedAt)
				}
			}
			for _, id := range ids {
				if _, err := s.GetCheckpoint(ctx, "main", id); err != nil {
					t.Fatal(err)
				}
			}
			assertCheckpointKeys(t, s, writers*each, writers*each)
		})
	}
}

func TestCheckpoints_Reopen(t *testing.T) {
	dir := testDir(t)
	ctx := t.Context()
	s := kv.NewStore(dir)
	s.Now = func() time.Time { return epoch } // one nanosecond before and after the reopen
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	want := mustPutCheckpoint(t, s, fullCheckpoint())
	other := mustPutCheckpoint(t, s, newCheckpoint("main", "other"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = kv.NewStore(dir)
	s.Now = func() time.Time { return epoch }
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetCheckpoint(ctx, "main", want.ID)
	if err != nil {
		t.Fatal(err)
	}
	assertCheckpoint(t, got, want)
	latest, err := s.LatestCheckpoint(ctx, "main", want.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	assertCheckpoint(t, latest, want)
	proj, err := s.LatestProjectCheckpoint(ctx, "main", want.ProjectNorm, epoch, "")
	if err != nil {
		t.Fatal(err)
	}
	assertCheckpoint(t, proj, want)
	// IDs assigned after the reopen, at the same nanosecond, still do not collide.
	again := mustPutCheckpoint(t, s, newCheckpoint("main", "other"))
	if again.ID == want.ID || again.ID == other.ID || again.ID < other.ID {
		t.Fatalf("id after reopen: got %q, want one after %q and %q", again.ID, want.ID, other.ID)
	}
	assertCheckpointKeys(t, s, 3, 3)
}

func TestCheckpoints_ErrClosed(t *testing.T) {
	s := kv.NewStore(t.TempDir())
	ctx := t.Context()
	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, kv.ErrClosed) {
			t.Errorf("%s: got %v, want ErrClosed", name, err)
		}
	}
	_, err := s.PutCheckpoint(ctx, newCheckpoint("main", "x"))
	check("PutCheckpoint", err)
	_, err = s.GetCheckpoint(ctx, "main", "x")
	check("GetCheckpoint", err)
	_, err = s.LatestCheckpoint(ctx, "main", "x")
	check("LatestCheckpoint", err)
	_, err = s.Checkpoints(ctx, "main", "x", 0)
	check("Checkpoints", err)
	_, err = s.LatestProjectCheckpoint(ctx, "main", "/p", time.Time{}, "")
	check("LatestProjectCheckpoint", err)
	_, err = s.PruneCheckpoints(ctx, "", epoch, 3)
	check("PruneCheckpoints", err)
}
