package inject

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/inject/textcut"

	"github.com/heirloom-dev/heirloom/kv"
)

// DefaultDigestChars is RenderDigest's budget when it is given none: the room InheritedBlock
// gives a checkpoint digest.
const DefaultDigestChars = digestChars

// Caps of a digest, in UTF-16 units (see Len) or in items. BuildDigest applies them when it
// builds a digest and RenderDigest applies them again, so a digest from elsewhere (an
// agent-written checkpoint) renders within them too. With every cap full a digest renders to
// about 21,000 units; RenderDigest cuts it to its budget.
const (
	digestPrompts  = 5    // latest user prompts kept
	promptChars    = 300  // each prompt (cut in the middle, see fitMiddle)
	maxDecisions   = 12   // decisions kept, the most recently stated
	replyChars     = 500  // the last assistant message excerpt (Head-cut)
	maxRuns        = 8    // open runs kept, and finished runs kept: the most recent of each
	runTitleChars  = 120  // a run's description (Head-cut)
	runStatusChars = 40   // a run's status word (Head-cut)
	runResultChars = 200  // a finished run's condensed result (Head-cut)
	resultMinChars = 60   // a condensed result takes sentences until it is at least this long
	summaryChars   = 1000 // the agent's own summary (Head-cut)
	maxNextSteps   = 8    // next steps kept, the first ones the agent wrote
	nextStepChars  = 200  // each next step (Head-cut)
)

// DigestInput is what a checkpoint digest is built from: records read from the store.
// The zero value builds an empty digest.
type DigestInput struct {
	Session     kv.Session // its Objective is the objective; its Files are the files touched
	Turns       []kv.Turn  // the session's latest turns, ascending Seq (the caller reads a bounded window)
	Runs        []kv.Run   // sub-agent runs the session spawned, any order
	Decisions   []string   // stated explicitly (API/MCP), oldest first
	Constraints []string   // stated explicitly (API/MCP), oldest first
	Facts       []kv.Fact  // the session's facts ledger (kv.FactFinder), oldest first
	// Summary and NextSteps are the agent's own account of where the session stands and what
	// comes next (session_digest). Empty both: Previous's carry forward, as one unit.
	Summary   string
	NextSteps []string

	// Previous is the digest of the session's latest checkpoint before this one; zero when there
	// is none. Its decisions, constraints, prompts, files, last reply and objective carry forward,
	// so what was stated before the window of Turns is not lost: a chain of checkpoints
	// remembers a whole session while each one reads a bounded window. Its runs do not carry
	// forward: Runs is the truth about them.
	Previous kv.Digest
}

