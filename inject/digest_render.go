package inject

import (
	"slices"
	"strings"

	"github.com/heirloom-dev/heirloom/kv"
)

// RenderDigest renders d as text lines for a block, at most maxChars UTF-16 units (see Len);
// zero or negative means DefaultDigestChars. It returns "" for an empty digest. Sections are
// omitted when empty; the format, with no trailing newline:
//
//	Objective: <objective>
//	Summary: <the agent's own summary>
//	Constraints:
//	- <explicit constraint>
//	- <inferred constraint> (inferred)
//	Decisions:
//	- <decision>
//	Next steps:
//	- <next step, as the agent listed them>
//	Recent prompts:
//	- <prompt, oldest first>
//	Sub-agents finished:
//	- <description> [<status>]: <condensed result>
//	Sub-agents running:
//	- <description> [<status>]
//	Files:
//	- <path, most recent first>
//	Last reply: <excerpt>
//
// Every piece is redacted, put on one line and cut to the caps BuildDigest documents (so are
// the counts: the latest 5 prompts, 12 decisions, 12 constraints, 8 next steps, 20 files, 8
// runs of each kind); a run with no description reads "sub-agent", one with no status "finished" or
// "running".
//
// The sections are written from most to least valuable, so a caller's Head-cut of the text
// loses the least valuable first. When the text is over maxChars, it shrinks item by item in
// this order until it fits: the last reply (Head-cut, then dropped when under 32 units of room
// are left), then files (the oldest first), sub-agents running, sub-agents finished (each the
// oldest first), prompts (the oldest first), next steps (the last first), the summary (Head-cut,
// then dropped), decisions (the oldest first), constraints (the
// inferred ones first, each group the oldest first), and last the objective, which is Head-cut
// to the room left. A section whose items are all gone is omitted, heading included.
func RenderDigest(d kv.Digest, maxChars int) string {
	if maxChars <= 0 {
		maxChars = DefaultDigestChars
	}
	return renderSections(d).fit(maxChars)
}

// digestSection is one section of a rendered digest.
type digestSection struct {
	title  string       // "Constraints:"; for an inline section, the line's prefix "Objective: "
	inline bool         // title and the one item on one line
	items  []digestItem // rendered item lines, in order
}

// digestItem is one line of a section. When the section must shrink, the item with the lowest
// rank goes first.
type digestItem struct {
	text string
	rank int
}

// The sections of a rendered digest, in the order they are written.
const (
	secObjective = iota
	secSummary
	secConstraints
	secDecisions
	secNextSteps
	secPrompts
	secFinished
	secRunning
	secFiles
	secReply
	numSections
)

// shrinkOrder is the order sections shrink in: the least valuable first.
var shrinkOrder = [numSections]int{secReply, secFiles, secRunning, secFinished, secPrompts, secNextSteps, secSummary, secDecisions, secConstraints, secObjective}

// digestSections is a digest in renderable parts.
type digestSections [numSections]digestSection

// renderSections sanitises d and caps its counts (see RenderDigest).
func renderSections(d kv.Digest) digestSections {
	var s digestSections
	s[secObjective] = inlineSection("Objective: ", oneLine(d.Objective, objectiveChars))
	s[secReply] = inlineSection("Last reply: ", oneLine(d.LastAssistant, replyChars))
	s[secSummary] = inlineSection("Summary: ", oneLine(d.Summary, summaryChars))

	s[secNextSteps].title = "Next steps:"
	for i, st := range d.NextSteps {
		if text := oneLine(st, nextStepChars); text != "" {
			s[secNextSteps].items = append(s[secNextSteps].items, digestItem{"- " + text, -i}) // the last go first
		}
	}
	s[secNextSteps].capItems(maxNextSteps)

	s[secConstraints].title = "Constraints:"
	for i, c := range d.Constraints {
		text := oneLine(c.Text, constraintChars)
		if text == "" {
			continue
		}
		rank := len(d.Constraints) + i // explicit ones go after every inferred one
		if c.Inferred {
			text += " (inferred)"
			rank = i
		}
		s[secConstraints].items = append(s[secConstraints].items, digestItem{"- " + text, rank})
	}
	s[secConstraints].capItems(MaxConstraints)

	s[secDecisions].title = "Decisions:"
	for i, c := range d.Decisions {
		if text := oneLine(c.Text, constraintChars); text != "" {
			if c.Inferred {
				text += " (inferred)"
			}
			s[secDecisions].items = append(s[secDecisions].items, digestItem{"- " + text, i})
		}
	}
	s[secDecisions].capItems(maxDecisions)

	s[secPrompts].title = "Recent prompts:"
	for i, p := range d.Prompts {
		if text := fitMiddle(p, promptChars); text != "" {
			s[secPrompts].items = append(s[secPrompts].items, digestItem{"- " + text, i})
		}
	}
	s[secPrompts].capItems(digestPrompts)

	s[secFinished].title = "Sub-agents finished:"
	for i, r := range d.FinishedRuns {
		line := runLine(r, "finished")
		if result := oneLine(r.Result, runResultChars); result != "" {
			line += ": " + result
		}
		s[secFinished].items = append(s[secFinished].items, digestItem{line, i})
	}
	s[secFinished].capItems(maxRuns)

	s[secRunning].title = "Sub-agents running:"
	for i, r := range d.OpenRuns {
		s[secRunning].items = append(s[secRunning].items, digestItem{runLine(r, "running"), i})
	}
	s[secRunning].capItems(maxRuns)

	s[secFiles].title = "Files:"
	seen := map[string]bool{}
	for i, f := range d.Files {
		if len(s[secFiles].items) == maxFiles {
			break
		}
		if p := fitTail(f, pathChars, flatten); p != "" && !seen[p] {
			seen[p] = true
			s[secFiles].items = append(s[secFiles].items, digestItem{"- " + p, -i}) // the oldest go first
		}
	}
	return s
}

