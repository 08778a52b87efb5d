package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/proxy"
)

var update = flag.Bool("update", false, "rewrite the golden SubagentStart replies in testdata/replay from the current output")

// inheritedHeading starts the block a sub-agent inherits (DESIGN §3).
const inheritedHeading = "## Inherited from Parent Session"

// replayWant is what each recording must leave in the store, written out by hand: the sessions
// with their parents, and which sub-agent session each spawn (run) ended up paired with.
// checkAgainstHooks derives the rest of the fields from the hook stream itself.
var replayWant = map[string]struct {
	sessions map[string]string // session ID → parent ID ("" for top-level)
	runs     map[string]string // run ID (tool_use_id) → child session ID
}{
	"spawn-one": {
		sessions: map[string]string{
			"f50b1ca6-1b5a-49ea-8f83-7a6785e3b132":                   "",
			"f50b1ca6-1b5a-49ea-8f83-7a6785e3b132:a1ba2876fa63b44e9": "f50b1ca6-1b5a-49ea-8f83-7a6785e3b132",
		},
		runs: map[string]string{"toolu_0374fe1f93f44481": "f50b1ca6-1b5a-49ea-8f83-7a6785e3b132:a1ba2876fa63b44e9"},
	},
	// Two parallel sub-agents of different types; the Explore one (spawned second) starts first.
	"spawn-two": {
		sessions: map[string]string{
			"49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7":                   "",
			"49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7:a02df2ef9ee472336": "49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7",
			"49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7:a73685d8901dc53f2": "49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7",
		},
		runs: map[string]string{
			"toolu_2af3e4b1742744f7": "49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7:a02df2ef9ee472336", // general-purpose, "child one"
			"toolu_6fbd338f1bd04240": "49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7:a73685d8901dc53f2", // Explore, "child two"
		},
	},
	// The compaction agent (ae6d15f8931a5616e, agent_type "") is no sub-agent: no session, no run.
	"compact-resumed": {
		sessions: map[string]string{"f50b1ca6-1b5a-49ea-8f83-7a6785e3b132": ""},
		runs:     map[string]string{},
	},
}

// transport delivers hook calls to a heirloom and reads back its store.
type transport struct {
	name string
	// open starts a heirloom that reads transcripts under roots and returns how to send it one
	// hook payload (returning the reply, as Claude Code would receive it) and how to read its
	// store once done. root is the replay root: serve's HOME, written back as recordedHome.
	open func(tb testing.TB, roots []string, root *replayRoot) (send func(testing.TB, []byte) []byte, state func(testing.TB) storeState)
}

// httpTransport posts each payload to POST /hooks/claude-code of an in-process proxy.Server, as
// an http hook does.
var httpTransport = transport{name: "HTTP", open: func(tb testing.TB, roots []string, root *replayRoot) (func(testing.TB, []byte) []byte, func(testing.TB) storeState) {
	srv := mustOpenServer(tb, func(s *proxy.Server) { s.Engine.Config.TranscriptRoots = roots })
	send := func(tb testing.TB, payload []byte) []byte {
		tb.Helper()
		resp, err := http.Post(srv.URL()+"/hooks/claude-code", "application/json", bytes.NewReader(payload))
		if err != nil {
			tb.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			tb.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			tb.Fatalf("hook endpoint: %s: %s", resp.Status, body)
		}
		return body
	}
	return send, func(tb testing.TB) storeState { return readState(tb, srv.Engine.Store, root) }
}}

// shimTransport runs the built `heirloom hook claude-code` for each payload, as a command hook
// does, against a running `heirloom serve` whose HOME is the replay root.
var shimTransport = transport{name: "Shim", open: func(tb testing.TB, roots []string, root *replayRoot) (func(testing.TB, []byte) []byte, func(testing.TB) storeState) {
	serve := startServe(tb, serveOptions{Home: root.Dir, TranscriptRoots: roots})
	send := func(tb testing.TB, payload []byte) []byte {
		tb.Helper()
		return runShim(tb, serve.URL, payload)
	}
	return send, func(tb testing.TB) storeState { return readState(tb, serve.Store(tb), root) }
}}

