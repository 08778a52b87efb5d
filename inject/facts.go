package inject

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/heirloom-dev/heirloom/kv"
)

// Bounds of a session's facts ledger.
const (
	maxLedgerConstraints = 16 // constraints kept, the most recently stated
	maxLedgerDecisions   = 16 // decisions and changes of plan in force, the most recent
	maxLedgerReplaced    = 16 // superseded ones kept: a checkpoint's older decisions are checked against them
	maxLedgerFiles       = 20 // files changed kept, the most recently changed
	factChars            = 300
	userFactBytes        = 32 << 10 // of a prompt, what is read for facts
	assistantFactBytes   = 8 << 10  // of a reply
)

// Ledger keeps a session's facts ledger as its turns are stored (it is the store's
// kv.FactFinder): the constraints and decisions a user's prompt states, the decisions and
// changes of plan an assistant states in the first person, each with its turn. A decision or
// change of plan that names what it replaces ("use SQLite, not Postgres", "switch from the v1
// client to v2", "no longer use X") supersedes the earlier decisions that name it; a change of
// plan that names nothing supersedes the previous change of plan. A restatement moves a fact to
// its latest turn rather than adding it twice.
type Ledger struct{}

var _ kv.FactFinder = Ledger{}

// Detect returns what t states (DetectFacts) and the files it changed (ChangedFiles).
func (Ledger) Detect(t *kv.Turn) []kv.Fact {
	return append(DetectFacts(t.Role, t.Text), ChangedFiles(t)...)
}

// editTools are the tools that change the files their input names, in lower case: Claude
// Code's Edit, Write, MultiEdit and NotebookEdit; OpenCode's and OpenClaw's edit and write; the
// editors of other harnesses. Patch tools (apply_patch) name their files inside the patch text,
// which turns do not carry as files: they are not counted yet.
var editTools = map[string]bool{
	"edit": true, "write": true, "multiedit": true, "notebookedit": true,
	"str_replace_editor": true, "str_replace_based_edit_tool": true, "create_file": true,
}

// ChangedFiles returns a file fact for each file t's tool changed (an edit or a write), none for
// a turn of any other tool. An assistant turn names its first tool call's tool but the files of
// all its calls: it counts only when it names one file (the harness's own tool turns, one per
// call, count the rest).
func ChangedFiles(t *kv.Turn) []kv.Fact {
	if !editTools[strings.ToLower(t.Tool)] || t.Role == "assistant" && len(t.Files) > 1 {
		return nil
	}
	var out []kv.Fact
	for _, f := range t.Files {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, kv.Fact{Kind: kv.FactFile, Text: f, Role: t.Role})
		}
	}
	return out
}

// Note returns ledger with what t states (found, from Detect). A turn replaced in place (a streamed message that
// grew) first takes back what it stated before, and what it had superseded holds again until
// its new text supersedes it anew; a fact of t that a later turn supersedes stays superseded.
func (Ledger) Note(ledger []kv.Fact, t *kv.Turn, found []kv.Fact) []kv.Fact {
	restated := slices.ContainsFunc(ledger, func(f kv.Fact) bool { return f.Seq == t.Seq || f.Replaced && f.ReplacedAt == t.Seq })
	if len(found) == 0 && !restated {
		return ledger
	}
	out := slices.Clone(ledger)
	if restated {
		out = slices.DeleteFunc(out, func(f kv.Fact) bool { return f.Seq == t.Seq })
		for i := range out {
			if out[i].Replaced && out[i].ReplacedAt == t.Seq {
				out[i].Replaced, out[i].ReplacedAt = false, 0
			}
		}
	}
	for _, f := range found {
		f.Seq = t.Seq
		out = addFact(out, f)
	}
	return boundLedger(out)
}

// DetectFacts returns the facts one turn's text states, in reading order, without Seq: for a
// user's prompt its constraints, decisions and changes of plan; for an assistant's reply only
// decisions and changes of plan it states in the first person ("I'll use …", "Decision: …").
// Other roles state none. The text is redacted first; fenced code blocks, lines of code, logs,
// shell, stack traces and quotes, questions and hypotheses ("if we …", "should we …") are never
// facts, nor is a sentence whose phrase is only inside double quotes. Each fact is one sentence,
// whitespace collapsed, Head-cut to 300 units.
func DetectFacts(role, text string) []kv.Fact {
	limit := userFactBytes
	switch role {
	case "user":
	case "assistant":
		limit = assistantFactBytes
	default:
		return nil
	}
	text, _ = clipHead(clean(text), limit)
	if !hasTrigger(role, strings.ToLower(collapse(text))) {
		return nil // most turns: no phrase can match anywhere
	}
	text = Redact(stripFences(text))
	var out []kv.Fact
	for _, line := range strings.Split(text, "\n") {
		if notProse(line) {
			continue
		}
		line = listMarker.ReplaceAllString(strings.TrimSpace(line), "")
		for _, s := range sentences(line) {
			s = collapse(s) // as the patterns see it: one space between words
			lower := strings.ToLower(s)
			if !hasTrigger(role, lower) {
				continue // most sentences: no phrase can match
			}
			if s == "" || strings.HasSuffix(s, "?") || notStatement.MatchString(lower) {
				continue
			}
			kind := classify(role, s)
			if kind == "" {
				continue
			}
			out = append(out, kv.Fact{Kind: kind, Text: Head(s, factChars), Role: role})
		}
	}
	return out
}

