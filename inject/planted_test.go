package inject_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// The planted-fact benchmark (issue 6, "what survives the budget"): synthetic parent transcripts
// with facts planted at random places, run through what the real path builds, and a count of the
// facts that reach each block.

// plantedSizes are the transcript sizes measured, in bytes of turn text.
var plantedSizes = []struct {
	name  string
	bytes int
}{
	{"10 KB", 10 << 10},
	{"100 KB", 100 << 10},
	{"500 KB", 500 << 10},
	{"2 MB", 2 << 20},
	{"10 MB", 10 << 20},
}

// plantedSeeds are the transcripts generated per size; shares are over all of them.
var plantedSeeds = func() []uint64 {
	var out []uint64
	for i := range 20 {
		out = append(out, uint64(i+1))
	}
	return out
}()

// The real path's parameters, as engine/inherit.go and engine/checkpoint.go set them.
const (
	checkpointEvery = 10  // a periodic checkpoint every 10 user prompts
	digestWindow    = 200 // turns a checkpoint reads (proxy tailTurnsMax)
	tailTurnsFirst  = 40  // the inherited tail window's least turns (engine tailTurnsMin)
	lateWindow      = 10  // the change of plan lands in one of the last 10 prompts
	sessionFilesMax = kv.MaxFiles
)

// Fact kinds.
const (
	factObjective  = "objective"
	factConstraint = "constraint"
	factDecision   = "decision"
	factFile       = "file"
	factChange     = "change of plan"
)

var factKinds = []string{factObjective, factConstraint, factDecision, factFile, factChange}

// plantedFact is one fact; it is present in a block when its token is.
type plantedFact struct {
	kind  string
	token string
}

// plantedSession is a generated parent transcript and the facts planted in it.
type plantedSession struct {
	turns []kv.Turn
	facts []plantedFact
	bytes int
}

// Templates of the planted facts; %s is the fact's token.
var (
	constraintFacts = []string{
		"Never call the %s sandbox from unit tests.",
		"You must run the %s checks before every commit.",
		"Keep the %s API stable.",
		"Do not rename the %s table.",
		"Always log %s events at debug level.",
		// As people write them, without a trigger word of the first detector.
		"Leave the vendored %s code alone.",
		"The %s API has to stay backwards compatible.",
		"No new dependencies in the %s module.",
	}
	decisionFacts = []string{
		"We settled on %s as the queue backend.",
		"Decision: ledger ids become %s strings.",
		"Agreed, the retry budget lives in the %s config.",
		"We'll use %s from now on.",
		"Let's go with %s for the cache.",
		"%s, not the old queue.",
		"Use %s instead of the legacy client.",
	}
	fileFacts = []string{"internal/%s/ledger.go", "cmd/%s/main.go", "pkg/report/%s_test.go", "docs/%s.md"}
)

// fillerWords make the filler text. None is a constraint word (must, never, always, avoid, do
// not, only use, keep … stable) or a secret word, and none contains "qu", which every token
// starts with.
var fillerWords = strings.Fields(`the a for with and then look at run tests build fix error line file function
	loop buffer cache request handler field struct method update compare print read write split merge
	rows columns schema index query timeout retry client server log trace check parser output totals
	export job module value result config report batch worker channel slice map string number count
	sum average format header footer page table cell width height order sort filter group limit offset`)

// fillerFiles are the files filler tool turns touch: a working set larger than the digest's
// 20-file cap, so old files fall out of it.
var fillerFiles = func() []string {
	var out []string
	for i := range 30 {
		out = append(out, fmt.Sprintf("pkg/%s/%s.go", fillerWords[(i*7)%len(fillerWords)], fillerWords[(i*11+3)%len(fillerWords)]))
	}
	return out
}()

