package inject_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the current output")

// goldenInput is the content of a testdata/<case>.input.json file.
type goldenInput struct {
	Inherited inject.Inherited
	Budget    inject.Budget
}

// TestInheritedBlock_Golden renders every testdata/<case>.input.json and compares the result byte
// for byte with testdata/<case>.golden. Run with -update to rewrite the golden files, then review
// the diff.
func TestInheritedBlock_Golden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.input.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no testdata/*.input.json cases")
	}
	for _, input := range inputs {
		name := strings.TrimSuffix(filepath.Base(input), ".input.json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(input)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			var in goldenInput
			if err := dec.Decode(&in); err != nil {
				t.Fatalf("decode %s: %v", input, err)
			}

			got := inject.InheritedBlock(in.Inherited, in.Budget)
			limit := in.Budget.MaxChars
			if limit <= 0 {
				limit = inject.DefaultMaxChars
			}
			if n := inject.Len(got); n > limit {
				t.Errorf("Len = %d, want <= %d", n, limit)
			}
			if again := inject.InheritedBlock(in.Inherited, in.Budget); again != got {
				t.Errorf("second call differs:\n%s", again)
			}

			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s at %s\n--- got ---\n%s\n--- want ---\n%s", golden, firstDiff(got, string(want)), got, want)
			}
		})
	}
}

// firstDiff describes where got and want first differ.
func firstDiff(got, want string) string {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w || i >= len(gl) || i >= len(wl) {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g, w)
		}
	}
	return "end"
}

// TestInheritedBlock_SearchHint: with a search tool named, the block gives the parent's full
// key and how to search it, right under the objective; without one, no such line.
func TestInheritedBlock_SearchHint(t *testing.T) {
	in := inject.Inherited{Parent: kv.Session{ID: "sess-1:agent-2", Harness: "claude-code", Objective: "ship it"}}
	if got := inject.InheritedBlock(in, inject.Budget{}); strings.Contains(got, "session_search") || strings.Contains(got, "Parent session key") {
		t.Errorf("no search tool, yet a hint:\n%s", got)
	}
	in.SearchTool = "session_search"
	got := inject.InheritedBlock(in, inject.Budget{})
	want := "Objective: ship it\nParent session key: sess-1:agent-2 (more than this block holds: call session_search with \"session\": \"sess-1:agent-2\")"
	if !strings.Contains(got, want) {
		t.Errorf("block:\n%s\nwant it to hold:\n%s", got, want)
	}
	// A parent in another scope than the sidecar's (an OpenClaw agent's) is searched there.
	in.SearchScope = "main"
	want = `call session_search with "session": "sess-1:agent-2", "scope": "main")`
	if got := inject.InheritedBlock(in, inject.Budget{}); !strings.Contains(got, want) {
		t.Errorf("block:\n%s\nwant it to hold:\n%s", got, want)
	}
}
