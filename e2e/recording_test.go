package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The recordings in testdata/claude-code are copies of the shared Claude Code 2.1.197 fixtures:
// <name>.hooks.jsonl holds one hook call a line, {seq, event, payload}, in the order Claude Code
// made them; transcripts/ holds the files those calls point at, in their final state. Every path
// inside them starts with recordedHome, and every transcript lived in recordedProject.
const (
	fixturesDir     = "testdata/claude-code"
	recordedHome    = "/home/dev"
	recordedProject = recordedHome + "/.claude/projects/-home-dev-src-parser"
)

// recording is one recorded hook stream.
type recording struct {
	Name  string
	Calls []hookCall
}

// hookCall is one recorded hook call.
type hookCall struct {
	Seq     int             `json:"seq"`
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload"`
	p       hookPayload     // Payload, decoded
}

// hookPayload is the part of a Claude Code hook payload the replays reason about.
type hookPayload struct {
	SessionID           string          `json:"session_id"`
	TranscriptPath      string          `json:"transcript_path"`
	Source              string          `json:"source"`
	PromptID            string          `json:"prompt_id"`
	Prompt              string          `json:"prompt"`
	AgentID             string          `json:"agent_id"`
	AgentType           string          `json:"agent_type"`
	AgentTranscriptPath string          `json:"agent_transcript_path"`
	ToolName            string          `json:"tool_name"`
	ToolUseID           string          `json:"tool_use_id"`
	ToolInput           json.RawMessage `json:"tool_input"`    // decoded by spawn for Agent calls
	ToolResponse        json.RawMessage `json:"tool_response"` // decoded by spawnResult for Agent calls
}

// spawnInput is tool_input of an Agent (formerly Task) call.
type spawnInput struct {
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
	SubagentType string `json:"subagent_type"`
}

// spawnResponse is tool_response of a finished Agent call.
type spawnResponse struct {
	Status          string `json:"status"`
	AgentID         string `json:"agentId"`
	Content         []struct{ Type, Text string }
	TotalTokens     int64 `json:"totalTokens"`
	TotalDurationMs int64 `json:"totalDurationMs"`
}

// isSpawn reports whether c is a PreToolUse or PostToolUse of the sub-agent tool.
func (c hookCall) isSpawn() bool {
	return (c.Event == "PreToolUse" || c.Event == "PostToolUse") && (c.p.ToolName == "Agent" || c.p.ToolName == "Task")
}

func (c hookCall) spawn(tb testing.TB) spawnInput {
	tb.Helper()
	var in spawnInput
	if err := json.Unmarshal(c.p.ToolInput, &in); err != nil {
		tb.Fatalf("seq %d: tool_input: %v", c.Seq, err)
	}
	return in
}

func (c hookCall) spawnResult(tb testing.TB) spawnResponse {
	tb.Helper()
	var out spawnResponse
	if err := json.Unmarshal(c.p.ToolResponse, &out); err != nil {
		tb.Fatalf("seq %d: tool_response: %v", c.Seq, err)
	}
	return out
}

// text joins the text blocks of the response.
func (r spawnResponse) text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// recordingNames returns the names of the recordings in fixturesDir, sorted.
func recordingNames(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(fixturesDir, "*.hooks.jsonl"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no recordings in %s (%v)", fixturesDir, err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".hooks.jsonl"))
	}
	return names
}

