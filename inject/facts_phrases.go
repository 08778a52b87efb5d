package inject

import (
	"regexp"
	"strings"
)

// The phrase corpus of the facts ledger, in one place: what makes a sentence a constraint, a
// decision or a change of plan. The patterns are matched against the sentence in lower case,
// whole words; the examples (and the counter-examples that must not match) are the table tests
// in facts_test.go, in the phrasings people use with coding agents. A user's sentence is a change
// of plan if planPhrase matches, else a constraint if constraintPhrase does (and notConstraint
// does not), else a decision if decisionPhrase does (and it is not an instrumental "use X to …").
// An assistant's sentences are only ever its own decisions and changes of plan, in the first
// person (assistantVoice), and a change of plan only with a strong marker (assistantPlan).
var (
	// constraintPhrase: standing rules. "must", "never", "always", "do not", "avoid";
	// "leave X alone"; "X has to stay backwards compatible"; "keep X stable/as is"; "no new
	// dependencies"; "X is off limits"; "make sure …".
	constraintPhrase = regexp.MustCompile(`\b(?:` +
		`must|never|always|avoid|do not|don['’]t|only use|should ?n['’]?o?t|shall not|may not|` +
		`not allowed|forbidden|off[- ]limits|under no circumstances|make sure|hands off|read[- ]only|` +
		`no new (?:dependenc\w*|deps|packages?|librar\w*|modules?)` +
		`)\b` +
		`|\bkeep\b.{0,80}?\b(?:stable|unchanged|as[- ]is|intact|green|passing|compatible|working)\b` +
		`|\bleave\b.{0,80}?\b(?:alone|as[- ]is|untouched|unchanged)\b` +
		`|\b(?:has|have|needs?|got) to (?:stay|remain|be kept|keep)\b` +
		`|\b(?:stays?|remains?)\b.{0,40}?\bbackwards?[- ]compatible\b` +
		`|\bbackwards?[- ]compatib\w*\b.{0,40}?\b(?:stay|remain|keep|preserve|maintain)` +
		`|\b(?:preserve|maintain)\b.{0,40}?\bbackwards?[- ]compatib\w*`)

	// notConstraint: what looks like a rule and is not: a guess ("it must have broken"), the
	// speaker's own habits ("I never saw this", "I always forget"), "keep going".
	notConstraint = regexp.MustCompile(`\bmust have\b|\bmust be (?:a|an|the|some|because)\b|\b(?:i|i['’]ve|i have|we['’]ve)\s+(?:never|always)\b|\bkeep (?:going|trying|at it|it up)\b|\bnever ?mind\b`)

	// decisionPhrase: a choice made. "we'll use X from now on", "let's go with X", "agreed: X",
	// "decided to X", "X, not Y" (X a name of a few words), "use X instead of Y", "stick with X",
	// "settled on X".
	decisionPhrase = regexp.MustCompile(`` +
		`\b(?:we['’]ll|we will|we['’]re going to|we are going to|let['’]s|i['’]ll|i will|i['’]m going to)\s+` +
		`(?:use|go with|stick with|keep using|adopt|standardi[sz]e on|settle on|build on|rely on)\b` +
		`|\bfrom now on\b` +
		`|^\s*(?:agreed|decided|decision|settled|verdict|conclusion)\s*[:—–-]` +
		`|^\s*(?:agreed|decided)\s*,\s*(?:we|let['’]s|the|use|to|it['’]s|go)\b` +
		`|\b(?:we|i)(?: have| 've|['’]ve)?\s+(?:decided|agreed|chosen|chose|picked|settled on|gone with|went with)\b` +
		`|\b(?:go|going|went) with\b` +
		`|\bstick with\b` +
		`|\buse\s+\S.{0,60}?\binstead of\b` +
		`|^(?:the\s+)?[\w./@-]+(?:\s+[\w./@-]+){0,2},\s*not\s+(?:the\s+)?[\w./@-]+(?:\s+[\w./@-]+){0,2}\s*[.!]?$`)

	// notDecision: an instrumental use ("I'll use grep to find …") or an "X, not Y" about
	// something else ("it's the parser, not the lexer"; "yes, not now").
	notDecision = regexp.MustCompile(`\buse\s+(?:the\s+|a\s+)?[\w./-]+(?:\s+(?:tool|command|script|flag|option|api))?\s+to\s+\w+|^(?:it|it['’]s|this|that|that['’]s|there|yes|no|yeah|sure|ok|okay|not|he|she|they|you)\b`)

	// planPhrase: a change of plan, which supersedes what it names. "change of plan", "scratch
	// that", "actually, let's …", "forget the X", "switch from X to Y", "no longer X", "drop X",
	// "rather than X".
	planPhrase = regexp.MustCompile(`` +
		`\b(?:change of plans?|plan change|new plan|change the plan|scratch that|scrap (?:that|the|this) (?:plan|idea|approach)|pivot)\b` +
		`|^\s*(?:actually|instead)\b,?\s+(?:let['’]s|we['’]ll|we should|we will|switch|i['’]ll)\b` +
		`|(?:^|\b(?:let['’]s|so|ok|okay|actually|just|and|now)\s*,?\s+)forget (?:about )?(?:the|that|this|using) \S+` +
		`|\bswitch(?:ing|ed)? from\s+\S.{0,60}?\s+to\b` +
		`|\b(?:we['’]ll|we will|let['’]s|we should)\s+switch (?:over )?to\b` +
		`|\bno longer (?:use|using|need|want|support|target)\b` +
		`|\b(?:we['’]re|we are|i['’]m|i am|let['’]s) (?:dropping|abandoning|ditching|replacing|moving off)\b` +
		`|\brather than\b`)

	// planMarker: a change of plan that says so itself; one that names nothing it replaces
	// supersedes the previous change of plan only with such a marker.
	planMarker = regexp.MustCompile(`(?i)\b(?:change of plans?|plan change|new plan|change the plan|scratch that|pivot)\b`)

	// assistantVoice: what makes an assistant's sentence its own decision or change of plan: the
	// first person, or a "Decision:" label.
	assistantVoice = regexp.MustCompile(`\b(?:i['’]ll|i will|i['’]m going to|i am going to|i decided|i['’]ve decided|i chose|i went with|i['’]m going with|we['’]ll|let['’]s)\b|^\s*(?:decision|plan|change of plan)\s*:`)

	// assistantPlan: the markers of an assistant's change of plan.
	assistantPlan = regexp.MustCompile(`\b(?:change of plans?|new plan|scratch that|instead of|rather than|no longer|switch(?:ing)? from)\b`)

	// replacedPhrase finds what a decision or change of plan replaces: the words after
	// "instead of", "rather than", ", not", "switch from", "no longer (use)", "forget (about)
	// (the)", "drop(ping)", "scrap the", "replacing", "moving off".
	replacedPhrase = regexp.MustCompile(`(?i)(?:\binstead of|\brather than|,\s*not|\bswitch(?:ing|ed)? from|\bno longer (?:use|using|need|want)|\bforget (?:about )?(?:the |using )?|\b(?:dropping|drop|ditching|abandoning|replacing|moving off)(?: the)?|\bscrap the)\s+(.{2,60}?)(?:\s+(?:to|for|with|and|because|since|as)\b|[,.;:!?)]|$)`)

	// notProseStart, codeStart with codeEnd, and stmtEnd tell lines that are not prose: code,
	// logs, shell and stack traces (see notProse).
	notProseStart = regexp.MustCompile(`^(?:\s{4,}|\t)|^\s*(?:[$#>|]|//|/\*|--|at\s+\S+\(|\d{4}-\d\d-\d\d[T ]\d|\[\d)|(?i:^\s*(?:(?:[\w.]*error|[\w.]*exception|panic|warn(?:ing)?|fatal|info|debug|trace(?:back)?|fail|e\d{4})\b\s*[:\[(!]|npm err!))`)
	codeStart     = regexp.MustCompile(`^\s*(?:func|if|for|return|import|package|def|class|const|let|var|fn|pub|use)\s`)
	codeEnd       = regexp.MustCompile(`[{:;=(]\s*$`)
	stmtEnd       = regexp.MustCompile(`[{};]\s*$|\s=\s[^=]*;\s*$`)

	// openers that make a sentence a question or a hypothesis, not a statement.
	notStatement = regexp.MustCompile(`^\s*(?:if|when|whether|what if|should we|do we|can we|could we|would|why|how|is it|are we|maybe|perhaps)\b`)
)