// runLine renders a run as "- description [status]";
// status is shown when r has none.
func runLine(r kv.RunDigest, status string) string {
	desc := oneLine(r.Description, runTitleChars)
	if desc == "" {
		desc = "sub-agent"
	}
	if st := oneLine(r.Status, runStatusChars); st != "" {
		status = st
	}
	return "- " + desc + " [" + status + "]"
}

// inlineSection is a one-line section; it has no item when text is empty.
func inlineSection(prefix, text string) digestSection {
	s := digestSection{title: prefix, inline: true}
	if text != "" {
		s.items = []digestItem{{text: text}}
	}
	return s
}

// capItems drops the lowest-ranked items until at most n are left.
func (s *digestSection) capItems(n int) {
	for len(s.items) > n {
		s.dropOne()
	}
}

// dropOne drops the item with the lowest rank (the first of equals).
func (s *digestSection) dropOne() {
	low := 0
	for i, it := range s.items {
		if it.rank < s.items[low].rank {
			low = i
		}
	}
	s.items = slices.Delete(s.items, low, low+1)
}

// String renders the sections that have items, one line each, with no trailing newline.
func (s *digestSections) String() string {
	var b strings.Builder
	for _, sec := range s {
		if len(sec.items) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(sec.title)
		if sec.inline {
			b.WriteString(sec.items[0].text)
			continue
		}
		for _, it := range sec.items {
			b.WriteByte('\n')
			b.WriteString(it.text)
		}
	}
	return b.String()
}

// fit shrinks s in shrinkOrder until it renders within max units (see RenderDigest). It
// measures the parts rather than rendering the whole at every step, and renders once.
func (s digestSections) fit(max int) string {
	for _, k := range shrinkOrder {
		sec := &s[k]
		for n := s.length(); n > max && len(sec.items) > 0; n = s.length() {
			if !sec.inline {
				sec.dropOne()
				continue
			}
			text := sec.items[0].text
			room := max - (n - Len(text))
			cut := Head(text, room)
			if cut == "" || (room < minSection && k != secObjective) {
				sec.items = nil
			} else {
				sec.items[0].text = cut
			}
		}
	}
	out := s.String()
	if Len(out) > max {
		out = Head(out, max)
	}
	return out
}

// length is Len(s.String()), without rendering it.
func (s *digestSections) length() int {
	n, first := 0, true
	for _, sec := range s {
		if len(sec.items) == 0 {
			continue
		}
		if !first {
			n++
		}
		first = false
		n += Len(sec.title)
		if sec.inline {
			n += Len(sec.items[0].text)
			continue
		}
		for _, it := range sec.items {
			n += 1 + Len(it.text)
		}
	}
	return n
}

// digestEmpty reports whether d has nothing RenderDigest would show.
func digestEmpty(d kv.Digest) bool {
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	for _, s := range slices.Concat(d.Constraints, d.Decisions) {
		if !blank(s.Text) {
			return false
		}
	}
	for _, s := range slices.Concat(d.Prompts, d.Files, d.NextSteps) {
		if !blank(s) {
			return false
		}
	}
	return blank(d.Objective) && blank(d.Summary) && blank(d.LastAssistant) && len(d.OpenRuns) == 0 && len(d.FinishedRuns) == 0
}