// BuildDigest builds the digest of a checkpoint from in. It is deterministic: the same input
// gives the same digest, whatever the order of in.Runs. Every text is made valid UTF-8,
// redacted (see Redact) and has its whitespace collapsed before it is measured or compared.
//
//   - Objective: in.Session.Objective, else Previous.Objective; Head-cut to 1000 units.
//   - Prompts: the latest 5 distinct user prompts, oldest first: Previous.Prompts followed by
//     the user turns of in.Turns, a repeated prompt counting at its latest place; a prompt equal
//     to the objective is left out. Each is cut to 300 units in the middle: a longer prompt keeps
//     its start (two thirds of the room) and its end, joined by " […] ", so an instruction
//     before or after a pasted log survives.
//   - Decisions: Previous.Decisions, then in.Decisions, then the decisions and changes of plan
//     of the session's facts ledger (in.Facts) still in force, marked Inferred;
//     deduplicated ignoring case and trailing punctuation (a restatement counts at its latest
//     place), the 12 most recent, oldest first. Previous's inferred ones that the ledger has seen
//     superseded are dropped.
//   - Constraints: explicit ones (Previous's explicit ones, then in.Constraints) first, then
//     inferred ones, each group oldest first (by latest statement), at most 12 in all (see
//     MaxConstraints), explicit ones preferred, then the most recent. Inferred ones are the
//     imperative sentences InferConstraints finds in the objective, Previous's inferred ones,
//     the user turns of in.Turns, and the constraints of the session's facts ledger, in that
//     order; they are marked Inferred. A constraint
//     stated both ways is explicit. Each is Head-cut to 300 units.
//   - Files: in.Session.Files (most recent first); when it is empty, the files of in.Turns,
//     newest turn first, then Previous.Files. Deduplicated, at most 20, each put on one line
//     and Tail-cut to 300 units.
//   - LastAssistant: the newest assistant turn with text, else Previous.LastAssistant; Head-cut
//     to 500 units.
//   - OpenRuns: runs with status pending or running, the 8 created last, oldest first.
//   - FinishedRuns: the other runs, the 8 that ended last (by EndedAt, else CreatedAt), oldest
//     first, each with a condensed result: its first sentences that are not a Markdown heading
//     or fence, until they reach 60 units, Head-cut to 200 units.
//
// A run's Description is Head-cut to 120 units (with none, its prompt or type stands in) and
// its status to 40.
func BuildDigest(in DigestInput) kv.Digest {
	prev := in.Previous
	turns := slices.Clone(in.Turns)
	slices.SortStableFunc(turns, func(a, b kv.Turn) int { return cmp.Compare(a.Seq, b.Seq) })

	objectiveRaw := in.Session.Objective
	objective := oneLine(objectiveRaw, objectiveChars)
	if objective == "" {
		objectiveRaw = prev.Objective
		objective = oneLine(objectiveRaw, objectiveChars)
	}
	var userTexts []string
	for _, t := range turns {
		if t.Role == "user" {
			userTexts = append(userTexts, t.Text)
		}
	}

	d := kv.Digest{Objective: objective}
	d.Summary, d.NextSteps = buildSummary(in.Summary, in.NextSteps, prev)
	d.Prompts = buildPrompts(prev.Prompts, userTexts, objective)
	d.Decisions = buildDecisions(prev.Decisions, in.Decisions, in.Facts)
	d.Constraints = buildConstraints(prev.Constraints, in.Constraints, objectiveRaw, userTexts, in.Facts)
	d.Files = buildFiles(in.Facts, in.Session.Files, turns, prev.Files)
	d.LastAssistant = oneLine(prev.LastAssistant, replyChars)
	for i := len(turns) - 1; i >= 0; i-- {
		if t := turns[i]; t.Role == "assistant" {
			if text := oneLine(t.Text, replyChars); text != "" {
				d.LastAssistant = text
				break
			}
		}
	}
	d.OpenRuns, d.FinishedRuns = buildRuns(in.Runs)
	return d
}

// buildSummary returns the agent's summary and next steps, cut to their caps: summary and steps
// when either is given, else prev's.
func buildSummary(summary string, steps []string, prev kv.Digest) (string, []string) {
	if strings.TrimSpace(summary) == "" && len(steps) == 0 {
		summary, steps = prev.Summary, prev.NextSteps
	}
	var out []string
	for _, st := range steps {
		if len(out) == maxNextSteps {
			break
		}
		if text := oneLine(st, nextStepChars); text != "" {
			out = append(out, text)
		}
	}
	return oneLine(summary, summaryChars), out
}

// buildPrompts returns the latest digestPrompts distinct prompts: prev, then texts, oldest
// first; those equal to objective are left out.
func buildPrompts(prev, texts []string, objective string) []string {
	var all []kv.Statement
	for _, p := range prev {
		all = append(all, kv.Statement{Text: fitMiddle(p, promptChars)})
	}
	for _, t := range texts {
		if objective != "" && oneLine(t, objectiveChars) == objective {
			continue
		}
		all = append(all, kv.Statement{Text: fitMiddle(t, promptChars)})
	}
	var out []string
	for _, s := range latest(all, digestPrompts, nil) {
		out = append(out, s.Text)
	}
	return out
}

