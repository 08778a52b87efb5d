package inject_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// goldenCases returns the case names of testdata/<dir>/<case>.input.json.
func goldenCases(t *testing.T, dir string) []string {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join("testdata", dir, "*.input.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatalf("no testdata/%s/*.input.json cases", dir)
	}
	var names []string
	for _, in := range inputs {
		names = append(names, strings.TrimSuffix(filepath.Base(in), ".input.json"))
	}
	return names
}

// readInput decodes testdata/<dir>/<name>.input.json into v, rejecting unknown fields.
func readInput(t *testing.T, dir, name string, v any) {
	t.Helper()
	path := filepath.Join("testdata", dir, name+".input.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
}

// checkGolden compares got with the file at path byte for byte, or rewrites it with -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s at %s\n--- got ---\n%s\n--- want ---\n%s", path, firstDiff(got, string(want)), got, want)
	}
}

// digestCase is the content of a testdata/digest/<case>.input.json file.
type digestCase struct {
	Input    inject.DigestInput
	MaxChars int
}

// TestDigest_Golden builds the digest of every testdata/digest/<case>.input.json and compares it
// (as indented JSON) with <case>.digest.golden, and its rendering with <case>.golden. Run with
// -update to rewrite the golden files, then review the diff.
func TestDigest_Golden(t *testing.T) {
	for _, name := range goldenCases(t, "digest") {
		t.Run(name, func(t *testing.T) {
			var c digestCase
			readInput(t, "digest", name, &c)

			d := inject.BuildDigest(c.Input)
			if again := inject.BuildDigest(c.Input); !digestsEqual(d, again) {
				t.Errorf("second BuildDigest differs")
			}
			js, err := json.MarshalIndent(d, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "digest", name+".digest.golden"), string(js)+"\n")

			got := inject.RenderDigest(d, c.MaxChars)
			limit := c.MaxChars
			if limit <= 0 {
				limit = inject.DefaultDigestChars
			}
			if n := inject.Len(got); n > limit {
				t.Errorf("Len = %d, want <= %d", n, limit)
			}
			checkGolden(t, filepath.Join("testdata", "digest", name+".golden"), got)
		})
	}
}

// digestsEqual compares digests by their JSON, where nil and empty slices are alike.
func digestsEqual(a, b kv.Digest) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func TestBuildDigest_Empty(t *testing.T) {
	d := inject.BuildDigest(inject.DigestInput{})
	if !digestsEqual(d, kv.Digest{}) {
		t.Errorf("BuildDigest(zero) = %+v, want the zero digest", d)
	}
	if got := inject.RenderDigest(d, 0); got != "" {
		t.Errorf("RenderDigest(zero) = %q, want \"\"", got)
	}
}

// TestBuildDigest_RunOrder checks that the order of the runs given does not matter.
func TestBuildDigest_RunOrder(t *testing.T) {
	base := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	var runs []kv.Run
	for i := range 16 {
		st := kv.RunCompleted
		if i%3 == 0 {
			st = kv.RunRunning
		}
		runs = append(runs, kv.Run{ID: fmt.Sprintf("r%02d", i), Status: st, Description: fmt.Sprintf("task %d", i),
			Result:    fmt.Sprintf("Result %d.", i),
			CreatedAt: base.Add(time.Duration(i%4) * time.Minute), // ties, broken by ID
			EndedAt:   base.Add(time.Duration(20-i) * time.Minute)})
	}
	want := inject.BuildDigest(inject.DigestInput{Runs: runs})
	for i := range 10 {
		shuffled := slices.Clone(runs)
		for j := range shuffled { // a fixed permutation per round
			k := (j*7 + i*3) % len(shuffled)
			shuffled[j], shuffled[k] = shuffled[k], shuffled[j]
		}
		if got := inject.BuildDigest(inject.DigestInput{Runs: shuffled}); !digestsEqual(got, want) {
			t.Fatalf("round %d: digest depends on run order:\n got %+v\nwant %+v", i, got, want)
		}
	}
	if len(want.OpenRuns) != 6 || len(want.FinishedRuns) != 8 {
		t.Fatalf("got %d open and %d finished runs, want 6 and 8", len(want.OpenRuns), len(want.FinishedRuns))
	}
	// Finished runs are the 8 that ended last (r13 and r14 ended first), the earliest first.
	if got := want.FinishedRuns[0].RunID; got != "r11" {
		t.Errorf("earliest kept finished run = %s, want r11", got)
	}
	if got := want.FinishedRuns[7].RunID; got != "r01" {
		t.Errorf("last kept finished run = %s, want r01", got)
	}
}

// TestBuildDigest_Caps fills every cap and checks the most recent items are kept.
func TestBuildDigest_Caps(t *testing.T) {
	in := inject.DigestInput{Session: kv.Session{Objective: "Do the thing."}}
	for i := range 30 {
		in.Turns = append(in.Turns,
			kv.Turn{Seq: uint64(3 * i), Role: "user", Text: fmt.Sprintf("Prompt %d. Never break rule %d.", i, i)},
			kv.Turn{Seq: uint64(3*i + 1), Role: "assistant", Text: fmt.Sprintf("Reply %d.", i)},
			kv.Turn{Seq: uint64(3*i + 2), Role: "tool", Tool: "Edit", Files: []string{fmt.Sprintf("f%02d.go", i)}})
		in.Decisions = append(in.Decisions, fmt.Sprintf("Decision %d.", i))
	}
	in.Constraints = []string{"Explicit one.", "Explicit two."}
	d := inject.BuildDigest(in)

	if got, want := d.Prompts, []string{"Prompt 25. Never break rule 25.", "Prompt 26. Never break rule 26.",
		"Prompt 27. Never break rule 27.", "Prompt 28. Never break rule 28.", "Prompt 29. Never break rule 29."}; !slices.Equal(got, want) {
		t.Errorf("Prompts = %q, want %q", got, want)
	}
	if len(d.Decisions) != 12 || d.Decisions[0].Text != "Decision 18." || d.Decisions[11].Text != "Decision 29." {
		t.Errorf("Decisions = %v, want Decision 18 … 29", d.Decisions)
	}
	if len(d.Constraints) != inject.MaxConstraints {
		t.Fatalf("got %d constraints, want %d", len(d.Constraints), inject.MaxConstraints)
	}
	if c := d.Constraints[0]; c.Text != "Explicit one." || c.Inferred {
		t.Errorf("first constraint = %+v, want the first explicit one", c)
	}
	if c := d.Constraints[2]; c.Text != "Never break rule 20." || !c.Inferred {
		t.Errorf("first inferred constraint = %+v, want rule 20, inferred", c)
	}
	if c := d.Constraints[11]; c.Text != "Never break rule 29." {
		t.Errorf("last constraint = %+v, want rule 29", c)
	}
	if len(d.Files) != 20 || d.Files[0] != "f29.go" || d.Files[19] != "f10.go" {
		t.Errorf("Files = %q, want f29.go … f10.go", d.Files)
	}
	if d.LastAssistant != "Reply 29." {
		t.Errorf("LastAssistant = %q, want Reply 29.", d.LastAssistant)
	}
}

// TestBuildDigest_Explicit checks that a constraint stated both ways is explicit, once, and
// that a prompt equal to the objective is not repeated as a prompt.
func TestBuildDigest_Explicit(t *testing.T) {
	d := inject.BuildDigest(inject.DigestInput{
		Session: kv.Session{Objective: "Port the parser.  Never use cgo."},
		Turns: []kv.Turn{
			{Seq: 0, Role: "user", Text: "Port the parser. Never use cgo."},
			{Seq: 1, Role: "user", Text: "never use cgo!"},
		},
		Constraints: []string{"Never use cgo"},
	})
	if want := []kv.Statement{{Text: "Never use cgo"}}; !slices.Equal(d.Constraints, want) {
		t.Errorf("Constraints = %+v, want %+v", d.Constraints, want)
	}
	if want := []string{"never use cgo!"}; !slices.Equal(d.Prompts, want) {
		t.Errorf("Prompts = %q, want %q", d.Prompts, want)
	}
}

// TestBuildDigest_PromptMiddle checks that a long prompt keeps its start and its end.
func TestBuildDigest_PromptMiddle(t *testing.T) {
	for _, n := range []int{100, 5000, 1 << 20} { // from just over the cap to past the raw clip
		log := strings.Repeat("log line 😀 ", n)
		prompt := "Look at this failure: " + log + " Change of plan: ship it behind a flag."
		d := inject.BuildDigest(inject.DigestInput{Turns: []kv.Turn{{Role: "user", Text: prompt}}})
		if len(d.Prompts) != 1 {
			t.Fatalf("n %d: got %d prompts, want 1", n, len(d.Prompts))
		}
		p := d.Prompts[0]
		if !strings.HasPrefix(p, "Look at this failure: log line") || !strings.HasSuffix(p, "Change of plan: ship it behind a flag.") ||
			!strings.Contains(p, " […] ") {
			t.Errorf("n %d: prompt = %q, want its start, the marker and its end", n, p)
		}
		if l := inject.Len(p); l > 300 || l < 280 {
			t.Errorf("n %d: Len(prompt) = %d, want close to 300", n, l)
		}
	}
}

// TestBuildDigest_Huge feeds megabytes of text everywhere: the digest stays within its caps.
func TestBuildDigest_Huge(t *testing.T) {
	big := strings.Repeat("word ", 1<<20) // 5 MiB
	in := inject.DigestInput{
		Session:     kv.Session{Objective: big, Files: []string{big}},
		Runs:        []kv.Run{{ID: "r", Status: kv.RunCompleted, Description: big, Result: big}},
		Decisions:   []string{big},
		Constraints: []string{"Never " + big},
	}
	for i := range 10 {
		in.Turns = append(in.Turns, kv.Turn{Seq: uint64(i), Role: []string{"user", "assistant"}[i%2], Text: "Always " + big})
	}
	d := inject.BuildDigest(in)
	js, _ := json.Marshal(d)
	if len(js) > 20000 {
		t.Errorf("digest is %d bytes of JSON, want a bounded size", len(js))
	}
	for _, max := range []int{0, 100, 9500} {
		limit := max
		if limit <= 0 {
			limit = inject.DefaultDigestChars
		}
		if out := inject.RenderDigest(d, max); inject.Len(out) > limit {
			t.Errorf("Len(RenderDigest(d, %d)) = %d", max, inject.Len(out))
		}
	}
}

// TestRenderDigest_Shrink checks the shrink order on budgets from generous to tiny: every
// rendering fits, and a more valuable section is never dropped while a less valuable one stays.
func TestRenderDigest_Shrink(t *testing.T) {
	d := kv.Digest{
		Objective:     "Fix the flaky test.",
		Prompts:       []string{"first prompt", "second prompt"},
		Decisions:     []kv.Statement{{Text: "Use retries."}},
		Constraints:   []kv.Statement{{Text: "Never sleep in tests.", Inferred: true}, {Text: "Only use the standard library."}},
		Files:         []string{"a_test.go", "b.go"},
		LastAssistant: strings.Repeat("The test waits on a timer that the fake clock never fires. ", 5),
		OpenRuns:      []kv.RunDigest{{RunID: "r1", Description: "bisect", Status: "running"}},
		FinishedRuns:  []kv.RunDigest{{RunID: "r0", Description: "survey", Status: "completed", Result: "Found it."}},
	}
	order := []string{"Objective:", "Constraints:", "Decisions:", "Recent prompts:", "Sub-agents finished:", "Sub-agents running:", "Files:", "Last reply:"}
	full := inject.RenderDigest(d, 100000)
	for max := inject.Len(full); max >= 0; max-- {
		out := inject.RenderDigest(d, max)
		if n := inject.Len(out); n > max && !(max <= 0 && n <= inject.DefaultDigestChars) {
			t.Fatalf("max %d: Len = %d", max, n)
		}
		gone := false
		for _, h := range order {
			has := strings.Contains(out, h)
			if has && gone && h != "Last reply:" {
				t.Fatalf("max %d: %q kept after a more valuable section was dropped:\n%s", max, h, out)
			}
			gone = gone || !has
		}
	}
	// Inferred constraints go before explicit ones.
	out := inject.RenderDigest(d, inject.Len("Objective: Fix the flaky test.\nConstraints:\n- Only use the standard library."))
	if !strings.Contains(out, "Only use") || strings.Contains(out, "Never sleep") {
		t.Errorf("want the explicit constraint kept over the inferred one:\n%s", out)
	}
}

func FuzzBuildDigest(f *testing.F) {
	f.Add("Fix the flaky test. Never sleep.", "go on; always vet", "Done. Found it.", "a.go", "Never use cgo", 4000)
	f.Add("", "", "", "", "", 0)
	f.Add("絵文字 😀 must", "必ず 👍🏽 never", "## Sum\n```\nok", "ü/😀.go", "keep 😀 stable", 37)
	f.Add("password=hunter2", fakePEM, "Bearer abcdef0123456789", "/tmp/"+fakeGitHub, "never "+fakeJWT, 120)
	f.Add("a\xffb", "\xff\xfe", "\x00", "\n", "\t", 5)
	f.Fuzz(func(t *testing.T, objective, prompt, result, file, constraint string, max int) {
		in := inject.DigestInput{
			Session: kv.Session{Objective: objective, Files: []string{file}},
			Turns: []kv.Turn{
				{Seq: 1, Role: "user", Text: prompt},
				{Seq: 2, Role: "assistant", Text: result, Tool: "Edit", Files: []string{file}},
				{Seq: 0, Role: "tool", Text: prompt},
			},
			Runs: []kv.Run{
				{ID: "a", Status: kv.RunCompleted, Description: prompt, Result: result},
				{ID: "b", Status: kv.RunRunning, Description: constraint},
			},
			Decisions:   []string{constraint, prompt},
			Constraints: []string{constraint},
			Previous:    kv.Digest{Objective: prompt, Prompts: []string{objective}, Constraints: []kv.Statement{{Text: prompt, Inferred: true}}},
		}
		max %= 20000
		d := inject.BuildDigest(in)
		if again := inject.BuildDigest(in); !digestsEqual(d, again) {
			t.Fatalf("BuildDigest not deterministic")
		}
		for _, p := range d.Prompts {
			if n := inject.Len(p); n > 300 {
				t.Fatalf("prompt of %d units, want <= 300: %q", n, p)
			}
		}
		for _, c := range slices.Concat(d.Constraints, d.Decisions) {
			if n := inject.Len(c.Text); n > 300 {
				t.Fatalf("statement of %d units, want <= 300: %q", n, c.Text)
			}
		}
		out := inject.RenderDigest(d, max)
		limit := max
		if limit <= 0 {
			limit = inject.DefaultDigestChars
		}
		if n := inject.Len(out); n > limit {
			t.Fatalf("Len(RenderDigest) = %d, want <= %d", n, limit)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("RenderDigest: invalid UTF-8: %q", out)
		}
		if again := inject.RenderDigest(d, max); again != out {
			t.Fatalf("RenderDigest not deterministic")
		}
	})
}
