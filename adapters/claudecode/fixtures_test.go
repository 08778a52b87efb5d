package claudecode_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The recordings in testdata are copies of the shared Claude Code 2.1.197 fixtures. Paths inside
// them start with /home/dev, the recording machine's home.
const (
	spawnOne       = "testdata/spawn-one.hooks.jsonl"
	spawnTwo       = "testdata/spawn-two.hooks.jsonl"
	compactResumed = "testdata/compact-resumed.hooks.jsonl"
)

var hookStreams = []string{spawnOne, spawnTwo, compactResumed}

// hookCall is one line of a recorded hook stream.
type hookCall struct {
	Seq     int             `json:"seq"`
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload"`
}

// MustReadHookStream returns the hook calls recorded in path, in order.
func MustReadHookStream(tb testing.TB, path string) []hookCall {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var calls []hookCall
	sc := bufio.NewScanner(bytes.NewReader(b))
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

// transcriptFiles returns every recorded transcript: sessions and sub-agents.
func transcriptFiles(tb testing.TB) []string {
	tb.Helper()
	return append(MustGlob(tb, "testdata/transcripts/*.jsonl"),
		MustGlob(tb, "testdata/transcripts/*/subagents/*.jsonl")...)
}

func mustReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
