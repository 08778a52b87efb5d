package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

// storeState is everything heirloom stored for one scope, in a form two runs can be compared
// in: sessions and runs sorted by ID, with the fields that legitimately differ between two
// replays of the same stream cleared (wall-clock timestamps, the transcript file's identity) and
// the replay's temp root written back as the recorded home.
type storeState struct {
	Sessions []kv.Session
	Runs     []kv.Run
	Turns    map[string][]kv.Turn // by session ID
}

// readState reads the whole scope from store. root, when non-nil, is the replay root that stood
// in for recordedHome; its paths are written back as recordedHome.
func readState(tb testing.TB, store *kv.Store, root *replayRoot) storeState {
	tb.Helper()
	ctx := tb.Context()
	sessions, err := store.ListSessions(ctx, scope, kv.SessionFilter{})
	if err != nil {
		tb.Fatal(err)
	}
	runs, err := store.ListRuns(ctx, scope, kv.RunFilter{})
	if err != nil {
		tb.Fatal(err)
	}
	unroot := func(s string) string { return s }
	if root != nil {
		unroot = func(s string) string { return string(root.Unroot([]byte(s))) }
	}
	st := storeState{Turns: map[string][]kv.Turn{}}
	for _, s := range sessions {
		turns, err := store.Turns(ctx, scope, s.ID, 0, 0)
		if err != nil {
			tb.Fatal(err)
		}
		st.Turns[s.ID] = turns
		s.CreatedAt, s.UpdatedAt, s.CompactedAt = time.Time{}, time.Time{}, time.Time{}
		// Checkpoint bookkeeping: a replayed PreCompact rightly writes a fresh checkpoint.
		s.LastCheckpointAt, s.LastCheckpointPrompts = time.Time{}, 0
		if s.CompactionCheckpoint != "" { // a checkpoint ID: from the time it was written
			s.CompactionCheckpoint = "(set)"
		}
		s.Project, s.ProjectNorm = unroot(s.Project), unroot(s.ProjectNorm)
		s.Transcript.Path, s.Transcript.Ident = unroot(s.Transcript.Path), ""
		st.Sessions = append(st.Sessions, s)
	}
	for _, r := range runs {
		r.CreatedAt, r.StartedAt, r.EndedAt = time.Time{}, time.Time{}, time.Time{}
		st.Runs = append(st.Runs, r)
	}
	slices.SortFunc(st.Sessions, func(a, b kv.Session) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(st.Runs, func(a, b kv.Run) int { return strings.Compare(a.ID, b.ID) })
	return st
}

// session returns the stored session id, or false.
func (st storeState) session(id string) (kv.Session, bool) {
	i := slices.IndexFunc(st.Sessions, func(s kv.Session) bool { return s.ID == id })
	if i < 0 {
		return kv.Session{}, false
	}
	return st.Sessions[i], true
}

// run returns the stored run id, or false.
func (st storeState) run(id string) (kv.Run, bool) {
	i := slices.IndexFunc(st.Runs, func(r kv.Run) bool { return r.ID == id })
	if i < 0 {
		return kv.Run{}, false
	}
	return st.Runs[i], true
}

// sessionIDs returns the stored session IDs, sorted.
func (st storeState) sessionIDs() []string {
	ids := make([]string, len(st.Sessions))
	for i, s := range st.Sessions {
		ids[i] = s.ID
	}
	return ids
}

// checkTurns fails tb when a session's turns are not numbered 0..n-1 in order, repeat a
// SourceID, or disagree with its TurnCount.
func (st storeState) checkTurns(tb testing.TB) {
	tb.Helper()
	for _, s := range st.Sessions {
		turns := st.Turns[s.ID]
		seen := map[string]uint64{}
		for i, t := range turns {
			if t.Seq != uint64(i) {
				tb.Errorf("session %s: turn %d has Seq %d", s.ID, i, t.Seq)
			}
			if t.SourceID == "" {
				continue
			}
			if prev, dup := seen[t.SourceID]; dup {
				tb.Errorf("session %s: turns %d and %d share SourceID %s (stored twice)", s.ID, prev, t.Seq, t.SourceID)
			}
			seen[t.SourceID] = t.Seq
		}
		if s.TurnCount != uint64(len(turns)) {
			tb.Errorf("session %s: TurnCount %d, but %d turns stored", s.ID, s.TurnCount, len(turns))
		}
	}
}

// diffState returns "" when a and b are equal, else the first lines where their JSON forms
// differ, labelled with the two names.
func diffState(aName string, a storeState, bName string, b storeState) string {
	aj, _ := json.MarshalIndent(a, "", "  ")
	bj, _ := json.MarshalIndent(b, "", "  ")
	if string(aj) == string(bj) {
		return ""
	}
	al, bl := strings.Split(string(aj), "\n"), strings.Split(string(bj), "\n")
	var out strings.Builder
	shown := 0
	for i := 0; i < max(len(al), len(bl)) && shown < 12; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			fmt.Fprintf(&out, "line %d:\n  %s: %s\n  %s: %s\n", i+1, aName, x, bName, y)
			shown++
		}
	}
	return out.String()
}
