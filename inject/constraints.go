package inject

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/kv"
)

// Constraint limits.
const (
	MaxConstraints  = 12  // constraints InferConstraints returns, and InheritedBlock lists, at most
	constraintChars = 300 // each constraint is Head-cut to this many units
)

// listMarker matches a list bullet or number at the start of a line.
var listMarker = regexp.MustCompile(`^(?:[-*•>]+|\d{1,3}[.)])\s+`)

// InferConstraints extracts the user's constraints from prompts, given oldest first: the
// sentences the facts ledger's detector takes for constraints (DetectFacts, its phrase corpus in
// facts_phrases.go: "must", "never", "do not", "always", "avoid", "leave X alone", "has to stay
// backwards compatible", …; never a question, code, a log line or a quote), redacted, whitespace
// collapsed, each Head-cut to 300 units. Duplicates (ignoring case and trailing punctuation) are
// dropped.
//
// When there are more than 12, the most recent win: prompts are taken newest first, each prompt's
// constraints in reading order, until 12 distinct ones are chosen; a constraint restated in a
// recent prompt counts as recent. The chosen ones are returned in the order they first appeared
// (oldest prompt first). The result is nil when there is none. Each prompt is read up to its first
// 32 KiB (DetectFacts).
func InferConstraints(prompts []string) []string {
	type item struct {
		text, key string
		prompt    int
	}
	var all []item
	first := map[string]int{} // key → index in all of its first appearance
	for p, prompt := range prompts {
		for _, c := range constraintsIn(prompt) {
			k := constraintKey(c)
			if _, ok := first[k]; !ok {
				first[k] = len(all)
			}
			all = append(all, item{text: c, key: k, prompt: p})
		}
	}

	// Choose newest prompt first; within a prompt, in reading order.
	chosen := map[string]bool{}
	n := 0
	for p := len(prompts) - 1; p >= 0 && n < MaxConstraints; p-- {
		for _, it := range all {
			if it.prompt != p || chosen[it.key] {
				continue
			}
			chosen[it.key] = true
			if n++; n == MaxConstraints {
				break
			}
		}
	}

	var out []string
	for i, it := range all {
		if first[it.key] == i && chosen[it.key] {
			out = append(out, it.text)
		}
	}
	return out
}

// constraintsIn returns the constraint sentences of one prompt, in reading order: one detector,
// the ledger's, for the ledger, the digests and the inherited block alike.
func constraintsIn(prompt string) []string {
	var out []string
	for _, f := range DetectFacts("user", prompt) {
		if f.Kind == kv.FactConstraint {
			out = append(out, f.Text)
		}
	}
	return out
}

// sentences splits a line after every '.', '!' or '?' that is followed by whitespace.
func sentences(line string) []string {
	var out []string
	start := 0
	for i := 0; i < len(line); i++ {
		if c := line[i]; c != '.' && c != '!' && c != '?' {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(line[i+1:]); i+1 < len(line) && unicode.IsSpace(r) {
			out = append(out, line[start:i+1])
			start = i + 1
		}
	}
	return append(out, line[start:])
}

// constraintKey is what two constraints must share to be duplicates: the text in lower case,
// without trailing punctuation.
func constraintKey(c string) string {
	return strings.TrimRight(strings.ToLower(c), ".!;: ")
}
