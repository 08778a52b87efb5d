package kv_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/search"
)

// Upgrades keep history (issue 16, item 8). testdata/upgrade holds a store written by each
// release whose schema version or Pebble format was new, as schema<V>-pebble<F>.tar.gz, with
// schema<V>-pebble<F>.want: everything the public API read back from it when it was written.
// TestUpgrade_Fixtures opens every one with the current code (Open migrates it) and reads it
// back the same. The rule (kv/migrate.go, at SchemaVersion): when SchemaVersion or
// PebbleFormatMajorVersion changes, write the new fixture with
//
//	HEIRLOOM_WRITE_UPGRADE_FIXTURE=1 go test ./kv -run TestUpgrade_WriteFixture
//
// and keep every old one. When dumpStore learns to print more, `go test ./kv -run
// TestUpgrade_Fixtures -update-upgrade` rewrites the .want files from the upgraded stores: review
// that the diff only adds lines.

var updateUpgrade = flag.Bool("update-upgrade", false, "rewrite testdata/upgrade/*.want from the upgraded fixtures (review the diff: it must only add)")

const upgradeDir = "testdata/upgrade"

// upgradeScopes are the memory scopes the fixture's content lives in.
var upgradeScopes = []string{"default", "main", "ops"}

// The fixture's sessions.
const (
	ccRoot   = "49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7"                    // Claude Code, top-level
	ccChild  = ccRoot + ":a02df2ef9ee472336"                             // its sub-agent
	ccGrand  = ccRoot + ":a73685d8901dc53f2"                             // the sub-agent's own sub-agent
	ocRoot   = "ses_dfee9894bffegzuPlvdaVMFf45"                          // OpenCode, top-level
	ocChild  = "ses_dfee8c2b7ffeDIVbTSn7Vxnglr"                          // its task child
	clawMain = "agent:main:main"                                         // OpenClaw, scope main
	clawOps  = "agent:ops:subagent:5e0c4b1a-2f6d-4c1e-9a7b-3d2f1e0c9b8a" // spawned into scope ops
)

// fixtureName is the file name, without extension, of the fixture a store at schema version
// schema and Pebble format pebble is kept under.
func fixtureName(schema, pebble uint64) string {
	return fmt.Sprintf("schema%d-pebble%d", schema, pebble)
}

// openUpgradeStore opens the store at dir as serve does: search index and facts ledger on.
func openUpgradeStore(t *testing.T, dir string, now func() time.Time) *kv.Store {
	t.Helper()
	s := kv.NewStore(dir)
	s.Index, s.Ledger = search.Analyzer{}, inject.Ledger{}
	if now != nil {
		s.Now = now
	}
	if err := s.Open(); err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return s
}

// TestUpgrade_Fixtures opens every kept store with the current code and finds it whole: Open
// brings it to SchemaVersion and at least PebbleFormatMajorVersion, the public API reads every
// session, its lineage, turns, facts, checkpoints and delivered blocks, and every run exactly
// as when it was written (the .want dump), searches find the planted words in their own
// scopes only, and the upgraded store takes new turns and finds them too.
func TestUpgrade_Fixtures(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(upgradeDir, "*.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	current := fixtureName(kv.SchemaVersion, kv.PebbleFormatMajorVersion)
	if !slices.Contains(paths, filepath.Join(upgradeDir, current+".tar.gz")) {
		t.Errorf("no fixture %s.tar.gz for this release's store: write it (HEIRLOOM_WRITE_UPGRADE_FIXTURE=1 go test ./kv -run TestUpgrade_WriteFixture) and keep the old ones", current)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".tar.gz")
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			unpack(t, path, dir)
			s := openUpgradeStore(t, dir, nil)
			defer s.Close()
			ctx := t.Context()
			if v, err := kv.StoredSchema(s); err != nil || v != kv.SchemaVersion {
				t.Errorf("schema version after Open: %d, %v; want %d", v, err, kv.SchemaVersion)
			}
			if f := kv.PebbleFormat(s); f < kv.PebbleFormatMajorVersion {
				t.Errorf("Pebble format after Open: %d, want at least %d", f, kv.PebbleFormatMajorVersion)
			}
			if s.IndexStatus().Building { // written under another analyzer: the rebuild is its migration
				if err := s.Reindex(ctx, nil); err != nil {
					t.Fatalf("reindex: %v", err)
				}
			}

			got := dumpStore(t, s)
			wantPath := filepath.Join(upgradeDir, name+".want")
			if *updateUpgrade {
				if err := os.WriteFile(wantPath, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatalf("the fixture's dump: %v", err)
			}
			if got != string(want) {
				t.Errorf("read back after the upgrade, %s differs from %s:\n%s", path, wantPath, lineDiff(string(want), got))
			}

			checkUpgradedContent(t, s)
		})
	}
}

