package inject_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// castCase is the content of a testdata/cast/<case>.input.json file.
type castCase struct {
	Run       kv.Run
	MaxTokens int
	MaxChars  int
	Full      bool
	Retention string // a Go duration; "" for none
	// Lines, when set, makes Run.Result that many numbered lines of it ("line 7: <Result>"),
	// so a head/tail cut shows which lines it kept.
	Lines int
}

func (c castCase) run(t *testing.T) (kv.Run, inject.CastOptions) {
	t.Helper()
	r := c.Run
	if c.Lines > 0 {
		lines := make([]string, c.Lines)
		for i := range lines {
			lines[i] = fmt.Sprintf("line %d: %s", i+1, r.Result)
		}
		r.Result = strings.Join(lines, "\n")
	}
	o := inject.CastOptions{MaxTokens: c.MaxTokens, MaxChars: c.MaxChars, Full: c.Full}
	if c.Retention != "" {
		d, err := time.ParseDuration(c.Retention)
		if err != nil {
			t.Fatal(err)
		}
		o.Retention = d
	}
	return r, o
}

// TestCastRun_Golden casts every testdata/cast/<case>.input.json and compares the result byte
// for byte with <case>.golden. Run with -update to rewrite the golden files.
func TestCastRun_Golden(t *testing.T) {
	for _, name := range goldenCases(t, "cast") {
		t.Run(name, func(t *testing.T) {
			var c castCase
			readInput(t, "cast", name, &c)
			r, o := c.run(t)
			got := inject.CastRun(r, o)
			checkCast(t, got, o)
			if again := inject.CastRun(r, o); again != got {
				t.Errorf("second call differs:\n%s", again)
			}
			checkGolden(t, filepath.Join("testdata", "cast", name+".golden"), got)
		})
	}
}

// checkCast checks a cast's invariants: within its cap, valid UTF-8, the header and footer in
// place.
func checkCast(t *testing.T, out string, o inject.CastOptions) {
	t.Helper()
	if out == "" {
		return
	}
	if o.MaxChars > 0 && !o.Full && inject.Len(out) > o.MaxChars {
		t.Fatalf("Len(CastRun) = %d, want <= %d", inject.Len(out), o.MaxChars)
	}
	if !utf8.ValidString(out) {
		t.Fatalf("CastRun: invalid UTF-8: %q", out)
	}
	if !strings.HasPrefix(out, "[Subagent Result: ") || !strings.Contains(out, "\nStatus: ") || !strings.Contains(out, "\nCondensation: Level ") {
		t.Fatalf("CastRun lacks its header:\n%s", out)
	}
	if !strings.Contains(out, "\n---\nRuntime: ") || !strings.Contains(out, "\nFull result: ") {
		t.Fatalf("CastRun lacks its footer:\n%s", out)
	}
}

// TestCastRun_Levels checks which level a result is cast at: passthrough within the token
// limit and the room, the summary past the limit when there is one, head/tail otherwise, and
// head/tail too for a result within the limit that the room cannot hold.
func TestCastRun_Levels(t *testing.T) {
	long := strings.Repeat("a finding worth reading. ", 800) // 20,000 units: 5,000 tokens
	for _, tc := range []struct {
		name string
		run  kv.Run
		o    inject.CastOptions
		want string
	}{
		{"within the limit", kv.Run{ID: "r", Status: kv.RunCompleted, Result: "short"}, inject.CastOptions{}, "Level 1 (passthrough)"},
		{"over the limit", kv.Run{ID: "r", Status: kv.RunCompleted, Result: long}, inject.CastOptions{}, "Level 3 (head/tail)"},
		{"over the limit, summarised", kv.Run{ID: "r", Status: kv.RunCompleted, Result: long, Summary: "Summary: it works."}, inject.CastOptions{}, "Level 2 (LLM summary)"},
		{"within a raised limit", kv.Run{ID: "r", Status: kv.RunCompleted, Result: long}, inject.CastOptions{MaxTokens: 5000}, "Level 1 (passthrough)"},
		{"within the limit, not the room", kv.Run{ID: "r", Status: kv.RunCompleted, Result: long}, inject.CastOptions{MaxTokens: 5000, MaxChars: 3000}, "Level 3 (head/tail)"},
		{"full", kv.Run{ID: "r", Status: kv.RunCompleted, Result: long, Summary: "s"}, inject.CastOptions{Full: true, MaxChars: 3000}, "Level 1 (passthrough)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := inject.CastRun(tc.run, tc.o)
			checkCast(t, out, tc.o)
			if !strings.Contains(out, "\nCondensation: "+tc.want+"\n") {
				t.Errorf("want %s:\n%s", tc.want, out)
			}
			if tc.o.Full && !strings.Contains(out, long[:len(long)-1]) {
				t.Errorf("Full: the whole result is not shown")
			}
		})
	}
	if got := inject.EstimateTokens(long); got != 5000 {
		t.Errorf("EstimateTokens(20,000 units) = %d, want 5000", got)
	}
	if got := inject.EstimateTokens("abcde"); got != 2 {
		t.Errorf("EstimateTokens(5 units) = %d, want 2 (rounded up)", got)
	}
}

