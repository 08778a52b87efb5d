package engine_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
)

// The planted finding (issue 14, item 5; the other kinds are inject's planted-fact benchmark): a
// parent session of a given size holds, somewhere in its middle, a finding its sub-agent's task
// is about, stated in one of several ways (the assistant's conclusion, a failing test's output, a
// user's heads-up, a profile, a file read), among filler and decoys that share some of the task's
// words. The parent streams through the engine as OpenCode's turns do (search index on), the
// child is spawned with the task, and its block is what the plugin's first call gets. A finding
// reaches the child when its token is in the block; the baseline is a tail-only block of the same
// length (the transcript's last characters).

// findingCase is one way a finding is stated, and the task a sub-agent gets about it; %s in text
// is the finding's token.
type findingCase struct {
	name, role, tool, text, task string
	decoys                       []string // sentences sharing some of the task's words, planted elsewhere
}

var findingCases = []findingCase{
	{
		name: "assistant conclusion", role: "assistant",
		text:   "Found it: the invoice export drops rows for tenants over 500 pages because the cursor resets at page %s.",
		task:   "Fix the invoice export so it stops dropping rows for large tenants",
		decoys: []string{"The invoice template renders fine now.", "export job finished for tenant 12 without errors.", "rows sorted by date in the export preview."},
	},
	{
		name: "failing test output", role: "tool", tool: "Bash",
		text:   "--- FAIL: TestRetryBackoff (0.31s)\n    backoff_test.go:88: jitter %s exceeds the backoff cap after the fifth retry",
		task:   "Make the retry backoff jitter stay under its cap",
		decoys: []string{"retry count raised to five for the upload client.", "the cap on open files is 1024 here.", "ok  \tbackoff\t0.12s"},
	},
	{
		name: "user heads-up", role: "user",
		text:   "Heads up: the staging database rejects TLS 1.0 clients since the upgrade (ops ticket %s).",
		task:   "Find out why the staging database started rejecting our clients",
		decoys: []string{"staging deploy finished, all green.", "database schema check passed.", "the clients list is cached for a minute."},
	},
	{
		name: "profile result", role: "assistant",
		text:   "Profiling shows the slow monthly report is an N+1 query in ReportBuilder.loadLines, %s ms per line.",
		task:   "Remove the N+1 query that makes the monthly report slow",
		decoys: []string{"monthly totals match the old report.", "query plan uses the index on order id.", "the report header is slow to render in dark mode."},
	},
	{
		name: "file read", role: "tool", tool: "Read",
		text:   "pkg/auth/cookie.go:41: http.SetCookie(w, &http.Cookie{Name: \"session\", Secure: false}) // %s set behind the proxy",
		task:   "Set the Secure flag on the session cookie when we run behind the proxy",
		decoys: []string{"proxy timeout raised to 30s.", "session store moved to the cache.", "cookie banner text updated."},
	},
}

// findingFiller are the words filler turns are made of; some are the tasks' words too.
var findingFiller = strings.Fields(`the a for with and then look at run tests build fix error line file function
	loop buffer cache request handler field struct method update compare print read write split merge
	rows columns schema index query timeout retry client server log trace check parser output totals
	export job module value result config report batch worker channel slice map string number count
	page table order sort filter limit offset tenant session proxy cap database staging invoice`)

// plantedFinding is a generated parent transcript with one finding in its middle.
type plantedFinding struct {
	turns []adapters.Turn
	token string
	text  string // the transcript's text, turn after turn, for the tail-only baseline
}

// genFinding generates about size bytes of parent transcript from seed with c's finding planted
// between 30% and 70% of the way through, and c's decoys elsewhere.
func genFinding(c findingCase, seed uint64, size int) plantedFinding {
	rng := rand.New(rand.NewPCG(seed, uint64(size)))
	words := func(lo, hi int) string {
		n := lo + rng.IntN(hi-lo+1)
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(findingFiller[rng.IntN(len(findingFiller))])
		}
		b.WriteByte('.')
		return b.String()
	}
	const cons, vow = "bdfgklmnprstvz", "aeiou"
	token := "qu"
	for range 4 {
		token += string(cons[rng.IntN(len(cons))]) + string(vow[rng.IntN(len(vow))])
	}
	var turns []adapters.Turn
	bytes := 0
	add := func(role, tool, text string) {
		turns = append(turns, adapters.Turn{ID: fmt.Sprintf("m%d", len(turns)), Role: role, Tool: tool, Text: text})
		bytes += len(text)
	}
	add("user", "", "Clean up the billing service before the release. "+words(10, 30))
	for bytes < size {
		add("user", "", words(8, 40))
		for range 1 + rng.IntN(3) {
			add("assistant", "", words(15, 110))
			add("tool", "Bash", words(20, 400))
		}
	}
	at := len(turns)*3/10 + rng.IntN(len(turns)*4/10+1)
	for at < len(turns) && turns[at].Role != c.role {
		at++
	}
	if at == len(turns) {
		at = len(turns) / 2
	}
	turns[at].Text, turns[at].Tool = fmt.Sprintf(c.text, token), c.tool
	for _, d := range c.decoys {
		i := 1 + rng.IntN(len(turns)-1)
		if i != at {
			turns[i].Text += " " + d
		}
	}
	var b strings.Builder
	for _, t := range turns {
		b.WriteString(t.Text)
		b.WriteByte('\n')
	}
	return plantedFinding{turns: turns, token: token, text: b.String()}
}