// checkUpgradedContent spells out the most important of what the dump compares: lineage across
// harnesses and scopes, turns in order, runs in each state, facts, checkpoints and blocks, the
// planted words found, and new writes taken.
func checkUpgradedContent(t *testing.T, s *kv.Store) {
	t.Helper()
	ctx := t.Context()
	for _, c := range []struct{ scope, id, parent, parentScope string }{
		{"default", ccChild, ccRoot, ""}, {"default", ccGrand, ccChild, ""},
		{"default", ocChild, ocRoot, ""}, {"ops", clawOps, clawMain, "main"},
	} {
		sess, err := s.GetSession(ctx, c.scope, c.id)
		if err != nil || sess.ParentID != c.parent || sess.ParentScope != c.parentScope {
			t.Errorf("session %s/%s: parent %q in %q, %v; want %q in %q", c.scope, c.id, sess.ParentID, sess.ParentScope, err, c.parent, c.parentScope)
		}
	}
	if kids, err := s.Children(ctx, "main", clawMain); err != nil || len(kids) != 1 || kids[0].ID != clawOps || kids[0].Scope != "ops" {
		t.Errorf("children of %s: %+v, %v; want its cross-scope child %s in ops", clawMain, kids, err, clawOps)
	}
	turns, err := s.Turns(ctx, "default", ccRoot, 0, 0)
	if err != nil || len(turns) < 5 || turns[0].Text != "Port the parser to Go. Never touch vendor/." || turns[1].SourceID != "a1" || turns[4].Role != "system" {
		t.Errorf("turns of %s: %+v, %v", ccRoot, turns, err)
	}
	if oc, err := s.Turns(ctx, "default", ocRoot, 0, 0); err != nil || len(oc) != 2 || !strings.Contains(oc[1].Text, "QUASICRYSTAL") {
		t.Errorf("turns of %s (a streamed part replaced in place): %+v, %v", ocRoot, oc, err)
	}
	for id, status := range map[string]string{"toolu_done": kv.RunCompleted, "toolu_nested": kv.RunRunning, "toolu_waiting": kv.RunPending, "toolu_refused": kv.RunRefused} {
		if r, err := s.GetRun(ctx, "default", id); err != nil || r.Status != status {
			t.Errorf("run %s: %q, %v; want %s", id, r.Status, err, status)
		}
	}
	if r, err := s.GetRun(ctx, "main", clawOps); err != nil || r.ChildScope != "ops" || r.ChildID != clawOps {
		t.Errorf("OpenClaw's cross-scope run: %+v, %v", r, err)
	}
	if facts, err := s.Facts(ctx, "default", ccRoot); err != nil || !slices.ContainsFunc(facts, func(f kv.Fact) bool {
		return f.Kind == kv.FactConstraint && f.Text == "Never touch vendor/."
	}) {
		t.Errorf("facts of %s: %+v, %v; want the constraint it stated", ccRoot, facts, err)
	}
	if cps, err := s.Checkpoints(ctx, "default", ccRoot, 0); err != nil || len(cps) != 3 || cps[0].Trigger != kv.TriggerPreCompaction || cps[0].Digest.Summary != "Lexer ported; the parser is next." {
		t.Errorf("checkpoints of %s: %+v, %v", ccRoot, cps, err)
	}
	if blocks, err := s.Blocks(ctx, "default", ccChild, 0); err != nil || len(blocks) != 1 || blocks[0].ParentID != ccRoot || !strings.HasPrefix(blocks[0].Text, "## Inherited from Parent Session") {
		t.Errorf("blocks of %s: %+v, %v", ccChild, blocks, err)
	}

	for _, c := range []struct {
		scope, query string
		want         []string
	}{
		{"default", "zygomorphic", []string{ccRoot + "#1"}},
		{"default", "quasicrystal", []string{ocRoot + "#1"}},
		{"ops", "palimpsest", []string{clawOps + "#0"}},
		{"main", "palimpsest", nil}, // scopes never leak
	} {
		if got := searchHits(t, s, c.scope, c.query); !slices.Equal(got, c.want) {
			t.Errorf("search %q in %s: %v, want %v", c.query, c.scope, got, c.want)
		}
	}

	// The upgraded store goes on: a new turn is stored after the old ones and found.
	a, err := s.AppendTranscript(ctx, "default", ccRoot, []kv.Turn{{SourceID: "after-upgrade", Role: "user", Text: "After the upgrade: HELIOTROPE."}}, kv.TranscriptPos{})
	if err != nil || len(a.Turns) != 1 || a.Turns[0].Seq != uint64(len(turns)) {
		t.Fatalf("a turn after the upgrade: %+v, %v; want Seq %d", a, err, len(turns))
	}
	if got := searchHits(t, s, "default", "heliotrope"); !slices.Equal(got, []string{fmt.Sprintf("%s#%d", ccRoot, len(turns))}) {
		t.Errorf("search for the turn written after the upgrade: %v", got)
	}
}