// classify returns the kind of fact sentence s states, or "" (see the phrase corpus).
func classify(role, s string) string {
	if strings.ContainsAny(s, "\"“") {
		s = quoted.ReplaceAllString(s, `""`) // a phrase only inside quotes is reported speech
	}
	m := strings.ToLower(s)
	if !hasTrigger(role, m) {
		return ""
	}
	if role == "assistant" {
		if !assistantVoice.MatchString(m) {
			return ""
		}
		switch {
		case assistantPlan.MatchString(m) && planPhrase.MatchString(m):
			return kv.FactPlan
		case decisionPhrase.MatchString(m) && !notDecision.MatchString(m):
			return kv.FactDecision
		}
		return ""
	}
	switch {
	case planPhrase.MatchString(m):
		return kv.FactPlan
	case constraintPhrase.MatchString(m) && !notConstraint.MatchString(m):
		return kv.FactConstraint
	case decisionPhrase.MatchString(m) && (!notDecision.MatchString(m) || strings.Contains(m, "from now on")):
		return kv.FactDecision
	}
	return ""
}

var (
	quoted = regexp.MustCompile(`"[^"]{0,300}"|“[^”]{0,300}”`)
	fence  = regexp.MustCompile("(?s)```.*?(?:```|$)|~~~.*?(?:~~~|$)")
)

// stripFences removes fenced code blocks (an unclosed fence runs to the end).
func stripFences(s string) string {
	if !strings.Contains(s, "```") && !strings.Contains(s, "~~~") {
		return s
	}
	return fence.ReplaceAllString(s, "\n")
}

// addFact adds f (its Seq set) to ledger. A fact already in force with the same text keeps its
// first turn (a restatement adds nothing). A decision or change of plan supersedes the earlier
// ones that hold every word of what it names as replaced ("instead of X", "switch from X"); a
// change of plan with a marker of its own ("change of plan", "scratch that", "new plan") that
// names nothing supersedes the previous change of plan. When f comes from a turn stored again
// while later facts exist, those later facts supersede f as they would have.
func addFact(ledger []kv.Fact, f kv.Fact) []kv.Fact {
	if f.Kind == kv.FactFile { // a file changed again counts at its latest change
		for i, old := range ledger {
			if old.Kind == kv.FactFile && old.Text == f.Text {
				ledger[i].Seq = max(old.Seq, f.Seq)
				ledger[i].Replaced, ledger[i].ReplacedAt = false, 0
				return ledger
			}
		}
		return append(ledger, f)
	}
	key := constraintKey(f.Text)
	for _, old := range ledger {
		if !old.Replaced && old.Kind == f.Kind && constraintKey(old.Text) == key {
			return ledger
		}
	}
	if f.Kind == kv.FactConstraint {
		return append(ledger, f)
	}
	words := replacedWords(f.Text)
	latestPlan := -1
	for i, old := range ledger {
		if old.Replaced || old.Kind == kv.FactConstraint || old.Kind == kv.FactFile {
			continue // only decisions and changes of plan supersede each other
		}
		if old.Seq > f.Seq { // a later fact: may it supersede f?
			if w := replacedWords(old.Text); len(w) > 0 && holdsAll(f.Text, w) && !f.Replaced {
				f.Replaced, f.ReplacedAt = true, old.Seq
			}
			continue
		}
		if len(words) > 0 && holdsAll(old.Text, words) {
			ledger[i].Replaced, ledger[i].ReplacedAt = true, f.Seq
			if f.Replaces == "" {
				f.Replaces = old.Text
			}
		}
		if old.Kind == kv.FactPlan && (latestPlan < 0 || old.Seq >= ledger[latestPlan].Seq) {
			latestPlan = i
		}
	}
	if f.Kind == kv.FactPlan && len(words) == 0 && latestPlan >= 0 && planMarker.MatchString(f.Text) && !ledger[latestPlan].Replaced {
		ledger[latestPlan].Replaced, ledger[latestPlan].ReplacedAt = true, f.Seq
		f.Replaces = ledger[latestPlan].Text
	}
	return append(ledger, f)
}

// replacedWords are the significant words (lower case) of what sentence s says it replaces;
// none when it names nothing.
func replacedWords(s string) []string {
	m := replacedPhrase.FindStringSubmatch(s)
	if m == nil {
		return nil
	}
	var out []string
	for _, w := range wordsOf(m[1]) {
		if len(w) >= 2 && !factFiller[w] {
			out = append(out, w)
		}
	}
	return out
}