// TestCastRun_FooterScope: the footer's `heirloom runs show` names the run's scope when it is
// not the one the command reads by default.
func TestCastRun_FooterScope(t *testing.T) {
	ended := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, runScope, scope, want string
	}{
		{"another scope", "main", "default", "heirloom runs show --scope main agent:main:subagent:c1 (kept until"},
		{"the default scope", "default", "default", "heirloom runs show agent:main:subagent:c1 (kept until"},
		{"no default known", "main", "", "heirloom runs show agent:main:subagent:c1 (kept until"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := kv.Run{Scope: tc.runScope, ID: "agent:main:subagent:c1", Status: kv.RunCompleted, Result: strings.Repeat("long result. ", 2000), EndedAt: ended}
			out := inject.CastRun(r, inject.CastOptions{Retention: time.Hour, Scope: tc.scope})
			if !strings.Contains(out, "\nFull result: "+tc.want) {
				t.Errorf("footer:\n%s\nwant %q", out[strings.LastIndex(out, "---"):], tc.want)
			}
		})
	}
}

// TestRuntime: a run's runtime as reported, else from its start to its end, to the second (the
// millisecond under one); "" when unknown.
func TestRuntime(t *testing.T) {
	start := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		ms         int64
		start, end time.Time
		want       string
	}{
		{90_400, time.Time{}, time.Time{}, "1m30s"},
		{400, time.Time{}, time.Time{}, "400ms"},
		{0, start, start.Add(2 * time.Minute), "2m0s"},
		{0, start, time.Time{}, ""},
		{0, time.Time{}, time.Time{}, ""},
	} {
		if got := inject.Runtime(tt.ms, tt.start, tt.end); got != tt.want {
			t.Errorf("Runtime(%d, %v, %v): got %q, want %q", tt.ms, tt.start, tt.end, got, tt.want)
		}
	}
}

// TestCondense checks what the retention sweep keeps of a result.
func TestCondense(t *testing.T) {
	long := strings.Repeat("word ", 5000)
	body, level := inject.Condense(kv.Run{Result: "short\n\n\n\nresult  "}, 100)
	if body != "short\n\nresult" || level != inject.LevelPassthrough {
		t.Errorf("short: %q at %d", body, level)
	}
	body, level = inject.Condense(kv.Run{Result: long}, 100)
	if level != inject.LevelHeadTail || inject.Len(body) > 400 || !strings.Contains(body, "characters omitted") {
		t.Errorf("long: level %d, %d units:\n%s", level, inject.Len(body), body)
	}
	body, level = inject.Condense(kv.Run{Result: long, Summary: "Summary: fine."}, 100)
	if body != "Summary: fine." || level != inject.LevelSummary {
		t.Errorf("summarised: %q at %d", body, level)
	}
	body, level = inject.Condense(kv.Run{Result: "kept", Swept: true, Condensation: 3}, 100)
	if body != "kept" || level != 3 {
		t.Errorf("swept: %q at %d", body, level)
	}
}

// TestCastRun_Fits checks the cap at every size around a cast's natural length.
func TestCastRun_Fits(t *testing.T) {
	r := kv.Run{ID: "toolu_x", Status: kv.RunCompleted, Description: "d", Result: strings.Repeat("résultat 😀 ", 600), EndedAt: time.Unix(0, 0)}
	whole := inject.CastRun(r, inject.CastOptions{MaxTokens: 10000})
	for max := inject.Len(whole) + 5; max >= 300; max -= 7 {
		out := inject.CastRun(r, inject.CastOptions{MaxTokens: 10000, MaxChars: max})
		checkCast(t, out, inject.CastOptions{MaxChars: max})
		if out == "" && max >= inject.MinCastChars {
			t.Fatalf("max %d: no cast", max)
		}
	}
}

func FuzzCastRun(f *testing.F) {
	f.Add("Survey", "completed", "completed", "", "Found 3 call sites.", "", 4000, 9500, false)
	f.Add("", "failed", "watchdog_timeout", "ran too long", "", "", 0, 0, false)
	f.Add("😀", "interrupted", "killed", "\xff", strings.Repeat("ab 😀\n", 3000), "Summary: x", 10, 400, false)
	f.Add("d", "completed", "", "", strings.Repeat("x", 9000), "", 100, 500, true)
	f.Add("password=hunter2", "completed", "", "", "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "", 1, 401, false)
	f.Fuzz(func(t *testing.T, desc, status, end, reason, result, summary string, tokens, max int, full bool) {
		r := kv.Run{ID: "r", Description: desc, Status: status, EndReason: end, Reason: reason, Result: result, Summary: summary}
		o := inject.CastOptions{MaxTokens: tokens % 100000, MaxChars: max % 20000, Full: full}
		out := inject.CastRun(r, o)
		checkCast(t, out, o)
		if again := inject.CastRun(r, o); again != out {
			t.Fatalf("CastRun not deterministic")
		}
		// A secret in a secret's form (an assignment to a password) never shows; a bare word
		// is no secret (the fuzzer found "hunter2" alone as a description, shown as it is).
		if strings.Contains(out, "password=hunter2") {
			t.Fatalf("secret not redacted:\n%s", out)
		}
	})
}

// BenchmarkObjectiveBlock_Casts is the reinforcement of a session with 8 finished sub-agents
// whose results are 1 MB each: the casts read only what they show.
func BenchmarkObjectiveBlock_Casts(b *testing.B) {
	result := strings.Repeat("a line of a very long sub-agent report, with paths like cart/total.go:41.\n", 14000)
	r := inject.Reinforcement{Objective: "Fix the totals.", Checkpoint: &kv.Checkpoint{Digest: kv.Digest{LastAssistant: "working"}}}
	for i := range 8 {
		r.Finished = append(r.Finished, kv.Run{ID: fmt.Sprintf("r%d", i), Status: kv.RunCompleted, Description: "survey", Result: result,
			EndedAt: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if out := inject.ObjectiveBlock(r, 0); inject.Len(out) > inject.DefaultMaxChars {
			b.Fatal("over the cap")
		}
	}
}