// fitMiddle is s made valid, redacted and put on one line, then cut to max units in the middle
// when it is longer: the start (two thirds of the room) and the end are kept, each cut at a word
// or rune boundary, joined by " […] ". An instruction at either end of a long prompt, around a
// pasted log, survives. Only the first and the last rawBudget(max) bytes of s are read.
func fitMiddle(s string, max int) string {
	n := rawBudget(max)
	if len(s) <= 2*n {
		t := collapse(Redact(clean(s)))
		if Len(t) <= max {
			return t
		}
		return joinMiddle(t, t, max)
	}
	h, _ := clipHead(s, n)
	t, _ := clipTail(s, n)
	return joinMiddle(collapse(Redact(clean(h))), collapse(Redact(clean(t))), max)
}

// joinMiddle joins a cut start of h and a cut end of t, max units in all; each is cut even when
// it fits, since h and t are parts of a longer text.
func joinMiddle(h, t string, max int) string {
	headRoom := max * 2 / 3
	first := head(h, headRoom, true)                                                                  // "start […]"
	last := strings.TrimPrefix(tail(t, max-Len(first)-1+textcut.MarkerLen, true), textcut.TailMarker) // "end"
	switch {
	case first == "":
		return tail(t, max, true)
	case last == "":
		return first
	}
	return first + " " + last
}

// buildDecisions returns the maxDecisions most recent distinct decisions, oldest first:
// Previous's (less those the ledger has seen superseded), the explicit ones, then the ledger's
// decisions and changes of plan in force (inferred).
func buildDecisions(prev []kv.Statement, explicit []string, ledger []kv.Fact) []kv.Statement {
	replaced := Superseded(ledger)
	var all []kv.Statement
	for _, s := range prev {
		text := oneLine(s.Text, constraintChars)
		if !(s.Inferred && replaced(text)) {
			all = append(all, kv.Statement{Text: text, Inferred: s.Inferred})
		}
	}
	for _, s := range explicit {
		all = append(all, kv.Statement{Text: oneLine(s, constraintChars)})
	}
	for _, f := range InForce(ledger, kv.FactDecision, kv.FactPlan) {
		all = append(all, kv.Statement{Text: oneLine(f.Text, constraintChars), Inferred: true})
	}
	return latest(all, maxDecisions, nil)
}

// buildConstraints returns the explicit constraints, then the inferred ones (see BuildDigest).
func buildConstraints(prev []kv.Statement, explicit []string, objective string, prompts []string, ledger []kv.Fact) []kv.Statement {
	var stated, inferred []kv.Statement
	for _, s := range prev {
		if !s.Inferred {
			stated = append(stated, kv.Statement{Text: oneLine(s.Text, constraintChars)})
		}
	}
	for _, s := range explicit {
		stated = append(stated, kv.Statement{Text: oneLine(s, constraintChars)})
	}
	stated = latest(stated, MaxConstraints, nil)
	taken := map[string]bool{}
	for _, s := range stated {
		taken[constraintKey(s.Text)] = true
	}

	for _, c := range constraintsIn(objective) {
		inferred = append(inferred, kv.Statement{Text: c, Inferred: true})
	}
	for _, s := range prev {
		if s.Inferred {
			inferred = append(inferred, kv.Statement{Text: oneLine(s.Text, constraintChars), Inferred: true})
		}
	}
	for _, p := range prompts {
		for _, c := range constraintsIn(p) {
			inferred = append(inferred, kv.Statement{Text: c, Inferred: true})
		}
	}
	for _, f := range InForce(ledger, kv.FactConstraint) {
		inferred = append(inferred, kv.Statement{Text: oneLine(f.Text, constraintChars), Inferred: true})
	}
	inferred = latest(inferred, MaxConstraints-len(stated), taken)
	return append(stated, inferred...)
}