// triggers are the words one of the phrases needs (as substrings of the sentence in lower case):
// a sentence with none of them is no fact, which spares it the patterns (most sentences of a
// transcript). A phrase added to the corpus adds its trigger here; TestTriggers checks the
// examples.
var triggers = []string{
	"must", "never", "always", "avoid", "do not", "don't", "don’t", "dont", "only use", "should",
	"shall not", "may not", "allowed", "forbidden", "off limits", "off-limits", "hands off",
	"under no", "make sure", "read-only", "read only",
	"no new", "keep", "kept", "leave", "stay", "remain", "compatib", "preserve", "maintain",
	"we'll", "we’ll", "we will", "we're going", "we’re going", "we are going", "let's", "let’s",
	"i'll", "i’ll", "i will", "i'm going", "i’m going", "i am going", "from now on",
	"agreed", "decided", "decision", "settled", "verdict", "conclusion", "chose", "chosen",
	"picked", "go with", "going with", "went with", "gone with", "stick with", "instead",
	", not", ",not", "change", "new plan", "plan:", "scratch", "scrap", "pivot", "actually", "forget", "switch",
	"longer", "dropping", "abandoning", "ditching", "replacing", "moving off", "rather",
}

// notProse reports whether line is code, a log line, shell or a stack trace. Only its first and
// last 256 bytes are looked at, so a long line costs no more than a short one.
func notProse(line string) bool {
	head, tail := line[:min(len(line), 256)], line[max(0, len(line)-256):]
	return notProseStart.MatchString(head) || codeStart.MatchString(head) && codeEnd.MatchString(tail) || stmtEnd.MatchString(tail)
}

