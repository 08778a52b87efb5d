package kv_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
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

// TestUpgrade_WriteFixture writes this release's store into testdata/upgrade (see above), with
// HEIRLOOM_WRITE_UPGRADE_FIXTURE set; it never replaces a fixture that exists.
func TestUpgrade_WriteFixture(t *testing.T) {
	if os.Getenv("HEIRLOOM_WRITE_UPGRADE_FIXTURE") == "" {
		t.Skip("set HEIRLOOM_WRITE_UPGRADE_FIXTURE=1 to write this release's upgrade fixture")
	}
	name := fixtureName(kv.SchemaVersion, kv.PebbleFormatMajorVersion)
	archive := filepath.Join(upgradeDir, name+".tar.gz")
	if _, err := os.Stat(archive); err == nil {
		t.Fatalf("%s exists: a released fixture is never replaced (delete it first only if this version was never released)", archive)
	}
	dir := t.TempDir()
	writeFixtureStore(t, dir)
	if err := os.MkdirAll(upgradeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	pack(t, dir, archive) // as the release left it: opening it replays the log into sstables
	// The dump is read from the archive, as TestUpgrade_Fixtures reads it.
	copied := t.TempDir()
	unpack(t, archive, copied)
	s := openUpgradeStore(t, copied, nil)
	dump := dumpStore(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(upgradeDir, name+".want"), []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(archive)
	t.Logf("wrote %s (%d bytes) and %s.want", archive, fi.Size(), name)
}

// writeFixtureStore writes the fixture's content into a new store at dir through the public
// API, as heirloom's engine stores it, with a clock that makes every stamp the same at every
// run. The first part is flushed to sstables; the rest stays in the write-ahead log, as a
// store a release left behind holds both.
func writeFixtureStore(t *testing.T, dir string) {
	t.Helper()
	base := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	tick := 0 // the store's stamps: a second apart, after every event the content dates
	now := func() time.Time { tick++; return base.Add(time.Hour + time.Duration(tick)*time.Second) }
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
	s := openUpgradeStore(t, dir, now)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	put := func(sess kv.Session) { t.Helper(); must(s.PutSession(ctx, sess)) }
	turns := func(scope, id string, pos kv.TranscriptPos, tt ...kv.Turn) {
		t.Helper()
		_, err := s.AppendTranscript(ctx, scope, id, tt, pos)
		must(err)
	}
	upsert := func(scope, id string, tt ...kv.Turn) {
		t.Helper()
		_, _, err := s.UpsertTurns(ctx, scope, id, tt)
		must(err)
	}
	run := func(r kv.Run) {
		t.Helper()
		_, err := s.UpdateRun(ctx, r.Scope, r.ID, func(stored *kv.Run, _ bool) error { *stored = r; return nil })
		must(err)
	}
	checkpoint := func(c kv.Checkpoint) kv.Checkpoint {
		t.Helper()
		c, err := s.PutCheckpoint(ctx, c)
		must(err)
		return c
	}
	const ccProject = "/home/dev/src/parser"
	const ccTranscript = "/home/dev/.claude/projects/-home-dev-src-parser/" + ccRoot + ".jsonl"

	// Claude Code: a session, its sub-agent and that one's sub-agent.
	put(kv.Session{Scope: "default", ID: ccRoot, Harness: "claude-code", NativeID: ccRoot, Project: ccProject, ProjectNorm: ccProject,
		Objective: "Port the parser to Go.", Status: kv.StatusActive, CreatedAt: at(0),
		Decisions: []string{"errors are wrapped with %w"}, Constraints: []string{"keep the public API stable"}})
	turns("default", ccRoot, kv.TranscriptPos{Path: ccTranscript, Offset: 2048, Ident: "2049:131077"},
		kv.Turn{SourceID: "u1", Role: "user", Text: "Port the parser to Go. Never touch vendor/.", At: at(1)},
		kv.Turn{SourceID: "a1", Role: "assistant", Text: "Reading parse.c first: its tokenizer is ZYGOMORPHIC in places.", Tool: "Read", Files: []string{ccProject + "/parse.c"}, At: at(2)},
		kv.Turn{SourceID: "t1", Role: "tool", Text: "The file " + ccProject + "/lexer.go has been updated.", Tool: "Edit", Files: []string{ccProject + "/lexer.go"}, At: at(3)},
		kv.Turn{SourceID: "u2", Role: "user", Text: "We'll use the streaming parser from now on.", At: at(4)},
	)
	put(kv.Session{Scope: "default", ID: ccChild, Harness: "claude-code", NativeID: "a02df2ef9ee472336", ParentID: ccRoot, Depth: 1,
		Project: ccProject, ProjectNorm: ccProject, Title: "find callers", Objective: "Find every caller of parse().", AgentType: "Explore",
		Status: kv.StatusEnded, CreatedAt: at(5),
		Transcript: kv.TranscriptPos{Path: "/home/dev/.claude/projects/-home-dev-src-parser/" + ccRoot + "/subagents/agent-a02df2ef9ee472336.jsonl"}})
	turns("default", ccChild, kv.TranscriptPos{Path: "/home/dev/.claude/projects/-home-dev-src-parser/" + ccRoot + "/subagents/agent-a02df2ef9ee472336.jsonl", Offset: 512},
		kv.Turn{SourceID: "c1", Role: "user", Text: "Find every caller of parse().", At: at(6)},
		kv.Turn{SourceID: "c2", Role: "assistant", Text: "Three callers: a.go, b.go, c.go.", At: at(8)})
	put(kv.Session{Scope: "default", ID: ccGrand, Harness: "claude-code", NativeID: "a73685d8901dc53f2", ParentID: ccChild, Depth: 2,
		Project: ccProject, ProjectNorm: ccProject, Title: "check c.go", Objective: "Check c.go's caller for nil inputs.", AgentType: "general-purpose",
		Status: kv.StatusActive, CreatedAt: at(7)})
	turns("default", ccGrand, kv.TranscriptPos{},
		kv.Turn{SourceID: "g1", Role: "user", Text: "Check c.go's caller for nil inputs.", At: at(7)})

	// Its runs: finished, running (paired by a guess), pending, refused, and one whose full
	// result was swept.
	run(kv.Run{Scope: "default", ID: "toolu_done", Harness: "claude-code", RootID: ccRoot, ParentID: ccRoot, ChildID: ccChild,
		Description: "find callers", Prompt: "Find every caller of parse().", Type: "Explore", Depth: 1,
		Status: kv.RunCompleted, EndReason: kv.EndCompleted, Result: "Three callers: a.go, b.go, c.go.", Turns: 2, Tokens: 1234, DurationMs: 5678,
		CreatedAt: at(5), StartedAt: at(5), EndedAt: at(9)})
	run(kv.Run{Scope: "default", ID: "toolu_nested", Harness: "claude-code", RootID: ccRoot, ParentID: ccChild, ChildID: ccGrand, Provisional: true,
		Description: "check c.go", Prompt: "Check c.go's caller for nil inputs.", Type: "general-purpose", Depth: 2,
		Status: kv.RunRunning, CreatedAt: at(7), StartedAt: at(7)})
	run(kv.Run{Scope: "default", ID: "toolu_waiting", Harness: "claude-code", RootID: ccRoot, ParentID: ccRoot,
		Description: "plan the emitter", Prompt: "Plan the emitter.", Type: "Plan", Depth: 1, Status: kv.RunPending, CreatedAt: at(10)})
	run(kv.Run{Scope: "default", ID: "toolu_refused", Harness: "claude-code", RootID: ccRoot, ParentID: ccGrand,
		Description: "go deeper", Prompt: "Look at every nil check.", Type: "Explore", Depth: 3,
		Status: kv.RunRefused, Reason: "depth 3 exceeds spawn.max_depth 2", CreatedAt: at(11)})
	run(kv.Run{Scope: "default", ID: "toolu_swept", Harness: "claude-code", RootID: ccRoot, ParentID: ccRoot,
		Description: "read the grammar", Prompt: "Summarise grammar.y.", Type: "Explore", Depth: 1,
		Status: kv.RunCompleted, EndReason: kv.EndCompleted, Result: "[head] … 8,000 characters omitted … [tail]", ResultChars: 9000,
		Swept: true, SweptAt: at(40), Condensation: 3, CreatedAt: at(2), StartedAt: at(2), EndedAt: at(3)})

	// Its checkpoints: periodic, at the spawn, before the compaction; then the compaction.
	checkpoint(kv.Checkpoint{Scope: "default", SessionID: ccRoot, Harness: "claude-code", Project: ccProject, ProjectNorm: ccProject,
		Trigger: kv.TriggerPeriodic, Prompts: 1, TurnSeq: 2, CreatedAt: at(3),
		Digest: kv.Digest{Objective: "Port the parser to Go.", Prompts: []string{"Port the parser to Go. Never touch vendor/."},
			Constraints: []kv.Statement{{Text: "Never touch vendor/.", Inferred: true}}, Files: []string{ccProject + "/parse.c"},
			LastAssistant: "Reading parse.c first"}})
	checkpoint(kv.Checkpoint{Scope: "default", SessionID: ccRoot, Harness: "claude-code", Project: ccProject, ProjectNorm: ccProject,
		Trigger: kv.TriggerSpawn, Prompts: 2, TurnSeq: 4, CreatedAt: at(5),
		Digest: kv.Digest{Objective: "Port the parser to Go.", Decisions: []kv.Statement{{Text: "We'll use the streaming parser from now on.", Inferred: true}},
			OpenRuns: []kv.RunDigest{{RunID: "toolu_done", Description: "find callers", Status: kv.RunPending}}}})
	pre := checkpoint(kv.Checkpoint{Scope: "default", SessionID: ccRoot, Harness: "claude-code", Project: ccProject, ProjectNorm: ccProject,
		Trigger: kv.TriggerPreCompaction, Prompts: 2, TurnSeq: 4, CreatedAt: at(49),
		Digest: kv.Digest{Objective: "Port the parser to Go.", Summary: "Lexer ported; the parser is next.", NextSteps: []string{"port parse.c"},
			FinishedRuns: []kv.RunDigest{{RunID: "toolu_done", ChildID: ccChild, Description: "find callers", Status: kv.RunCompleted, Result: "Three callers: a.go, b.go, c.go."}}}})
	_, err := s.UpdateSession(ctx, "default", ccRoot, func(sess *kv.Session, _ bool) error {
		sess.Compactions, sess.CompactedAt, sess.ReinforcedEpoch, sess.CompactionCheckpoint = 1, at(50), 1, pre.ID
		sess.LastCheckpointPrompts, sess.LastCheckpointAt = 2, at(49)
		return nil
	})
	must(err)

	// OpenCode: a session and its task child, streamed; a part grows and is stored again.
	put(kv.Session{Scope: "default", ID: ocRoot, Harness: "opencode", NativeID: ocRoot, Project: "/home/dev/src/site", ProjectNorm: "/home/dev/src/site",
		Title: "site refactor", Objective: "Refactor the site generator.", Status: kv.StatusActive, CreatedAt: at(20), FirstInjectDone: true})
	upsert("default", ocRoot,
		kv.Turn{SourceID: "prt_201167b26001", Role: "user", Text: "Refactor the site generator."},
		kv.Turn{SourceID: "prt_201168128001", Role: "assistant", Text: "Looking at", At: at(21)})
	upsert("default", ocRoot, kv.Turn{SourceID: "prt_201168128001", Role: "assistant", Text: "Looking at build.ts first: the QUASICRYSTAL theme breaks links.", At: at(21)})
	put(kv.Session{Scope: "default", ID: ocChild, Harness: "opencode", NativeID: ocChild, ParentID: ocRoot, Depth: 1,
		Project: "/home/dev/src/site", ProjectNorm: "/home/dev/src/site", Title: "find dead links (@general subagent)", Objective: "Find the dead links.",
		Status: kv.StatusEnded, CreatedAt: at(22)})
	upsert("default", ocChild, kv.Turn{SourceID: "prt_201169011001", Role: "user", Text: "Find the dead links."},
		kv.Turn{SourceID: "prt_20116908c001", Role: "tool", Text: "grep -r href\nindex.md: /old", Tool: "bash", At: at(23)})
	run(kv.Run{Scope: "default", ID: "call_1", Harness: "opencode", RootID: ocRoot, ParentID: ocRoot, ChildID: ocChild,
		Description: "find dead links", Prompt: "Find the dead links.", Type: "general", Depth: 1,
		Status: kv.RunCompleted, EndReason: kv.EndCompleted, Result: "Two dead links: /old and /older.", CreatedAt: at(22), StartedAt: at(22), EndedAt: at(24)})
	checkpoint(kv.Checkpoint{Scope: "default", SessionID: ocRoot, Harness: "opencode", Project: "/home/dev/src/site", ProjectNorm: "/home/dev/src/site",
		Trigger: kv.TriggerAgent, Prompts: 1, TurnSeq: 2, CreatedAt: at(25),
		Digest: kv.Digest{Objective: "Refactor the site generator.", Summary: "Dead links found.", NextSteps: []string{"fix /old", "fix /older"}}})

	if err := kv.Flush(s); err != nil {
		t.Fatal(err)
	}

	// OpenClaw: a session in scope main, and its sub-agent spawned under agent ops.
	put(kv.Session{Scope: "main", ID: clawMain, Harness: "openclaw", NativeID: clawMain, Project: "/home/dev/work", ProjectNorm: "/home/dev/work",
		Title: "release", Objective: "Plan the release.", Status: kv.StatusActive, CreatedAt: at(30), FirstInjectDone: true})
	upsert("main", clawMain,
		kv.Turn{SourceID: "m-1", Role: "user", Text: "Plan the release. Never publish on Fridays.", At: at(30)},
		kv.Turn{SourceID: "m-2", Role: "assistant", Text: "Delegating the notes to ops.", At: at(31)})
	put(kv.Session{Scope: "ops", ID: clawOps, Harness: "openclaw", NativeID: clawOps, ParentID: clawMain, ParentScope: "main", Depth: 1,
		Project: "/home/dev/work", ProjectNorm: "/home/dev/work", Title: "release notes", Objective: "Write the release notes.", AgentType: "ops",
		Status: kv.StatusActive, CreatedAt: at(32)})
	upsert("ops", clawOps, kv.Turn{SourceID: "o-1", Role: "user", Text: "Write the release notes. Mark them PALIMPSEST.", At: at(32)})
	run(kv.Run{Scope: "main", ID: clawOps, Harness: "openclaw", RootID: clawMain, ParentID: clawMain, ChildID: clawOps, ChildScope: "ops",
		Description: "release notes", Prompt: "Write the release notes.", Depth: 1, Status: kv.RunRunning, CreatedAt: at(32), StartedAt: at(32)})

	// The compaction's summary, and the blocks of context heirloom delivered.
	turns("default", ccRoot, kv.TranscriptPos{Path: ccTranscript, Offset: 4096, Ident: "2049:131077"},
		kv.Turn{SourceID: "s1", Role: "system", Text: "This session is being continued from a previous conversation: the lexer is ported.", At: at(50)})
	inherited := "## Inherited from Parent Session\nParent: Port the parser to Go.\nConstraints: Never touch vendor/."
	must(s.RecordBlock(ctx, kv.Block{Scope: "default", SessionID: ccChild, At: at(5), Via: "subagent_start", Harness: "claude-code",
		Headings: []string{"## Inherited from Parent Session"}, Chars: len(inherited), ParentID: ccRoot, Text: inherited}))
	reinforced := "[Objective Reinforcement]\nObjective: Port the parser to Go.\nSub-agents finished: find callers."
	must(s.RecordBlock(ctx, kv.Block{Scope: "default", SessionID: ccRoot, At: at(50), Via: "session_start", Harness: "claude-code",
		Headings: []string{"[Objective Reinforcement]"}, Chars: len(reinforced), Cut: "(cut to fit: 1 finished run)", Text: reinforced}))
	crossScope := "## Inherited from Parent Session\nParent: Plan the release."
	must(s.RecordBlock(ctx, kv.Block{Scope: "ops", SessionID: clawOps, At: at(32), Via: "inject", Harness: "openclaw",
		Headings: []string{"## Inherited from Parent Session"}, Chars: len(crossScope), ParentID: clawMain, ParentScope: "main", Provisional: true, Text: crossScope}))

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
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

// pack writes the Pebble directory of the closed store at dir to archive as a gzipped tar, in
// name order with fixed stamps (the lock file is not kept: Open makes it).
func pack(t *testing.T, dir, archive string) {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	err = filepath.WalkDir(filepath.Join(dir, "pebble"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), Format: tar.FormatPAX}
		if d.IsDir() {
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o700
			return tw.WriteHeader(hdr)
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o600, int64(len(body))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(body)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(archive, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// unpack extracts archive, a fixture pack wrote, into dir.
func unpack(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.FromSlash(strings.TrimSuffix(hdr.Name, "/"))
		if !filepath.IsLocal(name) {
			t.Fatalf("%s: entry %q outside the store", archive, hdr.Name)
		}
		path := filepath.Join(dir, name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o700)
		case tar.TypeReg:
			var body []byte
			if body, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(path, body, 0o600)
			}
		default:
			t.Fatalf("%s: entry %q of type %c", archive, hdr.Name, hdr.Typeflag)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