// latest deduplicates items by constraintKey of their text, each counted at its latest place
// (where its text is taken from), drops empty ones and those whose key is in skip, and returns
// the last n, in order. It returns nil when none is left.
func latest(items []kv.Statement, n int, skip map[string]bool) []kv.Statement {
	last := map[string]int{}
	for i, it := range items {
		if it.Text != "" {
			last[constraintKey(it.Text)] = i
		}
	}
	var out []kv.Statement
	for i, it := range items {
		if k := constraintKey(it.Text); it.Text != "" && last[k] == i && !skip[k] {
			out = append(out, it)
		}
	}
	if n <= 0 {
		return nil
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// buildFiles returns the files touched, most recent first: session's, else those of turns
// (newest first) and then prev's; deduplicated, at most maxFiles.
func buildFiles(ledger []kv.Fact, session []string, turns []kv.Turn, prev []string) []string {
	files := session
	if len(files) == 0 {
		for i := len(turns) - 1; i >= 0; i-- {
			for j := len(turns[i].Files) - 1; j >= 0; j-- {
				files = append(files, turns[i].Files[j])
			}
		}
		files = append(files, prev...)
	}
	files = FilesFirst(ledger, files)
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		if len(out) == maxFiles {
			break
		}
		if p := fitTail(f, pathChars, flatten); p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// FinishedRuns is what BuildDigest puts in Digest.FinishedRuns for runs: a checkpoint whose
// FinishedRuns differ from it no longer tells a child what its siblings returned.
func FinishedRuns(runs []kv.Run) []kv.RunDigest {
	_, finished := buildRuns(runs)
	return finished
}

// buildRuns splits runs into open and finished ones (see BuildDigest).
func buildRuns(runs []kv.Run) (open, finished []kv.RunDigest) {
	var o, f []kv.Run
	for _, r := range runs {
		if r.Status == kv.RunPending || r.Status == kv.RunRunning {
			o = append(o, r)
		} else {
			f = append(f, r)
		}
	}
	byRun := func(a, b kv.Run) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID), cmp.Compare(a.ChildID, b.ChildID))
	}
	slices.SortStableFunc(o, byRun)
	slices.SortStableFunc(f, func(a, b kv.Run) int {
		return cmp.Or(runEnd(a).Compare(runEnd(b)), byRun(a, b))
	})
	for _, r := range o[max(0, len(o)-maxRuns):] {
		open = append(open, runDigest(r))
	}
	for _, r := range f[max(0, len(f)-maxRuns):] {
		d := runDigest(r)
		d.Result = condense(r.Result, runResultChars)
		finished = append(finished, d)
	}
	return open, finished
}

// runEnd is when r ended, else when it was asked for.
func runEnd(r kv.Run) time.Time {
	if !r.EndedAt.IsZero() {
		return r.EndedAt
	}
	return r.CreatedAt
}

// runDigest is r as a digest remembers it, without its result.
func runDigest(r kv.Run) kv.RunDigest {
	return kv.RunDigest{
		RunID:       r.ID,
		ChildID:     r.ChildID,
		Description: runTitle(r.Description, r.Prompt, r.Type),
		Status:      oneLine(r.Status, runStatusChars),
	}
}

// runTitle is the first of texts that is not blank, on one line, Head-cut to runTitleChars.
func runTitle(texts ...string) string {
	for _, t := range texts {
		if s := oneLine(t, runTitleChars); s != "" {
			return s
		}
	}
	return ""
}

// condense returns the gist of a sub-agent's result: its first sentences that are not a
// Markdown heading or code fence, until they reach resultMinChars units, on one line,
// redacted and Head-cut to max.
func condense(result string, max int) string {
	raw, _ := clipHead(result, rawBudget(max))
	text := normalizeLines(Redact(clean(raw)))
	var parts []string
	n := 0
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "```") {
			continue
		}
		line = listMarker.ReplaceAllString(line, "")
		for _, s := range sentences(line) {
			if s = collapse(s); s == "" {
				continue
			}
			parts = append(parts, s)
			if n += Len(s) + 1; n > resultMinChars {
				break
			}
		}
		if n > resultMinChars {
			break
		}
	}
	if len(parts) == 0 {
		return Head(collapse(text), max)
	}
	return Head(strings.Join(parts, " "), max)
}