// holdsAll reports whether text holds every one of words as a word, ignoring case.
func holdsAll(text string, words []string) bool {
	have := map[string]bool{}
	for _, w := range wordsOf(text) {
		have[w] = true
	}
	for _, w := range words {
		if !have[w] {
			return false
		}
	}
	return true
}

var wordRun = regexp.MustCompile(`[\p{L}\p{N}_][\p{L}\p{N}_.\-/]*[\p{L}\p{N}_]|[\p{L}\p{N}_]`)

// wordsOf lists text's words in lower case (a word keeps inner dots, dashes and slashes, so
// v1.2, pgx/v5 and the-client stay whole).
func wordsOf(text string) []string {
	return wordRun.FindAllString(strings.ToLower(text), -1)
}

// factFiller are words that say nothing about what is replaced.
var factFiller = map[string]bool{"the": true, "a": true, "an": true, "our": true, "my": true, "this": true, "that": true, "it": true, "using": true, "use": true, "of": true}

// boundLedger keeps the newest facts within the bounds, ordered by Seq.
func boundLedger(ledger []kv.Fact) []kv.Fact {
	slices.SortStableFunc(ledger, func(x, y kv.Fact) int { return cmp.Compare(x.Seq, y.Seq) })
	counts := map[string]int{}
	keep := make([]bool, len(ledger))
	for i := len(ledger) - 1; i >= 0; i-- {
		f := ledger[i]
		group, limit := "decision", maxLedgerDecisions
		switch {
		case f.Replaced:
			group, limit = "replaced", maxLedgerReplaced
		case f.Kind == kv.FactConstraint:
			group, limit = "constraint", maxLedgerConstraints
		case f.Kind == kv.FactFile:
			group, limit = "file", maxLedgerFiles
		}
		if counts[group] < limit {
			counts[group]++
			keep[i] = true
		}
	}
	out := ledger[:0]
	for i, f := range ledger {
		if keep[i] {
			out = append(out, f)
		}
	}
	return out
}

// InForce returns the ledger's facts of the given kinds still in force, oldest first.
func InForce(ledger []kv.Fact, kinds ...string) []kv.Fact {
	var out []kv.Fact
	for _, f := range ledger {
		if !f.Replaced && slices.Contains(kinds, f.Kind) {
			out = append(out, f)
		}
	}
	return out
}

// Superseded returns a test of whether a text is one of the ledger's superseded facts (ignoring
// case and trailing punctuation, as restatements are).
func Superseded(ledger []kv.Fact) func(text string) bool {
	replaced := map[string]bool{}
	for _, f := range ledger {
		if f.Replaced {
			replaced[constraintKey(collapse(f.Text))] = true
		}
	}
	return func(text string) bool { return replaced[constraintKey(collapse(text))] }
}

// Stated gathers what the inherited block says once, in sections of its own, from the parent,
// its facts ledger and the digest d of its latest checkpoint (zero when it has none): the constraints (the
// explicit ones, the ledger's newest in force, the checkpoint's, which carry what was stated
// before the ledger began) and the decisions and changes of plan (the checkpoint's not
// superseded since, the explicit ones, the ledger's in force, oldest first); and d without
// either, for the digest section.
func Stated(parent kv.Session, facts []kv.Fact, d kv.Digest) (constraints []string, decisions []kv.Fact, rest kv.Digest) {
	constraints = append(constraints, parent.Constraints...)
	ledger := InForce(facts, kv.FactConstraint)
	for _, f := range ledger[max(0, len(ledger)-MaxConstraints):] {
		constraints = append(constraints, f.Text)
	}
	for _, c := range d.Constraints {
		constraints = append(constraints, c.Text)
	}
	superseded := Superseded(facts)
	for _, c := range d.Decisions {
		if !superseded(c.Text) { // a checkpoint older than the change that superseded it
			decisions = append(decisions, kv.Fact{Kind: kv.FactDecision, Text: c.Text})
		}
	}
	for _, text := range parent.Decisions {
		decisions = append(decisions, kv.Fact{Kind: kv.FactDecision, Text: text})
	}
	decisions = append(decisions, InForce(facts, kv.FactDecision, kv.FactPlan)...)
	d.Constraints, d.Decisions = nil, nil
	return constraints, decisions, d
}

// FilesFirst returns the files the ledger says were changed, most recently changed first, then
// touched (most recent first, as kv keeps Session.Files): a child needs what its parent changed
// more than what it read.
func FilesFirst(ledger []kv.Fact, touched []string) []string {
	changed := InForce(ledger, kv.FactFile)
	slices.SortStableFunc(changed, func(x, y kv.Fact) int { return cmp.Compare(y.Seq, x.Seq) })
	out := make([]string, 0, len(changed)+len(touched))
	for _, f := range changed {
		out = append(out, f.Text)
	}
	return append(out, touched...)
}