// searchHits runs query over scope's index as heirloom's search does and returns its hits as
// session#seq, sorted.
func searchHits(t *testing.T, s *kv.Store, scope, query string) []string {
	t.Helper()
	q, err := search.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.IndexReader(t.Context(), scope)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	page, err := search.Run(t.Context(), indexSource{x}, q, search.Options{Limit: search.MaxLimit})
	if err != nil {
		t.Fatalf("search %q in %s: %v", query, scope, err)
	}
	var out []string
	for _, h := range page.Hits {
		out = append(out, fmt.Sprintf("%s#%d", h.Doc.Session, h.Doc.Seq))
	}
	slices.Sort(out)
	return out
}

// indexSource is a kv.IndexReader as package search reads it (engine has the same).
type indexSource struct{ x *kv.IndexReader }

func (s indexSource) Stats(ctx context.Context) (search.Stats, error) {
	f, err := s.x.Figures(ctx)
	return search.Stats{Docs: f.Docs, Terms: f.Terms, Stamp: f.Stamp}, err
}

func (s indexSource) Postings(ctx context.Context, term string, prefix bool, fn func(search.Posting) error) error {
	return s.x.Postings(ctx, term, prefix, func(p kv.Posting) error {
		return fn(search.Posting{Doc: search.Doc{Session: p.Session, Seq: p.Seq}, Term: p.Term, TF: p.TF, Len: p.Len, Role: p.Role, At: p.At, Stamp: p.Stamp})
	})
}

func (s indexSource) Text(ctx context.Context, d search.Doc) (string, error) {
	t, err := s.x.Turn(ctx, d.Session, d.Seq)
	if err != nil {
		return "", err
	}
	return kv.IndexedText(&t), nil
}