// genPlanted generates a transcript of about size bytes from seed, with its facts planted.
func genPlanted(seed uint64, size int) plantedSession {
	rng := rand.New(rand.NewPCG(seed, uint64(size)))
	words := func(lo, hi int) string {
		n := lo + rng.IntN(hi-lo+1)
		var b strings.Builder
		for i := range n {
			if i > 0 {
				if rng.IntN(9) == 0 {
					b.WriteString(". ")
				} else {
					b.WriteByte(' ')
				}
			}
			b.WriteString(fillerWords[rng.IntN(len(fillerWords))])
		}
		b.WriteByte('.')
		return b.String()
	}
	seen := map[string]bool{}
	token := func() string {
		const cons, vow = "bdfgklmnprstvz", "aeiou"
		for {
			t := "qu"
			for range 3 {
				t += string(cons[rng.IntN(len(cons))]) + string(vow[rng.IntN(len(vow))])
			}
			if !seen[t] {
				seen[t] = true
				return t
			}
		}
	}

	var s plantedSession
	add := func(t kv.Turn) {
		t.Seq = uint64(len(s.turns))
		s.bytes += len(t.Text)
		s.turns = append(s.turns, t)
	}
	objToken := token()
	s.facts = append(s.facts, plantedFact{factObjective, objToken})
	add(kv.Turn{Role: "user", Text: fmt.Sprintf("Migrate the %s billing export to the ledger v2 format. %s", objToken, words(10, 30))})
	for s.bytes < size {
		if len(s.turns) > 1 {
			add(kv.Turn{Role: "user", Text: words(8, 40)})
		}
		for range 1 + rng.IntN(4) {
			add(kv.Turn{Role: "assistant", Text: words(15, 110), Tool: "Bash"})
			if rng.IntN(2) == 0 {
				add(kv.Turn{Role: "tool", Tool: "Read", Text: words(20, 400),
					Files: []string{fillerFiles[rng.IntN(len(fillerFiles))]}})
			} else {
				add(kv.Turn{Role: "tool", Tool: "Bash", Text: words(20, 500)})
			}
		}
	}

	var users, tools []int
	for i, t := range s.turns {
		switch {
		case t.Role == "user" && i > 0:
			users = append(users, i)
		case t.Role == "tool":
			tools = append(tools, i)
		}
	}
	if len(users) == 0 { // a transcript of one cycle: plant in the objective's prompt
		users = []int{0}
	}
	plantIn := func(i int, sentence string) {
		if rng.IntN(2) == 0 {
			s.turns[i].Text = sentence + " " + s.turns[i].Text
		} else {
			s.turns[i].Text += " " + sentence
		}
		s.bytes += len(sentence) + 1
	}
	for _, tmpl := range constraintFacts {
		tok := token()
		s.facts = append(s.facts, plantedFact{factConstraint, tok})
		plantIn(users[rng.IntN(len(users))], fmt.Sprintf(tmpl, tok))
	}
	for _, tmpl := range decisionFacts {
		tok := token()
		s.facts = append(s.facts, plantedFact{factDecision, tok})
		plantIn(users[rng.IntN(len(users))], fmt.Sprintf(tmpl, tok))
	}
	for _, tmpl := range fileFacts {
		tok := token()
		s.facts = append(s.facts, plantedFact{factFile, tok})
		i := tools[rng.IntN(len(tools))]
		s.turns[i].Tool = "Edit"
		s.turns[i].Files = append(s.turns[i].Files, fmt.Sprintf(tmpl, tok))
	}
	tok := token()
	s.facts = append(s.facts, plantedFact{factChange, tok})
	late := users[max(0, len(users)-lateWindow):]
	plantIn(late[rng.IntN(len(late))], fmt.Sprintf("Change of plan: ship the exporter behind the %s flag instead of replacing the old path.", tok))
	return s
}

// plantedBlocks are the blocks built from one transcript.
type plantedBlocks struct {
	inherited     string // InheritedBlock with a digest built at the spawn
	stored        string // InheritedBlock with the latest periodic checkpoint's digest as stored
	reinforcement string // ObjectiveBlock with the checkpoint taken before the compaction
	noCarry       string // ObjectiveBlock from one checkpoint over the last window, no Previous
	tailOnly      string // the transcript's last Len(inherited) characters
}

// plantedChain is a transcript's session record and latest periodic checkpoint at its end.
type plantedChain struct {
	sess     kv.Session
	facts    []kv.Fact // the session's facts ledger, as the store keeps it with inject.Ledger
	periodic kv.Digest
}

