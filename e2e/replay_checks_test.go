package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/heirloom-dev/heirloom/adapters/claudecode"
)

// The checks a replay's outcome goes through: the store against replayWant and against what the
// hook stream itself says, the turns against the transcript, the replies against the contract
// and the golden files.

// checkKnown compares st with replayWant for recordings listed there.
func checkKnown(t *testing.T, name string, st storeState) {
	t.Helper()
	want, ok := replayWant[name]
	if !ok {
		t.Logf("%s is not in replayWant: checked against its hook stream only", name)
		return
	}
	var wantIDs []string
	for id := range want.sessions {
		wantIDs = append(wantIDs, id)
	}
	slices.Sort(wantIDs)
	if got := st.sessionIDs(); !slices.Equal(got, wantIDs) {
		t.Errorf("sessions: got %q, want %q", got, wantIDs)
	}
	for id, parent := range want.sessions {
		if s, ok := st.session(id); ok && s.ParentID != parent {
			t.Errorf("session %s: parent %q, want %q", id, s.ParentID, parent)
		}
	}
	if len(st.Runs) != len(want.runs) {
		t.Errorf("got %d runs, want %d", len(st.Runs), len(want.runs))
	}
	for id, child := range want.runs {
		r, ok := st.run(id)
		if !ok {
			t.Errorf("run %s: not stored", id)
			continue
		}
		if r.ChildID != child {
			t.Errorf("run %s (%s %q) paired with %q, want %q", id, r.Type, r.Description, r.ChildID, child)
		}
	}
}