// findingBlock streams p into a fresh engine as the parent's turns, spawns a child with task, and
// returns the child's block and the engine.
func findingBlock(t testing.TB, p plantedFinding, task string) (string, *engine.Engine) {
	t.Helper()
	e := openEngine(t, cct.NewTree(t, "unused"), nil)
	ev := func(kind adapters.Kind, id string) adapters.Event {
		return adapters.Event{Harness: "opencode", Kind: kind, SessionID: id, Cwd: "/srv/billing"}
	}
	evs := []adapters.Event{ev(adapters.KindSessionStart, "ses_P")}
	for i := 0; i < len(p.turns); i += 500 {
		batch := ev(adapters.KindTurns, "ses_P")
		batch.Turns = p.turns[i:min(i+500, len(p.turns))]
		evs = append(evs, batch)
	}
	spawn := ev(adapters.KindSpawn, "ses_P")
	spawn.Spawn = &adapters.Spawn{ToolUseID: "call_1", ChildSessionID: "ses_C", Prompt: task, Type: "general"}
	child := ev(adapters.KindSessionStart, "ses_C")
	child.ParentSessionID = "ses_P"
	for _, ev := range append(evs, spawn, child) {
		if err := e.Consume(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
	}
	block := childBlock(t, e)
	if n := len([]rune(block)); n > engine.DefaultConfig().MaxContextChars {
		t.Errorf("block of %d characters, over the cap", n)
	}
	return block, e
}

// childBlock is what the plugin's call for the child's model request gets.
func childBlock(t testing.TB, e *engine.Engine) string {
	block, err := e.Inject(t.Context(), engine.InjectRequest{Harness: "opencode", Session: "ses_C"})
	if err != nil {
		t.Fatal(err)
	}
	return block
}

// findingShares measures every case at size over seeds: the share of findings in heirloom's
// block and in a tail-only block of the same length.
func findingShares(t testing.TB, size int, seeds int) (block, tail float64, missed []string) {
	var n, inBlock, inTail int
	for _, c := range findingCases {
		for s := range seeds {
			p := genFinding(c, uint64(s+1), size)
			b, _ := findingBlock(t, p, c.task)
			n++
			if strings.Contains(b, p.token) {
				inBlock++
			} else {
				missed = append(missed, fmt.Sprintf("%s (seed %d)", c.name, s+1))
			}
			r := []rune(p.text)
			if strings.Contains(string(r[max(0, len(r)-len([]rune(b))):]), p.token) {
				inTail++
			}
		}
	}
	return float64(inBlock) / float64(n), float64(inTail) / float64(n), missed
}

// findingSizes are the parent sizes measured; HEIRLOOM_LONG=1 adds 2 MB and 10 MB (the
// benchmark in docs/benchmarks.md runs them).
func findingSizes() []int {
	sizes := []int{10 << 10, 100 << 10, 1 << 20}
	if os.Getenv("HEIRLOOM_LONG") == "1" {
		sizes = append(sizes, 2<<20, 10<<20)
	}
	return sizes
}

// TestPlantedFinding: at every size, the finding reaches the child's block in at least 9 of 10
// cases, every way it is stated.
func TestPlantedFinding(t *testing.T) {
	for _, size := range findingSizes() {
		block, tail, missed := findingShares(t, size, 2)
		t.Logf("%8d bytes: finding in heirloom's block %.2f, in a tail-only block %.2f", size, block, tail)
		if block < 0.9 {
			t.Errorf("%d bytes: the finding reaches %.2f of the children, want >= 0.9; missed: %s", size, block, strings.Join(missed, ", "))
		}
	}
}

// BenchmarkPlantedFinding reports the shares at every size (HEIRLOOM_LONG=1 for 2 and 10 MB)
// over three seeds per case, and times the child's block (the plugin's inject call) at the end
// of a parent of that size.
func BenchmarkPlantedFinding(b *testing.B) {
	for _, size := range findingSizes() {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			c := findingCases[0]
			_, e := findingBlock(b, genFinding(c, 1, size), c.task)
			for b.Loop() {
				childBlock(b, e)
			}
			b.StopTimer()
			block, tail, _ := findingShares(b, size, 3)
			b.ReportMetric(block, "finding-heirloom")
			b.ReportMetric(tail, "finding-tailonly")
		})
	}
}