// chainPlanted plays s into the records the real path keeps: the session as kv keeps it
// (Files, and the facts ledger serve keeps with inject.Ledger), and a periodic checkpoint every
// checkpointEvery prompts, each over the last digestWindow turns, carrying the previous one
// forward.
func chainPlanted(s plantedSession) plantedChain {
	c := plantedChain{sess: kv.Session{Scope: "default", ID: "parent", Harness: "claude-code", Project: "/srv/ledger",
		Objective: s.turns[0].Text, Status: kv.StatusActive}}
	prompts := 0
	for i, t := range s.turns {
		c.sess.Files = touchFiles(c.sess.Files, t.Files)
		c.facts = noteTurn(c.facts, &t)
		if t.Role != "user" {
			continue
		}
		if prompts++; prompts%checkpointEvery == 0 {
			c.periodic = inject.BuildDigest(inject.DigestInput{Session: c.sess, Facts: c.facts, Turns: lastTurns(s.turns, i+1, digestWindow), Previous: c.periodic})
		}
	}
	return c
}

// lastTurns is the n turns before end.
func lastTurns(turns []kv.Turn, end, n int) []kv.Turn { return turns[max(0, end-n):end] }

// buildPlanted builds the blocks at the end of s: a sub-agent spawn (the inherited block, built
// like engine/inherit.go builds it, with the digest of the checkpoint written at the spawn:
// BuildDigest over the last digestWindow turns with the latest periodic checkpoint as Previous) and a
// compaction (a pre-compaction checkpoint, built the same way, and the objective block); then
// the variants and the baseline they are compared with.
func buildPlanted(s plantedSession, c plantedChain) plantedBlocks {
	var b plantedBlocks
	b.inherited, b.reinforcement = realPath(s, c)
	b.stored = inheritedPlanted(s, c.sess, c.facts, c.periodic)
	single := inject.BuildDigest(inject.DigestInput{Session: c.sess, Facts: c.facts, Turns: lastTurns(s.turns, len(s.turns), digestWindow)})
	one := kv.Checkpoint{Trigger: kv.TriggerPreCompaction, Digest: single}
	b.noCarry = inject.ObjectiveBlock(inject.Reinforcement{Objective: c.sess.Objective, Checkpoint: &one}, inject.DefaultMaxChars)

	var all strings.Builder
	for _, t := range s.turns {
		fmt.Fprintf(&all, "%s: %s %s\n", t.Role, t.Text, strings.Join(t.Files, " "))
	}
	b.tailOnly = inject.Tail(all.String(), inject.Len(b.inherited))
	return b
}

// realPath builds what heirloom hands over at the end of s: the inherited block at a spawn and
// the objective block after a compaction, each from a digest built then.
func realPath(s plantedSession, c plantedChain) (inherited, reinforcement string) {
	fresh := inject.BuildDigest(inject.DigestInput{Session: c.sess, Facts: c.facts, Turns: lastTurns(s.turns, len(s.turns), digestWindow), Previous: c.periodic})
	pre := kv.Checkpoint{Trigger: kv.TriggerPreCompaction, Digest: fresh}
	return inheritedPlanted(s, c.sess, c.facts, fresh),
		inject.ObjectiveBlock(inject.Reinforcement{Objective: c.sess.Objective, Checkpoint: &pre}, inject.DefaultMaxChars)
}

// plantedTask is the spawned sub-agent's task: its spawn packet names it, as a real spawn's does.
const plantedTask = "Find every caller of the exporter in internal/export/exporter.go and report their files and line numbers."