// triggerSet is a list of triggers indexed by first byte, for a one-pass scan.
type triggerSet [256][]string

func newTriggerSet(list []string) *triggerSet {
	var ts triggerSet
	for _, t := range list {
		ts[t[0]] = append(ts[t[0]], t)
	}
	return &ts
}

var (
	userTriggers = newTriggerSet(triggers)
	// assistantTriggers are what assistantVoice needs: an assistant's sentence without one
	// states no fact.
	assistantTriggers = newTriggerSet([]string{
		"i'll", "i’ll", "i will", "i'm going", "i’m going", "i am going", "i decided", "i've decided",
		"i’ve decided", "i chose", "i went with", "we'll", "we’ll", "let's", "let’s", "decision", "plan",
	})
)

// in reports whether lower (text in lower case) holds one of the triggers, starting a word (a
// trigger that starts with a letter), in one pass over it.
func (ts *triggerSet) in(lower string) bool {
	for i := 0; i < len(lower); i++ {
		list := ts[lower[i]]
		// A word starts as the patterns' \b sees it: after a byte that is not an ASCII word
		// character (an em dash or a curly quote starts one too).
		if list == nil || i > 0 && isWordByte(lower[i-1]) && isWordByte(lower[i]) {
			continue
		}
		for _, t := range list {
			if strings.HasPrefix(lower[i:], t) {
				return true
			}
		}
	}
	return false
}

// hasTrigger reports whether lower, said by role, holds a trigger of the phrases role's
// sentences may state.
func hasTrigger(role, lower string) bool {
	if role == "assistant" {
		return assistantTriggers.in(lower)
	}
	return userTriggers.in(lower)
}
