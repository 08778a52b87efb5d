package kv_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

// newSession returns a valid, active, top-level session.
func newSession(scope, id string) kv.Session {
	return kv.Session{Scope: scope, ID: id, Harness: "claude-code", NativeID: id, Status: kv.StatusActive}
}

func assertSession(t *testing.T, got, want kv.Session) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("session:\n got %+v\nwant %+v", got, want)
	}
}

// assertIDs checks the sessions' IDs, in order.
func assertIDs(t *testing.T, got []kv.Session, want ...string) {
	t.Helper()
	ids := make([]string, len(got))
	for i, s := range got {
		ids[i] = s.ID
	}
	if !slicesEqual(ids, want) {
		t.Fatalf("ids: got %q, want %q", ids, want)
	}
}

func slicesEqual(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

func TestPutSession(t *testing.T) {
	ctx := t.Context()
	t.Run("OK", func(t *testing.T) {
		s := MustOpenStore(t)
		in := kv.Session{
			Scope: "main", ID: "abc:agent1", Harness: "claude-code", NativeID: "agent1",
			ParentID: "abc", ParentInferred: true, Depth: 1,
			Project: "/src/p", ProjectNorm: "/real/p", Title: "look", Objective: "find the bug",
			AgentType: "Explore", Status: kv.StatusEnded,
			Transcript: kv.TranscriptPos{Path: "/t.jsonl", Offset: 10, Ident: "5:6"},
			TurnCount:  42, // store-owned: ignored for a new session
		}
		if err := s.PutSession(ctx, in); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetSession(ctx, "main", "abc:agent1")
		if err != nil {
			t.Fatal(err)
		}
		want := in
		want.CreatedAt = epoch.Add(1 * time.Second)
		want.UpdatedAt = epoch.Add(1 * time.Second)
		want.TurnCount = 0
		assertSession(t, got, want)

		// A second put keeps CreatedAt and TurnCount, stamps UpdatedAt, replaces the rest.
		in.Title = "look again"
		in.CreatedAt = epoch.Add(-time.Hour)
		in.Transcript = kv.TranscriptPos{}
		if err := s.PutSession(ctx, in); err != nil {
			t.Fatal(err)
		}
		got, err = s.GetSession(ctx, "main", "abc:agent1")
		if err != nil {
			t.Fatal(err)
		}
		want.Title = "look again"
		want.Transcript = kv.TranscriptPos{}
		want.UpdatedAt = epoch.Add(2 * time.Second)
		assertSession(t, got, want)
	})
	t.Run("CreatedAtGiven", func(t *testing.T) {
		s := MustOpenStore(t)
		in := newSession("main", "x")
		in.CreatedAt = time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
		if err := s.PutSession(ctx, in); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetSession(ctx, "main", "x")
		if err != nil {
			t.Fatal(err)
		}
		if !got.CreatedAt.Equal(in.CreatedAt) {
			t.Fatalf("CreatedAt: got %v, want %v", got.CreatedAt, in.CreatedAt)
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		s := MustOpenStore(t)
		for _, bad := range []kv.Session{
			{ID: "x", Harness: "h", Status: kv.StatusActive},
			{Scope: "main", ID: "x", Harness: "h", Status: "bogus"},
			{Scope: "main", ID: "x\x00y", Harness: "h", Status: kv.StatusActive},
			{Scope: "main", ID: "x", Harness: "h", Status: kv.StatusActive, ParentID: "p\x00"},
		} {
			if err := s.PutSession(ctx, bad); err == nil {
				t.Errorf("put %+v: got nil error", bad)
			}
		}
		list, err := s.ListSessions(ctx, "main", kv.SessionFilter{})
		if err != nil {
			t.Fatal(err)
		}
		assertIDs(t, list)
	})
}

func TestGetSession_ErrNotFound(t *testing.T) {
	s := MustOpenStore(t)
	_, err := s.GetSession(t.Context(), "main", "nope")
	if !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "main/nope") {
		t.Fatalf("error %q: want it to name main/nope", err)
	}
}

func TestUpdateSession(t *testing.T) {
	ctx := t.Context()
	t.Run("CreateThenChange", func(t *testing.T) {
		s := MustOpenStore(t)
		got, err := s.UpdateSession(ctx, "main", "x", func(sess *kv.Session, exists bool) error {
			if exists {
				t.Errorf("exists: got true, want false")
			}
			if sess.Scope != "main" || sess.ID != "x" {
				t.Errorf("prefilled: got %s/%s, want main/x", sess.Scope, sess.ID)
			}
			sess.Harness = "opencode"
			sess.Status = kv.StatusActive
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := kv.Session{Scope: "main", ID: "x", Harness: "opencode", Status: kv.StatusActive,
			CreatedAt: epoch.Add(time.Second), UpdatedAt: epoch.Add(time.Second)}
		assertSession(t, got, want)

		got, err = s.UpdateSession(ctx, "main", "x", func(sess *kv.Session, exists bool) error {
			if !exists {
				t.Errorf("exists: got false, want true")
			}
			assertSession(t, *sess, want)
			sess.Status = kv.StatusEnded
			sess.TurnCount = 7                      // store-owned: ignored
			sess.CreatedAt = time.Time{}            // store-owned: ignored
			sess.UpdatedAt = epoch.AddDate(1, 0, 0) // store-owned: ignored
			sess.Transcript.Path = "/t"
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want.Status = kv.StatusEnded
		want.UpdatedAt = epoch.Add(2 * time.Second)
		want.Transcript.Path = "/t"
		assertSession(t, got, want)
		stored, err := s.GetSession(ctx, "main", "x")
		if err != nil {
			t.Fatal(err)
		}
		assertSession(t, stored, want)
	})
	t.Run("FnError", func(t *testing.T) {
		s := MustOpenStore(t)
		boom := errors.New("boom")
		_, err := s.UpdateSession(ctx, "main", "x", func(sess *kv.Session, exists bool) error {
			sess.Harness = "h"
			sess.Status = kv.StatusActive
			return boom
		})
		if err != boom {
			t.Fatalf("got %v, want the fn's error as is", err)
		}
		if _, err := s.GetSession(ctx, "main", "x"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("after fn error: got %v, want ErrNotFound", err)
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		s := MustOpenStore(t)
		_, err := s.UpdateSession(ctx, "main", "x", func(sess *kv.Session, exists bool) error {
			return nil // no harness, no status
		})
		if err == nil {
			t.Fatal("got nil error for an invalid session")
		}
		_, err = s.UpdateSession(ctx, "main", "x", func(sess *kv.Session, exists bool) error {
			*sess = newSession("main", "y")
			return nil
		})
		if err == nil {
			t.Fatal("got nil error for a changed id")
		}
		if _, err := s.GetSession(ctx, "main", "x"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("got %v, want ErrNotFound", err)
		}
		if _, err := s.GetSession(ctx, "main", "y"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("got %v, want ErrNotFound", err)
		}
	})
}

func TestListSessions(t *testing.T) {
	ctx := t.Context()
	s := MustOpenStore(t)
	put := func(sess kv.Session) {
		t.Helper()
		if err := s.PutSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	a := newSession("main", "a")
	a.ProjectNorm = "/p1"
	b := newSession("main", "b")
	b.Harness = "opencode"
	b.ProjectNorm = "/p2"
	c := newSession("main", "c")
	c.ParentID = "a"
	c.ProjectNorm = "/p1"
	d := newSession("main", "d")
	d.Status = kv.StatusEnded
	d.ProjectNorm = "/p1"
	for _, sess := range []kv.Session{a, b, c, d} {
		put(sess)
	}
	// Other scopes, one a prefix of "main" and one extending it, stay out.
	put(newSession("mai", "zz"))
	put(newSession("mainx", "zz"))

	list := func(f kv.SessionFilter) []kv.Session {
		t.Helper()
		got, err := s.ListSessions(ctx, "main", f)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	assertIDs(t, list(kv.SessionFilter{}), "d", "c", "b", "a")

	// Touching a moves it to the front, once.
	if _, err := s.UpdateSession(ctx, "main", "a", func(*kv.Session, bool) error { return nil }); err != nil {
		t.Fatal(err)
	}
	assertIDs(t, list(kv.SessionFilter{}), "a", "d", "c", "b")
	put(b)
	assertIDs(t, list(kv.SessionFilter{}), "b", "a", "d", "c")

	for _, tt := range []struct {
		name string
		f    kv.SessionFilter
		want []string
	}{
		{"Harness", kv.SessionFilter{Harness: "opencode"}, []string{"b"}},
		{"ProjectNorm", kv.SessionFilter{ProjectNorm: "/p1"}, []string{"a", "d", "c"}},
		{"ParentID", kv.SessionFilter{ParentID: "a"}, []string{"c"}},
		{"Status", kv.SessionFilter{Status: kv.StatusEnded}, []string{"d"}},
		{"TopLevel", kv.SessionFilter{TopLevel: true}, []string{"b", "a", "d"}},
		{"Limit", kv.SessionFilter{Limit: 2}, []string{"b", "a"}},
		{"LimitAfterFilter", kv.SessionFilter{ProjectNorm: "/p1", Limit: 2}, []string{"a", "d"}},
		{"Combined", kv.SessionFilter{ProjectNorm: "/p1", TopLevel: true, Status: kv.StatusActive}, []string{"a"}},
		{"NoMatch", kv.SessionFilter{Harness: "codex"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assertIDs(t, list(tt.f), tt.want...)
		})
	}

	t.Run("EmptyScope", func(t *testing.T) {
		got, err := s.ListSessions(ctx, "nobody", kv.SessionFilter{})
		if err != nil {
			t.Fatal(err)
		}
		assertIDs(t, got)
	})
}

func TestChildren(t *testing.T) {
	ctx := t.Context()
	s := MustOpenStore(t)
	put := func(id, parent string, created time.Time) {
		t.Helper()
		sess := newSession("main", id)
		sess.ParentID = parent
		sess.CreatedAt = created
		if err := s.PutSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	children := func(parent string) []kv.Session {
		t.Helper()
		got, err := s.Children(ctx, "main", parent)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	put("p", "", epoch)
	put("q", "", epoch)
	put("pp", "", epoch) // "p" is a prefix of "pp": its children must not show under "p"
	t0 := epoch.Add(-time.Hour)
	put("k2", "p", t0.Add(2*time.Second))
	put("k1", "p", t0.Add(1*time.Second))
	put("k0b", "p", t0)
	put("k0a", "p", t0) // same CreatedAt as k0b: ordered by ID
	put("other", "pp", t0)

	assertIDs(t, children("p"), "k0a", "k0b", "k1", "k2")
	assertIDs(t, children("q"))

	// Moving k1 to q moves its link; a re-put of k2 with the same parent keeps one link.
	put("k1", "q", time.Time{})
	put("k2", "p", time.Time{})
	assertIDs(t, children("p"), "k0a", "k0b", "k2")
	assertIDs(t, children("q"), "k1")
	// Becoming top-level drops the link.
	put("k0a", "", time.Time{})
	assertIDs(t, children("p"), "k0b", "k2")

	if _, err := s.Children(ctx, "main", "nope"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("children of a missing parent: got %v, want ErrNotFound", err)
	}
}