// inheritedPlanted is the inherited block as engine/inherit.go builds it, plus the digest d
// (rendered without its objective: the block has its own Objective line), under the reply cap:
// with the pointer to session_search (engine.SearchTool) and the spawn packet of a sub-agent at
// depth 1 of the default spawn.max_depth (3), whose task is plantedTask.
func inheritedPlanted(s plantedSession, sess kv.Session, facts []kv.Fact, d kv.Digest) string {
	tail := kv.TailWindow{MinTurns: tailTurnsFirst, MaxTurns: digestWindow, TextBytes: 2 * inject.DefaultTailChars}.Cut(s.turns)
	constraints, decisions, rest := inject.Stated(sess, facts, d)
	rest.Objective = ""
	return inject.Join(inject.DefaultMaxChars, inject.InheritedBlock(inject.Inherited{
		Parent:      sess,
		Digest:      inject.RenderDigest(rest, inject.DefaultDigestChars),
		Tail:        tail,
		Files:       inject.FilesFirst(facts, sess.Files),
		Constraints: append(constraints, inject.InferConstraints([]string{sess.Objective})...),
		Decisions:   decisions,
		SearchTool:  "session_search",
		Packet: inject.Packet{Task: plantedTask, Files: inject.TaskFiles(plantedTask), Workspace: sess.Project,
			Depth: 1, MaxDepth: 3},
	}, inject.Budget{}))
}