// checkAgainstHooks checks st against what the hook stream calls itself say (and, for pairing,
// what the recorded meta.json files say): every session, run and lineage link heirloom must have
// derived, field by field, and nothing else.
func checkAgainstHooks(t *testing.T, calls []hookCall, st storeState) {
	t.Helper()
	type wantRun struct {
		id, root, parent, child string
		in                      spawnInput
		result                  *spawnResponse
	}
	var (
		objective  = map[string]string{} // top-level session → its first prompt
		lastEvent  = map[string]string{} // top-level session → its last event
		runs       []*wantRun
		runByID    = map[string]*wantRun{}
		started    = map[string]string{} // child session ID → agent_type at SubagentStart
		stopped    = map[string]bool{}   // child session ID → SubagentStop seen
		compaction = map[string]bool{}   // the compaction agent's would-be session IDs
		roots      []string
	)
	for _, c := range calls {
		sid := c.p.SessionID
		if _, ok := lastEvent[sid]; !ok {
			roots = append(roots, sid)
		}
		lastEvent[sid] = c.Event
		switch {
		case c.Event == "UserPromptSubmit":
			if _, ok := objective[sid]; !ok {
				objective[sid] = c.p.Prompt
			}
		case c.Event == "PreToolUse" && c.isSpawn():
			r := &wantRun{id: c.p.ToolUseID, root: sid, parent: sid, in: c.spawn(t)}
			if c.p.AgentID != "" {
				r.parent = sid + ":" + c.p.AgentID
			}
			if _, dup := runByID[r.id]; !dup {
				runs = append(runs, r)
				runByID[r.id] = r
			}
		case c.Event == "PostToolUse" && c.isSpawn():
			res := c.spawnResult(t)
			if r := runByID[c.p.ToolUseID]; r != nil {
				r.result = &res
				r.child = sid + ":" + res.AgentID
			}
		case c.Event == "SubagentStart" && c.p.AgentType != "":
			started[sid+":"+c.p.AgentID] = c.p.AgentType
			// Claude Code writes which spawn started the sub-agent into its meta.json.
			if meta := readMeta(t, c.p.TranscriptPath, c.p.AgentID); meta.ToolUseID != "" {
				if r := runByID[meta.ToolUseID]; r != nil && r.child == "" {
					r.child = sid + ":" + c.p.AgentID
				}
			}
		case c.Event == "SubagentStop" && c.p.AgentType == "":
			compaction[sid+":"+c.p.AgentID] = true
		case c.Event == "SubagentStop":
			stopped[sid+":"+c.p.AgentID] = true
		}
	}

	wantIDs := slices.Clone(roots)
	for id := range started {
		wantIDs = append(wantIDs, id)
	}
	slices.Sort(wantIDs)
	if got := st.sessionIDs(); !slices.Equal(got, wantIDs) {
		t.Errorf("sessions: got %q, want %q (the top-level sessions and every started sub-agent)", got, wantIDs)
	}
	depth := map[string]int{}
	for _, id := range roots {
		depth[id] = 0
		s, ok := st.session(id)
		if !ok {
			continue
		}
		if s.ParentID != "" || s.Depth != 0 || s.Harness != claudecode.Harness || s.NativeID != id {
			t.Errorf("top-level session %s: parent %q depth %d harness %q native id %q, want \"\", 0, %q, %q", id, s.ParentID, s.Depth, s.Harness, s.NativeID, claudecode.Harness, id)
		}
		if want, ok := objective[id]; ok && s.Objective != want {
			t.Errorf("top-level session %s: objective %q, want its first prompt %q", id, s.Objective, want)
		}
		if lastEvent[id] == "SessionEnd" && s.Status != "ended" {
			t.Errorf("top-level session %s: status %q after SessionEnd, want ended", id, s.Status)
		}
	}

	if len(st.Runs) != len(runs) {
		t.Errorf("got %d runs, want %d (one per PreToolUse(Agent))", len(st.Runs), len(runs))
	}
	// Runs in spawn order, so a child's parent (a sub-agent) has its depth known first.
	for _, w := range runs {
		r, ok := st.run(w.id)
		if !ok {
			t.Errorf("run %s: not stored", w.id)
			continue
		}
		if r.RootID != w.root || r.ParentID != w.parent {
			t.Errorf("run %s: root %q parent %q, want %q %q", w.id, r.RootID, r.ParentID, w.root, w.parent)
		}
		if r.Description != w.in.Description || r.Prompt != w.in.Prompt || r.Type != w.in.SubagentType {
			t.Errorf("run %s: description %q prompt %q type %q, want %q %q %q", w.id, r.Description, r.Prompt, r.Type, w.in.Description, w.in.Prompt, w.in.SubagentType)
		}
		if w.child != "" && r.ChildID != w.child {
			t.Errorf("run %s (%s %q): child %q, want %q", w.id, w.in.SubagentType, w.in.Description, r.ChildID, w.child)
		}
		if res := w.result; res != nil {
			if r.Provisional {
				t.Errorf("run %s: still provisional after PostToolUse named agent %s", w.id, res.AgentID)
			}
			if r.Status != res.Status || r.Result != res.text() || r.Tokens != res.TotalTokens || r.DurationMs != res.TotalDurationMs {
				t.Errorf("run %s: status %q result %q tokens %d duration %dms, want %q %q %d %dms",
					w.id, r.Status, r.Result, r.Tokens, r.DurationMs, res.Status, res.text(), res.TotalTokens, res.TotalDurationMs)
			}
		}
		if w.child == "" {
			continue
		}
		c, ok := st.session(w.child)
		if !ok {
			t.Errorf("run %s: child session %s not stored", w.id, w.child)
			continue
		}
		pd, known := depth[w.parent]
		if !known {
			t.Errorf("run %s: issuing session %s is not a known session", w.id, w.parent)
		}
		depth[w.child] = pd + 1
		_, agentID, _ := strings.Cut(strings.TrimPrefix(w.child, w.root), ":")
		switch {
		case c.ParentID != w.parent || c.Depth != pd+1 || c.ParentInferred:
			t.Errorf("sub-agent %s: parent %q depth %d inferred %v, want %q %d false", c.ID, c.ParentID, c.Depth, c.ParentInferred, w.parent, pd+1)
		case c.Title != w.in.Description || c.Objective != w.in.Prompt || c.AgentType != started[w.child]:
			t.Errorf("sub-agent %s: title %q objective %q type %q, want the spawn's %q %q %q", c.ID, c.Title, c.Objective, c.AgentType, w.in.Description, w.in.Prompt, started[w.child])
		case c.Harness != claudecode.Harness || c.NativeID != agentID:
			t.Errorf("sub-agent %s: harness %q native id %q, want %q %q", c.ID, c.Harness, c.NativeID, claudecode.Harness, agentID)
		}
		if stopped[w.child] && c.Status != "ended" {
			t.Errorf("sub-agent %s: status %q after its SubagentStop, want ended", c.ID, c.Status)
		}
	}
	for id := range compaction {
		if _, ok := st.session(id); ok {
			t.Errorf("the compaction agent got a session %s; it is not a sub-agent", id)
		}
		for _, r := range st.Runs {
			if r.ChildID == id {
				t.Errorf("run %s paired with the compaction agent %s", r.ID, id)
			}
		}
	}
}

// readMeta reads the recorded meta.json of sub-agent agentID of the session whose transcript
// is at the recorded path transcriptPath; zero when none was recorded.
func readMeta(tb testing.TB, transcriptPath, agentID string) claudecode.SubagentMetaFile {
	tb.Helper()
	rel := relPath(transcriptPath)
	if rel == "" {
		return claudecode.SubagentMetaFile{}
	}
	path := filepath.Join(fixturesDir, "transcripts", filepath.FromSlash(strings.TrimSuffix(rel, ".jsonl")), "subagents", "agent-"+agentID+".meta.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return claudecode.SubagentMetaFile{}
	}
	var m claudecode.SubagentMetaFile
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return m
}