// reply is heirloom's answer to one recorded call, with the replay root written back as
// recordedHome.
type reply struct {
	call hookCall
	body []byte
}

// deliver replays rec through send, showing each call the transcripts as they stood when it
// was made (see Timeline), and returns the replies.
func deliver(tb testing.TB, rec recording, root *replayRoot, files transcriptLines, send func(testing.TB, []byte) []byte) []reply {
	tb.Helper()
	tl := rec.Timeline(tb, files)
	out := make([]reply, len(rec.Calls))
	for i, c := range rec.Calls {
		root.Materialize(tb, files, tl[i])
		out[i] = reply{call: c, body: root.Unroot(send(tb, root.Payload(c)))}
	}
	return out
}

// TestReplay replays every recorded Claude Code hook stream, in order and twice over, through
// the HTTP hook endpoint of an in-process server and through the real hook shim against a real
// `heirloom serve`, and checks what heirloom stored and answered.
func TestReplay(t *testing.T) {
	for _, name := range recordingNames(t) {
		t.Run(name, func(t *testing.T) {
			rec := loadRecording(t, name)
			states := map[string]storeState{}
			for _, tr := range []transport{httpTransport, shimTransport} {
				t.Run(tr.name, func(t *testing.T) {
					states[tr.name] = replayAndCheck(t, rec, tr)
				})
			}
			h, okH := states[httpTransport.name]
			s, okS := states[shimTransport.name]
			if okH && okS {
				if d := diffState("http", h, "shim", s); d != "" {
					t.Errorf("the shim path stored something else than the HTTP path:\n%s", d)
				}
			}
		})
	}
}

// replayAndCheck replays rec twice through tr and checks the store and the replies of the
// first pass; it returns the store's state.
func replayAndCheck(t *testing.T, rec recording, tr transport) storeState {
	root := newReplayRoot(t)
	files := transcriptLines{}
	send, state := tr.open(t, []string{root.TranscriptRoot()}, root)

	first := deliver(t, rec, root, files, send)
	var afterFirst storeState
	if tr.name == httpTransport.name { // the in-process store can be read while serving
		afterFirst = state(t)
	}
	// The second pass sees the files whole, as a duplicate delivery or a sidecar catching up
	// after a restart would. It must change nothing.
	second := deliver(t, rec, root, files, send)
	st := state(t)
	if tr.name == httpTransport.name {
		if d := diffState("after one pass", afterFirst, "after two", st); d != "" {
			t.Errorf("replaying the stream a second time changed the store:\n%s", d)
		}
	}
	st.checkTurns(t)
	checkKnown(t, rec.Name, st)
	checkAgainstHooks(t, rec.Calls, st)
	checkIngested(t, rec, root, st)
	checkReplies(t, rec.Name, tr.name, first)
	for _, r := range second {
		if !json.Valid(r.body) || !bytes.HasPrefix(bytes.TrimSpace(r.body), []byte("{")) {
			t.Errorf("second pass, seq %d %s: reply is not a JSON object: %q", r.call.Seq, r.call.Event, r.body)
		}
	}
	return st
}

// TestReplayParentObjective checks that each sub-agent's inherited block names its parent's
// objective: the top-level session's first prompt.
func TestReplayParentObjective(t *testing.T) {
	for _, name := range []string{"spawn-one", "spawn-two"} {
		t.Run(name, func(t *testing.T) {
			rec := loadRecording(t, name)
			root := newReplayRoot(t)
			send, _ := httpTransport.open(t, []string{root.TranscriptRoot()}, root)
			var prompt string
			for _, r := range deliver(t, rec, root, transcriptLines{}, send) {
				switch r.call.Event {
				case "UserPromptSubmit":
					prompt = r.call.p.Prompt
				case "SubagentStart":
					if ctx := additionalContext(t, r.body); !strings.Contains(ctx, "Objective: "+prompt) {
						t.Errorf("seq %d: block lacks the parent's objective %q:\n%s", r.call.Seq, prompt, ctx)
					}
				}
			}
		})
	}
}