// touchFiles is kv's Session.Files bookkeeping: files (in the order touched) go to the front,
// without duplicates, at most kv.MaxFiles.
func touchFiles(have, files []string) []string {
	if len(files) == 0 {
		return have
	}
	var out []string
	seen := map[string]bool{}
	for i := len(files) - 1; i >= 0 && len(out) < sessionFilesMax; i-- {
		if !seen[files[i]] {
			seen[files[i]] = true
			out = append(out, files[i])
		}
	}
	for _, f := range have {
		if len(out) < sessionFilesMax && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// tally counts planted facts found, by kind.
type tally struct{ found, total map[string]int }

func newTally() tally { return tally{map[string]int{}, map[string]int{}} }

func (t tally) add(facts []plantedFact, block string) {
	for _, f := range facts {
		t.total[f.kind]++
		if strings.Contains(block, f.token) {
			t.found[f.kind]++
		}
	}
}

// share is the share of facts of the given kinds found; all kinds when none is given.
func (t tally) share(kinds ...string) float64 {
	if len(kinds) == 0 {
		kinds = factKinds
	}
	found, total := 0, 0
	for _, k := range kinds {
		found += t.found[k]
		total += t.total[k]
	}
	if total == 0 {
		return 0
	}
	return float64(found) / float64(total)
}

// plantedResult is one size's measurements over every seed.
type plantedResult struct {
	size                                              string
	turns, inheritedLen, reinforcementLen             int // averages
	inherited, stored, reinforcement, tailOnly, carry tally
}

// measurePlanted measures the transcripts of one size, one per seed.
func measurePlanted(name string, size int, seeds []uint64) plantedResult {
	r := plantedResult{size: name, inherited: newTally(), stored: newTally(), reinforcement: newTally(), tailOnly: newTally(), carry: newTally()}
	for _, seed := range seeds {
		s := genPlanted(seed, size)
		b := buildPlanted(s, chainPlanted(s))
		r.turns += len(s.turns)
		r.inheritedLen += inject.Len(b.inherited)
		r.reinforcementLen += inject.Len(b.reinforcement)
		r.inherited.add(s.facts, b.inherited)
		r.stored.add(s.facts, b.stored)
		r.reinforcement.add(s.facts, b.reinforcement)
		r.tailOnly.add(s.facts, b.tailOnly)
		r.carry.add(s.facts, b.noCarry)
	}
	n := len(seeds)
	r.turns, r.inheritedLen, r.reinforcementLen = r.turns/n, r.inheritedLen/n, r.reinforcementLen/n
	return r
}

// plantedTable renders the results as the markdown report.
func plantedTable(results []plantedResult) string {
	var b strings.Builder
	oc := []string{factObjective, factConstraint}
	fmt.Fprintf(&b, "| transcript | turns | inherited block | reinforcement block | tail-only (inherited's size) | inherited, stored checkpoint | reinforcement, no carry-forward |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %.2f / %.2f (%d chars) | %.2f / %.2f (%d chars) | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f |\n",
			r.size, r.turns,
			r.inherited.share(oc...), r.inherited.share(), r.inheritedLen,
			r.reinforcement.share(oc...), r.reinforcement.share(), r.reinforcementLen,
			r.tailOnly.share(oc...), r.tailOnly.share(),
			r.stored.share(oc...), r.stored.share(),
			r.carry.share(oc...), r.carry.share())
	}
	fmt.Fprintf(&b, "\nBy kind of fact (share found; inherited / reinforcement / tail-only):\n\n")
	fmt.Fprintf(&b, "| transcript |")
	for _, k := range factKinds {
		fmt.Fprintf(&b, " %s |", k)
	}
	fmt.Fprintf(&b, "\n|---|%s\n", strings.Repeat("---|", len(factKinds)))
	for _, r := range results {
		fmt.Fprintf(&b, "| %s |", r.size)
		for _, k := range factKinds {
			fmt.Fprintf(&b, " %.2f / %.2f / %.2f |", r.inherited.share(k), r.reinforcement.share(k), r.tailOnly.share(k))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// plantedDoc is the text around the table in testdata/planted.md.
const plantedDoc = `# Planted-fact benchmark: what survives the budget

Synthetic parent transcripts (user prompts, assistant text, Read/Bash/Edit tool turns of filler
words, generated from fixed seeds; %d transcripts per size) with facts planted at random places:
the objective (the first prompt), 5 constraints ("never", "must", "keep … stable", "do not",
"always") and 3 decisions (plain statements, never stated through the API or MCP) inside random
user prompts, 4 file names in random tool turns (the filler touches a working set of 30 files),
and a change of plan in one of the last 10 prompts. A fact counts as present when its unique
token is in the block.

What is built is what the real path builds. The session record as kv keeps it (Files most
recent first, at most 50), and a periodic checkpoint every 10 prompts, each BuildDigest over the
last 200 turns with the previous checkpoint's digest as Previous. At the end, a digest built the
same way (over the last 200 turns, Previous = the latest periodic checkpoint: the checkpoint
heirloom writes when the parent spawns) feeds a sub-agent's inherited block (InheritedBlock with
RenderDigest of it, the tail window read as engine/inherit.go reads it: at least 40 turns, more
until their text is twice the tail budget, at most 200; InferConstraints over the objective and
that tail; the pointer to session_search; the spawn packet of a sub-agent at depth 1 of 3 whose
task names one file; default budgets: tail up to the whole block, block 9500)
and, as the pre-compaction checkpoint, the objective block (ObjectiveBlock, 9500). The tail-only
baseline is the transcript's last characters, as many as the inherited block has: what tools
without a digest inject. Two variants show what each design choice is worth: the inherited block
with the latest periodic checkpoint as stored (up to 9 prompts old) instead of a digest built at
the spawn, and the objective block from a single checkpoint over the last 200 turns, without
Previous.

Cells read "objective+constraints share / all-facts share". Targets, at every size for heirloom's
blocks: objective and constraints ≥ 0.9; decisions, the change of plan and files ≥ 0.9 each.

%s
Building both blocks at the end of a transcript (a digest over 200 turns, the inherited block,
the objective block) takes about 1 ms once the transcript has 200 turns, whatever its size
beyond (0.4 ms at 10 KB; BenchmarkPlantedFacts, 2026-11-27).

Reproduce (-update writes this report to inject/testdata/planted.md):

    go test -run TestPlantedFacts -v ./inject/ -update
    go test -run '^$' -bench PlantedFacts ./inject/
`

// TestPlantedFacts runs the planted-fact benchmark at every size, logs the table, and checks the
// targets: objective and constraints ≥ 0.9, and decisions, the change of plan and files ≥ 0.9
// each, in both of heirloom's blocks. With -update it writes
// the report to testdata/planted.md. With -short it measures 5 seeds, not all 20.
func TestPlantedFacts(t *testing.T) {
	seeds := plantedSeeds
	if testing.Short() && !*update {
		seeds = seeds[:5]
	}
	var results []plantedResult
	for _, sz := range plantedSizes {
		r := measurePlanted(sz.name, sz.bytes, seeds)
		results = append(results, r)
		oc := []string{factObjective, factConstraint}
		if got := r.inherited.share(oc...); got < 0.9 {
			t.Errorf("%s: inherited block keeps %.2f of objective and constraints, want >= 0.9", sz.name, got)
		}
		if got := r.reinforcement.share(oc...); got < 0.9 {
			t.Errorf("%s: reinforcement block keeps %.2f of objective and constraints, want >= 0.9", sz.name, got)
		}
		// The facts ledger: decisions, the change of plan and the files changed, wherever they
		// were stated or made.
		for _, kind := range []string{factDecision, factChange, factFile} {
			if got := r.inherited.share(kind); got < 0.9 {
				t.Errorf("%s: inherited block keeps %.2f of the %ss, want >= 0.9", sz.name, got, kind)
			}
			if got := r.reinforcement.share(kind); got < 0.9 {
				t.Errorf("%s: reinforcement block keeps %.2f of the %ss, want >= 0.9", sz.name, got, kind)
			}
		}
	}
	table := plantedTable(results)
	t.Log("\n" + table)
	if *update {
		doc := fmt.Sprintf(plantedDoc, len(plantedSeeds), table)
		if err := os.WriteFile(filepath.Join("testdata", "planted.md"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlantedDeterministic checks that a transcript and its blocks depend only on the seed.
func TestPlantedDeterministic(t *testing.T) {
	a, b := genPlanted(7, 50<<10), genPlanted(7, 50<<10)
	if ba, bb := buildPlanted(a, chainPlanted(a)), buildPlanted(b, chainPlanted(b)); ba != bb {
		t.Fatalf("blocks differ between two generations of seed 7")
	}
	for _, f := range a.facts {
		var n int
		for _, turn := range a.turns {
			n += strings.Count(turn.Text+strings.Join(turn.Files, " "), f.token)
		}
		if n != 1 {
			t.Errorf("token %s (%s) occurs %d times in the transcript, want 1", f.token, f.kind, n)
		}
	}
}

// BenchmarkPlantedFacts times what heirloom builds at the end of a transcript (realPath: a
// digest over the last 200 turns, the inherited block and the objective block) and reports the shares of planted
// facts found, over every seed.
func BenchmarkPlantedFacts(b *testing.B) {
	for _, sz := range plantedSizes {
		b.Run(strings.ReplaceAll(sz.name, " ", ""), func(b *testing.B) {
			s := genPlanted(plantedSeeds[0], sz.bytes)
			c := chainPlanted(s)
			for b.Loop() {
				realPath(s, c)
			}
			b.StopTimer()
			r := measurePlanted(sz.name, sz.bytes, plantedSeeds)
			oc := []string{factObjective, factConstraint}
			b.ReportMetric(r.inherited.share(oc...), "objcon-inherited")
			b.ReportMetric(r.inherited.share(), "all-inherited")
			b.ReportMetric(r.reinforcement.share(oc...), "objcon-reinforce")
			b.ReportMetric(r.reinforcement.share(), "all-reinforce")
			b.ReportMetric(r.tailOnly.share(oc...), "objcon-tailonly")
			b.ReportMetric(r.tailOnly.share(), "all-tailonly")
		})
	}
}

// TestPlantedGolden pins the two blocks heirloom builds at the end of a planted transcript of
// several sizes (seed 1): the inherited block and the objective reinforcement, byte for byte, in
// testdata/planted/<size>.golden (-update rewrites them). A change to what reaches a child shows
// in review as a diff of real blocks, not only as a share in the table.
func TestPlantedGolden(t *testing.T) {
	for _, sz := range []struct {
		name  string
		bytes int
	}{{"10kb", 10 << 10}, {"500kb", 500 << 10}, {"2mb", 2 << 20}} {
		t.Run(sz.name, func(t *testing.T) {
			s := genPlanted(plantedSeeds[0], sz.bytes)
			inherited, reinforcement := realPath(s, chainPlanted(s))
			if n := inject.Len(inherited); n > inject.DefaultMaxChars {
				t.Errorf("inherited block of %d characters, over the cap", n)
			}
			checkGolden(t, filepath.Join("testdata", "planted", sz.name+".golden"),
				"=== inherited ===\n"+inherited+"\n=== reinforcement ===\n"+reinforcement+"\n")
		})
	}
}
