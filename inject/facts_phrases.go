package inject

import "regexp"

// The phrase corpus of the facts ledger, in one place: what makes a sentence a constraint, a
// decision or a change of plan. Each pattern matches whole words, in any case; the examples
// (and the counter-examples that must not match) are the table tests in facts_test.go, drawn
// from how people write to coding agents in real transcripts. A sentence is a change of plan
// if planPhrase matches, else a constraint if constraintPhrase does, else a decision if
// decisionPhrase does (an assistant's sentences are only ever decisions or changes of plan, and
// only in the first person: see assistantDecision).
var (
	// constraintPhrase: standing rules. "must", "never", "always", "do not", "avoid";
	// "leave X alone"; "X has to stay backwards compatible"; "keep X stable/as is"; "no new
	// dependencies"; "X is off limits"; "make sure …".
	constraintPhrase = regexp.MustCompile(`(?i)\b(?:` +
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

	// decisionPhrase: a choice made. "we'll use X from now on", "let's go with X", "agreed: X",
	// "decided to X", "X, not Y", "use X instead of Y", "stick with X", "settled on X".
	decisionPhrase = regexp.MustCompile(`(?i)` +
		`\b(?:we['’]ll|we will|we['’]re going to|we are going to|let['’]s|lets|i['’]ll|i will|i['’]m going to)\s+` +
		`(?:use|go with|stick with|keep using|switch to|adopt|standardi[sz]e on|settle on|build on|rely on|move to)\b` +
		`|\bfrom now on\b` +
		`|^\s*(?:agreed|decided|decision|settled|verdict|conclusion)\s*[:—–,-]` +
		`|\b(?:we|i)(?: have| 've|['’]ve)?\s+(?:decided|agreed|chosen|chose|picked|settled on|gone with|went with)\b` +
		`|\b(?:go|going|went) with\b` +
		`|\bstick with\b` +
		`|\buse\s+\S.{0,60}?\binstead of\b` +
		`|^[^,.;:!?]{2,60},\s*not\s+[^,.;:!?]{2,60}[.!]?$`)

	// planPhrase: a change of plan, which supersedes what it names. "change of plan", "scratch
	// that", "actually, let's …", "forget the X", "switch from X to Y", "no longer X", "drop X",
	// "rather than X", "instead, …".
	planPhrase = regexp.MustCompile(`(?i)` +
		`\b(?:change of plans?|plan change|new plan|change the plan|scratch that|scrap (?:that|the|this)|never ?mind|pivot)\b` +
		`|^\s*(?:actually|instead|wait)\b,?\s+(?:let['’]s|we['’]ll|we should|use|go|switch|do|i['’]ll)\b` +
		`|\bforget (?:about )?(?:the|that|this|it|using)\b` +
		`|\bswitch(?:ing|ed)? (?:from\s+\S.{0,60}?\s+)?(?:over )?to\b` +
		`|\bno longer (?:use|using|need|want|do|support|target)\b` +
		`|\b(?:we['’]re|we are|i['’]m|i am|let['’]s) (?:dropping|abandoning|ditching|replacing|moving off)\b` +
		`|\brather than\b`)

	// assistantDecision: what makes an assistant's sentence its own decision or change of plan:
	// the first person, or a "Decision:" label.
	assistantDecision = regexp.MustCompile(`(?i)\b(?:i['’]ll|i will|i['’]m going to|i am going to|i decided|i['’]ve decided|i chose|i went with|i['’]m going with|we['’]ll|let['’]s)\b|^\s*(?:decision|plan|change of plan)\s*:`)

	// replacedPhrase finds what a decision or change of plan replaces: the words after
	// "instead of", "rather than", ", not", "from", "no longer (use)", "forget (about) (the)",
	// "drop(ping)", "scrap the", "replacing", "moving off".
	replacedPhrase = regexp.MustCompile(`(?i)(?:\binstead of|\brather than|,\s*not|\bswitch(?:ing|ed)? from|\bno longer (?:use|using|need|want)|\bforget (?:about )?(?:the |using )?|\b(?:dropping|drop|ditching|abandoning|replacing|moving off)(?: the)?|\bscrap the)\s+(.{2,60}?)(?:\s+(?:to|for|with|and|because|since|as)\b|[,.;:!?)]|$)`)

	// notFact: lines that are not prose: code, logs, shell and stack traces.
	notFact = regexp.MustCompile(`^(?:\s{4,}|\t)|^\s*(?:[$#>|]|//|/\*|\*\s|--|at\s+\S+\(|\d{4}-\d\d-\d\d[T ]\d|\[\d|(?:panic|error|warn(?:ing)?|fatal|info|debug|traceback)\b[:\[(]|[{}\[\]();]\s*$)|^\s*(?:func|if|for|return|import|package|def|class|const|let|var|fn|pub|use)\s.*[{:;=(]\s*$|[{};]\s*$|\s=\s.*;\s*$`)

	// openers that make a sentence a question or a hypothesis, not a statement.
	notStatement = regexp.MustCompile(`(?i)^\s*(?:if|when|whether|what if|should we|do we|can we|could we|would|why|how|is it|are we|maybe|perhaps)\b`)
)