// TestReplayTranscriptRoots checks that transcripts outside the configured roots are never read,
// also when a path under a root leads out of it through a symlink, and that everything the hooks
// themselves say is still recorded.
func TestReplayTranscriptRoots(t *testing.T) {
	rec := loadRecording(t, "spawn-one")
	parent := rec.Calls[0].p.SessionID
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, root *replayRoot) []string // returns the roots to configure
	}{
		{"OtherRoot", func(t *testing.T, root *replayRoot) []string { return []string{t.TempDir()} }},
		{"SymlinkOut", func(t *testing.T, root *replayRoot) []string {
			outside := t.TempDir()
			if err := os.Remove(root.projectDir()); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, root.projectDir()); err != nil {
				t.Skipf("symlinks unavailable: %v", err)
			}
			return []string{root.TranscriptRoot()}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := newReplayRoot(t)
			send, state := httpTransport.open(t, tt.setup(t, root), root)
			for _, r := range deliver(t, rec, root, transcriptLines{}, send) {
				if r.call.Event != "SubagentStart" {
					continue
				}
				if ctx := additionalContext(t, r.body); strings.Contains(ctx, "### Recent transcript") {
					t.Errorf("the block has a transcript tail read from outside the roots:\n%s", ctx)
				}
			}
			st := state(t)
			checkKnown(t, rec.Name, st)
			checkAgainstHooks(t, rec.Calls, st)
			s, ok := st.session(parent)
			if !ok {
				t.Fatalf("session %s not stored", parent)
			}
			if len(st.Turns[parent]) != 0 || s.Transcript.Offset != 0 {
				t.Errorf("session %s: %d turns, read up to byte %d; want nothing read from outside the roots", parent, len(st.Turns[parent]), s.Transcript.Offset)
			}
		})
	}
}

// TestReplayResumedCompaction replays spawn-one, then its resumption and compaction, into one
// store: the sub-agent of the first run stays the only one, and the transcript is read on from
// where the first run left it.
func TestReplayResumedCompaction(t *testing.T) {
	root := newReplayRoot(t)
	files := transcriptLines{}
	send, state := httpTransport.open(t, []string{root.TranscriptRoot()}, root)
	var all []hookCall
	for _, name := range []string{"spawn-one", "compact-resumed"} {
		rec := loadRecording(t, name)
		deliver(t, rec, root, files, send)
		all = append(all, rec.Calls...)
	}
	st := state(t)
	st.checkTurns(t)
	checkKnown(t, "spawn-one", st)
	checkAgainstHooks(t, all, st)
	checkIngested(t, recording{Name: "spawn-one+compact-resumed", Calls: all}, root, st)
}

// TestReplayNothingYet checks that a sub-agent whose parent has told heirloom nothing yet (no
// prompt, no transcript) gets the empty reply.
func TestReplayNothingYet(t *testing.T) {
	root := newReplayRoot(t)
	send, _ := httpTransport.open(t, []string{root.TranscriptRoot()}, root)
	transcript := filepath.Join(root.projectDir(), "11111111-2222-3333-4444-555555555555.jsonl")
	for _, payload := range []map[string]any{
		{"session_id": "11111111-2222-3333-4444-555555555555", "transcript_path": transcript, "cwd": root.Dir, "hook_event_name": "SessionStart", "source": "startup"},
		{"session_id": "11111111-2222-3333-4444-555555555555", "transcript_path": transcript, "cwd": root.Dir, "hook_event_name": "SubagentStart", "agent_id": "a0123456789abcdef", "agent_type": "general-purpose"},
	} {
		b, err := json.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		got := send(t, b)
		if payload["hook_event_name"] == "SubagentStart" && string(bytes.TrimSpace(got)) != "{}" {
			t.Errorf("SubagentStart with nothing to inherit: reply %s, want {}", got)
		}
	}
}

// additionalContext returns the additionalContext of a hook reply, "" when it has none.
func additionalContext(tb testing.TB, body []byte) string {
	tb.Helper()
	var r struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		tb.Fatalf("reply is not JSON: %q", body)
	}
	return r.HookSpecificOutput.AdditionalContext
}