// loadRecording reads fixturesDir/<name>.hooks.jsonl.
func loadRecording(tb testing.TB, name string) recording {
	tb.Helper()
	path := filepath.Join(fixturesDir, name+".hooks.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	rec := recording{Name: name}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var c hookCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("%s line %d: %v", path, len(rec.Calls)+1, err)
		}
		if err := json.Unmarshal(c.Payload, &c.p); err != nil {
			tb.Fatalf("%s seq %d: payload: %v", path, c.Seq, err)
		}
		rec.Calls = append(rec.Calls, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(rec.Calls) == 0 {
		tb.Fatalf("%s: no hook calls", path)
	}
	return rec
}

// replayRoot is a temp directory standing in for recordedHome: recordedProject's transcripts
// are written under it as the recording's hooks would have found them, and payload paths are
// rewritten to point into it.
type replayRoot struct {
	Dir string
	// real is Dir with symlinks resolved, in case heirloom reports resolved paths.
	real string
	// enc is Dir as it appears inside a JSON string.
	enc string
}

// newReplayRoot makes an empty root with the recorded project directory in it (heirloom may
// resolve the cwd) and an empty projects folder.
func newReplayRoot(tb testing.TB) *replayRoot {
	tb.Helper()
	dir := tb.TempDir()
	for _, d := range []string{"src/parser", ".claude/projects/-home-dev-src-parser"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		tb.Fatal(err)
	}
	enc, _ := json.Marshal(filepath.ToSlash(dir))
	return &replayRoot{Dir: dir, real: real, enc: string(enc[1 : len(enc)-1])}
}

// TranscriptRoot is the transcript root heirloom is configured with: $HOME/.claude/projects.
func (r *replayRoot) TranscriptRoot() string {
	return filepath.Join(r.Dir, ".claude", "projects")
}

// projectDir is where recordedProject's files go.
func (r *replayRoot) projectDir() string {
	return filepath.Join(r.TranscriptRoot(), "-home-dev-src-parser")
}

// Payload returns c's payload with every string that starts with recordedHome pointing into r.
// Only whole-path prefixes are rewritten; everything else is kept byte for byte.
func (r *replayRoot) Payload(c hookCall) []byte {
	b := bytes.ReplaceAll(c.Payload, []byte(`"`+recordedHome+`/`), []byte(`"`+r.enc+`/`))
	return bytes.ReplaceAll(b, []byte(`"`+recordedHome+`"`), []byte(`"`+r.enc+`"`))
}

// Unroot writes r's paths in a reply back as recordedHome, so replies compare across replays.
func (r *replayRoot) Unroot(b []byte) []byte {
	for _, p := range []string{r.enc, r.Dir, r.real} {
		b = bytes.ReplaceAll(b, []byte(p), []byte(recordedHome))
	}
	return b
}

// fileState says how much of each transcript file exists: path relative to the transcripts
// folder → lines present. A file not listed (or with 0 lines) does not exist yet.
type fileState map[string]int

// transcriptLines caches the recorded transcript files, split into lines (newline included).
type transcriptLines map[string][][]byte

// lines returns the lines of the recorded file rel, or nil when it was not recorded.
func (t transcriptLines) lines(tb testing.TB, rel string) [][]byte {
	tb.Helper()
	if l, ok := t[rel]; ok {
		return l
	}
	b, err := os.ReadFile(filepath.Join(fixturesDir, "transcripts", filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		t[rel] = nil
		return nil
	} else if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n') + 1
		if i == 0 {
			i = len(b)
		}
		out = append(out, b[:i])
		b = b[i:]
	}
	t[rel] = out
	return out
}

// record is the part of a transcript line the timeline looks at.
type record struct {
	Type             string `json:"type"`
	PromptID         string `json:"promptId"`
	IsCompactSummary bool   `json:"isCompactSummary"`
	Message          *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// usesTool reports whether the record is an assistant message calling tool use id.
func (r record) usesTool(id string) bool {
	if r.Type != "assistant" || r.Message == nil {
		return false
	}
	var blocks []struct{ Type, ID string }
	_ = json.Unmarshal(r.Message.Content, &blocks)
	return slices.ContainsFunc(blocks, func(b struct{ Type, ID string }) bool { return b.Type == "tool_use" && b.ID == id })
}

func parseRecords(lines [][]byte) []record {
	recs := make([]record, len(lines))
	for i, l := range lines {
		_ = json.Unmarshal(l, &recs[i])
	}
	return recs
}

// relPath returns a recorded path relative to recordedProject, or "" when it lies elsewhere.
func relPath(p string) string {
	rel, ok := strings.CutPrefix(p, recordedProject+"/")
	if !ok {
		return ""
	}
	return rel
}

// Timeline returns, for each call of rec, the transcript files as they stood when Claude Code
// made that call, as well as the recording allows telling. The rules come from watching Claude
// Code 2.1.197 (a hook that listed the files at every call of a run with a nested spawn):
//
//   - A session transcript is appended to, never rewritten. One `claude -p` run (one recording)
//     adds one segment to it, ending with a "last-prompt" record; a resumed session starts with
//     the earlier runs' segments present. At the first run's SessionStart and
//     UserPromptSubmit the file does not exist yet.
//   - At PreToolUse(Agent) the assistant record holding that tool_use has been written (to the
//     session's file, or to the issuing sub-agent's own file for a nested spawn; the issuing
//     sub-agent's meta.json exists by then). SubagentStart, SubagentStop and PostToolUse add
//     nothing to the session's file; the tool result is written later.
//   - A sub-agent's transcript and its meta.json do not exist at its SubagentStart; both exist,
//     whole, from its SubagentStop on.
//   - SessionStart(compact) comes after the compaction summary is written; Stop after the
//     turn's last assistant record; at SessionEnd the run's whole segment is there.
//
// Nothing is ever removed, so the files grow monotonically through the recording.
//
// Claude Code writes transcripts asynchronously: the state above is what a hook that takes a few
// milliseconds finds. A hook answered within a millisecond or two (heirloom's shim) often finds
// less: in live runs the parent's file, or for a grandchild the child's own, was frequently not
// on disk yet at SubagentStart. The replays show the files at their most complete.
func (rec recording) Timeline(tb testing.TB, files transcriptLines) []fileState {
	tb.Helper()
	prompts := map[string]bool{}
	for _, c := range rec.Calls {
		if c.p.PromptID != "" {
			prompts[c.p.PromptID] = true
		}
	}
	type session struct {
		recs             []record
		segStart, segEnd int // this recording's segment: lines [segStart, segEnd)
	}
	sessions := map[string]*session{} // by rel path
	sessionOf := func(c hookCall) (string, *session) {
		rel := relPath(c.p.TranscriptPath)
		if rel == "" {
			return "", nil
		}
		if s, ok := sessions[rel]; ok {
			return rel, s
		}
		s := &session{recs: parseRecords(files.lines(tb, rel))}
		// Segments end with a last-prompt record; this recording's is the first that holds one
		// of its prompts (or, for a fresh session, the first).
		start := 0
		for i, r := range s.recs {
			if prompts[r.PromptID] {
				break
			}
			if r.Type == "last-prompt" {
				start = i + 1
			}
		}
		if start == len(s.recs) {
			start = 0 // no prompt of this recording in the file: take it whole
		}
		end := len(s.recs)
		for i := start; i < len(s.recs); i++ {
			if s.recs[i].Type == "last-prompt" {
				end = i + 1
				break
			}
		}
		s.segStart, s.segEnd = start, end
		sessions[rel] = s
		return rel, s
	}

	state := fileState{}
	grow := func(rel string, n int) {
		if n > state[rel] {
			state[rel] = n
		}
	}
	wholeAgent := func(agentRel string) {
		grow(agentRel, len(files.lines(tb, agentRel)))
		meta := strings.TrimSuffix(agentRel, ".jsonl") + ".meta.json"
		grow(meta, len(files.lines(tb, meta)))
	}
	out := make([]fileState, len(rec.Calls))
	for i, c := range rec.Calls {
		rel, s := sessionOf(c)
		if s != nil {
			grow(rel, s.segStart) // earlier runs' segments
			switch c.Event {
			case "PreToolUse":
				if !c.isSpawn() {
					break
				}
				if c.p.AgentID == "" {
					if j := find(s.recs, s.segStart, s.segEnd, func(r record) bool { return r.usesTool(c.p.ToolUseID) }, false); j >= 0 {
						grow(rel, j+1)
					}
					break
				}
				agentRel := strings.TrimSuffix(rel, ".jsonl") + "/subagents/agent-" + c.p.AgentID + ".jsonl"
				recs := parseRecords(files.lines(tb, agentRel))
				if j := find(recs, 0, len(recs), func(r record) bool { return r.usesTool(c.p.ToolUseID) }, false); j >= 0 {
					grow(agentRel, j+1)
				}
				meta := strings.TrimSuffix(agentRel, ".jsonl") + ".meta.json"
				grow(meta, len(files.lines(tb, meta)))
			case "SubagentStop":
				if a := relPath(c.p.AgentTranscriptPath); a != "" {
					wholeAgent(a)
				}
			case "SessionStart":
				if c.p.Source != "compact" {
					break
				}
				if j := find(s.recs, s.segStart, s.segEnd, func(r record) bool { return r.IsCompactSummary }, false); j >= 0 {
					grow(rel, j+1)
				}
			case "Stop":
				if j := find(s.recs, s.segStart, s.segEnd, func(r record) bool { return r.Type == "assistant" }, true); j >= 0 {
					grow(rel, j+1)
				}
			case "SessionEnd":
				grow(rel, s.segEnd)
			}
		}
		out[i] = maps.Clone(state)
	}
	return out
}

// find returns the index of the first (or, with last, the last) of recs[from:to] that ok
// accepts; -1 when none does.
func find(recs []record, from, to int, ok func(record) bool, last bool) int {
	found := -1
	for j := from; j < to && j < len(recs); j++ {
		if ok(recs[j]) {
			found = j
			if !last {
				break
			}
		}
	}
	return found
}

// Materialize makes r's transcripts match st: every listed file gets its missing lines
// appended (so a file keeps its identity as it grows, as Claude Code's do). Files never shrink:
// a state older than what is on disk leaves the disk as it is.
func (r *replayRoot) Materialize(tb testing.TB, files transcriptLines, st fileState) {
	tb.Helper()
	for rel, n := range st {
		if n == 0 {
			continue
		}
		want := bytes.Join(files.lines(tb, rel)[:n], nil)
		path := filepath.Join(r.projectDir(), filepath.FromSlash(rel))
		have := int64(0)
		if fi, err := os.Stat(path); err == nil {
			have = fi.Size()
		}
		if have >= int64(len(want)) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			tb.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			tb.Fatal(err)
		}
		_, err = f.Write(want[have:])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
}
