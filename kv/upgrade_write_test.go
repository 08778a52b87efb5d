package kv_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

// The generator of the upgrade fixtures (see upgrade_test.go) and their archives.

// TestUpgrade_WriteFixture writes this release's store into testdata/upgrade (see upgrade_test.go), with
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
