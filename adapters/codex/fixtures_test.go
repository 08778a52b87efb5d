package codex_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The recordings are Codex CLI 0.169.0 runs against a stand-in model, shared with the e2e
// replays: each scenario directory holds hooks.jsonl (one {"event","payload","sizes"} line per
// hook call) and the rollouts Codex wrote under sessions/. Paths inside them start with
// /home/dev, the recording machine's home; its CODEX_HOME was /home/dev/.codex.
const recordings = "../../e2e/testdata/codex"

// The three recorded scenarios.
const (
	nested         = "nested"          // root → child → grandchild
	parallel       = "parallel"        // root → two children at once
	compactResumed = "compact-resumed" // one session, compacted, then resumed
)

var scenarios = []string{nested, parallel, compactResumed}

// The thread ids of the recordings: a sub-agent's agent_id is its thread id.
const (
	nestedRoot       = "01a21df2-f636-76c2-a975-7d627d7dce5e"
	nestedChild      = "01a21df2-f6b3-7761-a92d-52e2be6e3927"
	nestedGrandchild = "01a21df2-f6fe-79f0-a693-3aabac41e70c"
	parallelRoot     = "01a21df2-f888-73a3-81fe-f29e8b21cc70"
	parallelA        = "01a21df2-f907-7313-9602-a19cbf3c6cac"
	parallelB        = "01a21df2-f925-7d83-a70c-e3a97f077fb2"
	compactRoot      = "01a21df2-fa97-7af2-9a30-46cb78e66eaf"
)

// recordedHome is the CODEX_HOME of the recording machine; a path under it names a file under
// the scenario's directory.
const recordedHome = "/home/dev/.codex/"

// samplesFile holds one payload per hook event Codex 0.169.0 sends, keyed by event name (and
// "UserPromptSubmit(child)" for a sub-agent's), plus a "_note" and a notify payload
// ("notify_argv1"), which is no hook call. Some transcript_path values are placeholders.
const samplesFile = "testdata/hook_payload_samples.json"

// hookCall is one line of a recorded hooks.jsonl.
type hookCall struct {
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload"`
}

// MustReadHookStream returns the hook calls recorded for scenario, in order.
func MustReadHookStream(tb testing.TB, scenario string) []hookCall {
	tb.Helper()
	path := filepath.Join(recordings, scenario, "hooks.jsonl")
	var calls []hookCall
	sc := bufio.NewScanner(bytes.NewReader(mustReadFile(tb, path)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var c hookCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(calls) == 0 {
		tb.Fatalf("%s: no hook calls", path)
	}
	return calls
}

// mustReadSamples returns the hook payload samples by name, without "_note".
func mustReadSamples(tb testing.TB) map[string]json.RawMessage {
	tb.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(mustReadFile(tb, samplesFile), &m); err != nil {
		tb.Fatalf("%s: %v", samplesFile, err)
	}
	delete(m, "_note")
	return m
}

// MustGlob returns the files matching pattern, failing when there are none.
func MustGlob(tb testing.TB, pattern string) []string {
	tb.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil {
		tb.Fatal(err)
	}
	if len(paths) == 0 {
		tb.Fatalf("no files match %s", pattern)
	}
	return paths
}

// rolloutFiles returns every recorded rollout, roots and sub-agents.
func rolloutFiles(tb testing.TB) []string {
	tb.Helper()
	return MustGlob(tb, filepath.Join(recordings, "*", "sessions", "*", "*", "*", "rollout-*.jsonl"))
}

// rolloutOf returns the rollout of thread id in scenario.
func rolloutOf(tb testing.TB, scenario, id string) string {
	tb.Helper()
	paths := MustGlob(tb, filepath.Join(recordings, scenario, "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl"))
	if len(paths) != 1 {
		tb.Fatalf("%d rollouts of %s in %s, want 1", len(paths), id, scenario)
	}
	return paths[0]
}

// localPath maps a path recorded under recordedHome to the file under scenario's directory;
// "" when path is not under recordedHome.
func localPath(scenario, path string) string {
	rel, ok := strings.CutPrefix(path, recordedHome)
	if !ok {
		return ""
	}
	return filepath.Join(recordings, scenario, filepath.FromSlash(rel))
}

// firstLine returns b up to its first newline, without it.
func firstLine(b []byte) []byte {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return line
}

func mustReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
