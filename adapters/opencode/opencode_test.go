package opencode_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

// The recordings in testdata are copies of the shared OpenCode 1.18.33/1.18.34 fixtures. Paths
// inside them start with /home/dev, the recording machine's home.
const (
	parentChildCompact = "testdata/parent-child-compact.sse"              // GET /event
	globalStream       = "testdata/events/stream-parent-child.global.sse" // GET /global/event
	childMessages      = "testdata/events/http.get-session-messages.child-after-compaction.json"
	childrenList       = "testdata/events/http.get-session-children.json"
)

// Session ids of the recordings.
const (
	// parent-child-compact.sse
	compactParent = "ses_dfee8c2b7ffeDIVbTSn7Vxnglr"
	compactChild  = "ses_dfee8c20bffe2ObghB2h3tjcX3"
	// events/
	globalParent = "ses_dfee9894bffegzuPlvdaVMFf45"
	globalChild  = "ses_dfee97e08ffeozwpJ3spjswo4c"
)

const projectDir = "/home/dev/src/parser"

func TestHarness(t *testing.T) {
	if opencode.Harness != "opencode" {
		t.Fatalf("Harness = %q, want opencode", opencode.Harness)
	}
}

// MustReadSSE returns the data payloads of the SSE recording at path, in order: frames are
// separated by blank lines, each one "data: " line.
func MustReadSSE(tb testing.TB, path string) [][]byte {
	tb.Helper()
	var frames [][]byte
	for block := range bytes.SplitSeq(mustReadFile(tb, path), []byte("\n\n")) {
		block = bytes.TrimSpace(block)
		if len(block) == 0 {
			continue
		}
		data, ok := bytes.CutPrefix(block, []byte("data: "))
		if !ok || bytes.Contains(data, []byte("\n")) {
			tb.Fatalf("%s: not a single data line: %.80q", path, block)
		}
		frames = append(frames, data)
	}
	if len(frames) == 0 {
		tb.Fatalf("%s: no frames", path)
	}
	return frames
}

// MustDecodeStream decodes every frame of an SSE recording, failing on any error.
func MustDecodeStream(tb testing.TB, path string) []adapters.Event {
	tb.Helper()
	var evs []adapters.Event
	for i, f := range MustReadSSE(tb, path) {
		got, err := opencode.DecodeFrame(f)
		if err != nil {
			tb.Fatalf("%s frame %d: %v", path, i, err)
		}
		evs = append(evs, got...)
	}
	return evs
}

func mustReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
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

// ms is an OpenCode timestamp as a time.
func msTime(v int64) time.Time { return time.UnixMilli(v).UTC() }

// finalTurns is what a store holding the turns of evs would show: for each session, its turns
// in first-seen order, each at its latest version.
func finalTurns(evs []adapters.Event) map[string][]adapters.Turn {
	out := map[string][]adapters.Turn{}
	at := map[string]int{}
	for _, ev := range evs {
		if ev.Kind != adapters.KindTurns {
			continue
		}
		for _, tr := range ev.Turns {
			key := ev.SessionID + "\x00" + tr.ID
			if i, ok := at[key]; ok {
				out[ev.SessionID][i] = tr
				continue
			}
			at[key] = len(out[ev.SessionID])
			out[ev.SessionID] = append(out[ev.SessionID], tr)
		}
	}
	return out
}

// eventsOfKind returns the events of evs with kind k.
func eventsOfKind(evs []adapters.Event, k adapters.Kind) []adapters.Event {
	var out []adapters.Event
	for _, ev := range evs {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// dump renders events for a failure message.
func dump(evs []adapters.Event) string {
	var b bytes.Buffer
	for _, ev := range evs {
		j, _ := json.Marshal(ev)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// checkEvents fails on an event a consumer could not use.
func checkEvents(t *testing.T, evs []adapters.Event) {
	t.Helper()
	for _, ev := range evs {
		if ev.Harness != "opencode" || ev.Kind == "" || ev.Kind == adapters.KindUnknown || ev.Name == "" || ev.SessionID == "" {
			t.Fatalf("decoded %+v: Harness, Kind, Name and SessionID must be set", ev)
		}
		if err := adapters.CheckIDs(ev); err != nil {
			t.Fatalf("decoded an id no record may have: %v", err)
		}
		switch ev.Kind {
		case adapters.KindTurns:
			if len(ev.Turns) == 0 {
				t.Fatalf("KindTurns without turns")
			}
		case adapters.KindSpawn, adapters.KindSpawnResult:
			if ev.Spawn == nil || ev.Spawn.ToolUseID == "" || (ev.Kind == adapters.KindSpawnResult) != (ev.Result != nil) {
				t.Fatalf("%s with spawn %+v, result %+v", ev.Kind, ev.Spawn, ev.Result)
			}
		}
		for _, tr := range ev.Turns {
			if tr.ID == "" || !slices.Contains([]string{"user", "assistant", "tool"}, tr.Role) {
				t.Fatalf("bad turn %+v", tr)
			}
			if !utf8.ValidString(tr.Text) {
				t.Fatalf("turn text is not valid UTF-8: %q", tr.Text)
			}
			if tr.Role == "tool" && len(tr.Text) > opencode.MaxToolText+64 {
				t.Fatalf("tool text of %d bytes exceeds the bound", len(tr.Text))
			}
			if tr.Role != "tool" && strings.TrimSpace(tr.Text) == "" {
				t.Fatalf("blank %s turn", tr.Role)
			}
		}
	}
}