// dumpStore writes out what the public API reads from s, scope by scope, in a fixed order and
// form: every session (each field), its children, turns, facts, checkpoints and blocks, then
// every run.
func dumpStore(t *testing.T, s *kv.Store) string {
	t.Helper()
	ctx := t.Context()
	var b strings.Builder
	ts := func(at time.Time) string {
		if at.IsZero() {
			return "-"
		}
		return at.UTC().Format(time.RFC3339Nano)
	}
	for _, scope := range upgradeScopes {
		fmt.Fprintf(&b, "== scope %s\n", scope)
		list, err := s.ListSessions(ctx, scope, kv.SessionFilter{})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(list, func(x, y kv.Session) int { return strings.Compare(x.ID, y.ID) })
		for _, ss := range list {
			fmt.Fprintf(&b, "session %s\n  harness=%s native=%s parent=%s parent_scope=%s inferred=%v depth=%d\n", ss.ID, ss.Harness, ss.NativeID, ss.ParentID, ss.ParentScope, ss.ParentInferred, ss.Depth)
			fmt.Fprintf(&b, "  project=%s norm=%s title=%q objective=%q agent_type=%s status=%s\n", ss.Project, ss.ProjectNorm, ss.Title, ss.Objective, ss.AgentType, ss.Status)
			fmt.Fprintf(&b, "  created=%s updated=%s transcript=%s@%d#%s turns=%d prompts=%d files=%q\n", ts(ss.CreatedAt), ts(ss.UpdatedAt), ss.Transcript.Path, ss.Transcript.Offset, ss.Transcript.Ident, ss.TurnCount, ss.Prompts, ss.Files)
			fmt.Fprintf(&b, "  compactions=%d compacted=%s reinforced=%d compaction_checkpoint=%s decisions=%q constraints=%q\n", ss.Compactions, ts(ss.CompactedAt), ss.ReinforcedEpoch, ss.CompactionCheckpoint, ss.Decisions, ss.Constraints)
			fmt.Fprintf(&b, "  last_checkpoint=%d@%s first_inject=%v fresh_objective=%v reset_seq=%d\n", ss.LastCheckpointPrompts, ts(ss.LastCheckpointAt), ss.FirstInjectDone, ss.FreshObjective, ss.ResetSeq)
			kids, err := s.Children(ctx, scope, ss.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range kids {
				fmt.Fprintf(&b, "  child %s/%s\n", k.Scope, k.ID)
			}
			turns, err := s.Turns(ctx, scope, ss.ID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range turns {
				fmt.Fprintf(&b, "  turn %d %s src=%s at=%s tool=%s files=%q unindexed=%v %q\n", tr.Seq, tr.Role, tr.SourceID, ts(tr.At), tr.Tool, tr.Files, tr.Unindexed, tr.Text)
			}
			facts, err := s.Facts(ctx, scope, ss.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range facts {
				fmt.Fprintf(&b, "  fact %s seq=%d role=%s replaces=%q replaced=%v@%d %q\n", f.Kind, f.Seq, f.Role, f.Replaces, f.Replaced, f.ReplacedAt, f.Text)
			}
			cps, err := s.Checkpoints(ctx, scope, ss.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cps {
				d := c.Digest
				fmt.Fprintf(&b, "  checkpoint %s trigger=%s harness=%s project=%s norm=%s epoch=%d prompts=%d turn_seq=%d created=%s\n", c.ID, c.Trigger, c.Harness, c.Project, c.ProjectNorm, c.Epoch, c.Prompts, c.TurnSeq, ts(c.CreatedAt))
				fmt.Fprintf(&b, "    objective=%q summary=%q next=%q prompts=%q files=%q last_assistant=%q\n", d.Objective, d.Summary, d.NextSteps, d.Prompts, d.Files, d.LastAssistant)
				fmt.Fprintf(&b, "    decisions=%v constraints=%v open=%+v finished=%+v\n", d.Decisions, d.Constraints, d.OpenRuns, d.FinishedRuns)
			}
			blocks, err := s.Blocks(ctx, scope, ss.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, bl := range blocks {
				fmt.Fprintf(&b, "  block at=%s via=%s harness=%s headings=%q chars=%d parent=%s parent_scope=%s provisional=%v cut=%q %q\n", ts(bl.At), bl.Via, bl.Harness, bl.Headings, bl.Chars, bl.ParentID, bl.ParentScope, bl.Provisional, bl.Cut, bl.Text)
			}
		}
		runs, err := s.ListRuns(ctx, scope, kv.RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(runs, func(x, y kv.Run) int { return strings.Compare(x.ID, y.ID) })
		for _, r := range runs {
			fmt.Fprintf(&b, "run %s harness=%s root=%s parent=%s child=%s child_scope=%s provisional=%v\n", r.ID, r.Harness, r.RootID, r.ParentID, r.ChildID, r.ChildScope, r.Provisional)
			fmt.Fprintf(&b, "  description=%q prompt=%q type=%s depth=%d status=%s end=%s reason=%q\n", r.Description, r.Prompt, r.Type, r.Depth, r.Status, r.EndReason, r.Reason)
			fmt.Fprintf(&b, "  result=%q chars=%d swept=%v@%s condensation=%d summary=%q turns=%d tokens=%d duration_ms=%d\n", r.Result, r.ResultChars, r.Swept, ts(r.SweptAt), r.Condensation, r.Summary, r.Turns, r.Tokens, r.DurationMs)
			fmt.Fprintf(&b, "  created=%s started=%s ended=%s\n", ts(r.CreatedAt), ts(r.StartedAt), ts(r.EndedAt))
		}
	}
	return b.String()
}

// lineDiff lists the lines of want missing from got (-) and those of got not in want (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}