// checkIngested checks that each top-level session holds exactly the turns of its transcript
// as it stood at the end of the replay (all of it read, nothing twice), and that the stored read
// position is the end of that file.
func checkIngested(t *testing.T, rec recording, root *replayRoot, st storeState) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range rec.Calls {
		rel := relPath(c.p.TranscriptPath)
		if rel == "" || seen[c.p.SessionID] {
			continue
		}
		seen[c.p.SessionID] = true
		s, ok := st.session(c.p.SessionID)
		if !ok {
			continue // reported by the other checks
		}
		data, err := os.ReadFile(filepath.Join(root.projectDir(), filepath.FromSlash(rel)))
		if err != nil {
			t.Errorf("session %s: read its transcript: %v", s.ID, err)
			continue
		}
		turns, _ := claudecode.Adapter{}.ParseTranscript(data, true)
		var want, got []string
		for _, tu := range turns {
			want = append(want, tu.Role+" "+tu.ID)
		}
		for _, tu := range st.Turns[s.ID] {
			got = append(got, tu.Role+" "+tu.SourceID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("session %s: stored turns\n got %q\nwant %q (the transcript as of the last hook)", s.ID, got, want)
		}
		if s.Transcript.Offset != int64(len(data)) {
			t.Errorf("session %s: transcript read up to byte %d, want the whole file, %d bytes", s.ID, s.Transcript.Offset, len(data))
		}
		t.Logf("session %s: %d turns", s.ID, len(st.Turns[s.ID]))
	}
	for _, s := range st.Sessions {
		if s.ParentID != "" {
			t.Logf("sub-agent %s: %d turns", s.ID, len(st.Turns[s.ID]))
		}
	}
}

// checkReplies checks heirloom's answer to every call of the first pass: SubagentStart gets the
// inherited block, byte for byte as in its golden file; every other event of this issue gets {}.
func checkReplies(t *testing.T, name, transport string, replies []reply) {
	t.Helper()
	for _, r := range replies {
		c := r.call
		switch c.Event {
		case "SessionStart", "UserPromptSubmit":
			// Blocks for these come in a later issue.
			if !json.Valid(r.body) {
				t.Errorf("seq %d %s: reply is not JSON: %q", c.Seq, c.Event, r.body)
			}
		case "SubagentStart":
			checkInherited(t, c, r.body)
			golden := filepath.Join("testdata", "replay", fmt.Sprintf("%s.%d.SubagentStart.json", name, c.Seq))
			body := bytes.TrimSuffix(r.body, []byte("\n")) // the shim ends the reply with a newline
			if *update && transport == httpTransport.name {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, r.body, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Errorf("seq %d SubagentStart: %v (run with -update to create it)", c.Seq, err)
				continue
			}
			if !bytes.Equal(body, bytes.TrimSuffix(want, []byte("\n"))) || (transport == httpTransport.name && !bytes.Equal(r.body, want)) {
				t.Errorf("seq %d SubagentStart reply differs from %s\n got: %s\nwant: %s", c.Seq, golden, r.body, want)
			}
		default:
			if got := string(bytes.TrimSpace(r.body)); got != "{}" {
				t.Errorf("seq %d %s: reply %s, want {}", c.Seq, c.Event, got)
			}
		}
	}
}

// checkInherited checks the shape of a SubagentStart reply: Claude Code's reply object carrying
// the inherited block, within Claude Code's cap, with the parent's objective, a transcript tail,
// and nothing a hook injected into the parent read back.
func checkInherited(t *testing.T, c hookCall, body []byte) {
	t.Helper()
	var got struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &got); err != nil || json.Unmarshal(body, &keys) != nil || len(keys) != 1 {
		t.Errorf("seq %d SubagentStart: reply %s, want {\"hookSpecificOutput\":{…}} only (%v)", c.Seq, body, err)
		return
	}
	ctx := got.HookSpecificOutput.AdditionalContext
	if got.HookSpecificOutput.HookEventName != "SubagentStart" || !strings.HasPrefix(ctx, inheritedHeading+"\n") {
		t.Errorf("seq %d SubagentStart: event %q, context %.120q…; want SubagentStart and the inherited block", c.Seq, got.HookSpecificOutput.HookEventName, ctx)
		return
	}
	if n := len(utf16.Encode([]rune(ctx))); n > 10000 {
		t.Errorf("seq %d SubagentStart: context is %d UTF-16 units, over Claude Code's 10,000 cap", c.Seq, n)
	}
	if !strings.Contains(ctx, "### Recent transcript\n") {
		t.Errorf("seq %d SubagentStart: no transcript tail in the block:\n%s", c.Seq, ctx)
	}
	if strings.Contains(ctx, "PROBE-") {
		t.Errorf("seq %d SubagentStart: the block reads back what a hook injected into the parent (PROBE- marker):\n%s", c.Seq, ctx)
	}
}
