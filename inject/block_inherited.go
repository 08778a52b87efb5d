package inject

import (
	"fmt"
	"slices"
	"strings"

	"github.com/heirloom-dev/heirloom/inject/heading"
	"github.com/heirloom-dev/heirloom/kv"
)

// InheritedHeading is the first line of the block InheritedBlock builds.
const InheritedHeading = heading.Inherited

// Caps inside the inherited block, in UTF-16 units.
const (
	titleChars     = 200  // the parent's title on the "Parent session:" line
	projectChars   = 300  // the "Project:" line's value
	objectiveChars = 1000 // the "Objective:" line's value
	digestChars    = 4000 // the checkpoint digest, before any shrinking
	toolTurnChars  = 300  // a tool turn's text or file list
	pathChars      = 300  // one file path (Tail-cut: the file name is what matters)
	maxFiles       = 20   // files listed at most
	minSection     = 32   // a shrunk section with less room than this is dropped instead
)

// Inherited is what a sub-agent inherits from its parent session: records read from the store.
// The zero value renders as "" (see InheritedBlock).
type Inherited struct {
	Parent      kv.Session // the parent session; its Title, Objective, Project, Harness and ID are shown
	Digest      string     // the parent's latest checkpoint digest; "" when none
	Tail        []kv.Turn  // the parent's transcript since that checkpoint, ascending Seq
	Files       []string   // files the parent touched, most recent first; duplicates are dropped here too
	Constraints []string   // active constraints, already extracted (see InferConstraints)
	// Decisions are the decisions and changes of plan in force, oldest first: the facts
	// ledger's (with their turns, and what each replaced) and explicit ones (Seq 0).
	Decisions []kv.Fact
	// SearchTool names the MCP tool that searches the parent's whole transcript (session_search);
	// when set, the block names the parent's full session key and how to search it.
	SearchTool string
	// SearchScope is the parent's memory scope when a search must name it (it is not the
	// sidecar's default scope: an OpenClaw agent's); "" leaves it out of the hint.
	SearchScope string
	// Packet is what the sub-agent is told of itself: its task, the files the task names, its
	// workspace and its depth. The zero value adds nothing.
	Packet Packet
	// Relevant are the passages of the parent's family most relevant to the sub-agent's task,
	// best first (see Passage); at most RelevantMax of them are shown (0: MaxPassages).
	Relevant    []Passage
	RelevantMax int
}

// InheritedBlock renders the "## Inherited from Parent Session" block a sub-agent gets at start.
// It returns "" when the parent has no objective, no title, no digest and no transcript turn with
// text. The format, with sections omitted when empty and no trailing newline:
//
//	## Inherited from Parent Session
//	Parent session: <Title, else "<Harness> session <ID>">
//	Project: <Project>                       (omitted when empty)
//	Objective: <Objective>                   (omitted when empty)
//	Parent session key: <ID> (more: call <SearchTool> with "session": "<ID>")   (only with SearchTool)
//
//	### Your task
//	<Packet.Task>
//	(heirloom keeps this as your objective: it is restated to you after a compaction)
//
//	### Files your task names
//	- <path>
//
//	### Your workspace
//	<Packet.Workspace>
//
//	### Your depth
//	depth <Depth> of <MaxDepth> (spawn.max_depth)
//
//	### Relevant to your task
//	- [parent, turn <Seq>, <role>] <passage>
//
//	### Latest checkpoint
//	<Digest>
//
//	### Recent transcript
//	<turns>
//
//	### Files the parent touched
//	- <path>
//
//	### Active constraints
//	- <constraint>
//
//	### Decisions and changes of plan
//	- <decision> (turn <Seq>; replaces "<earlier decision>")
//
// Every piece is redacted (see Redact) before it is measured. Title, project and objective have
// their whitespace collapsed and are Head-cut to 200, 300 and 1000 units; with no title the
// Parent line reads "<Harness> session <ID>". The digest keeps its lines (blank runs squeezed)
// and is Head-cut to 4000 units.
//
// The packet's sections (the sub-agent's own) follow the parent's lines, each omitted when
// empty: the task keeps its lines and is Head-cut to 1500 units; at most 10 of its files are
// listed like the parent's; the workspace is Tail-cut to 300 units; the depth reads "depth D of
// M (spawn.max_depth)", with ": a sub-agent you spawn would be deeper than the limit" once D
// reaches M, or "depth D (no spawn.max_depth)" without a limit, and is omitted when D is 0. The
// packet alone never makes a block: without anything of the parent's to show, there is none.
//
// Turns render in Seq order, one line group per turn, whitespace collapsed: "[user] text",
// "[assistant] text", and for a tool turn "[tool Read] a.go, b.go" (its files, when it has some)
// or "[tool Bash] text" (its text, Head-cut to 300). An assistant turn that calls a tool on files
// renders as its text line, then "[tool Name] files". System turns (harness bookkeeping such as
// a compaction summary) and turns with nothing to show are skipped. The rendered turns are
// Tail-cut as a whole to b.TailChars; only the newest turns that can reach that cut are read.
//
// Relevant passages, best first, render as "- [<From>, turn <Seq>, <role>] <text>", the text on
// one line and Head-cut to 400 units, at most 12; a passage from a parent's turn the transcript
// section shows in full, and a repeat of a passage already listed, are left out.
//
// Decisions are deduplicated ignoring case and trailing punctuation (the latest kept), at most
// the 10 newest, oldest first, each Head-cut to 300 units; one the ledger dated reads
// " (turn N)" after it, and one that superseded another also names it (Head-cut to 120 units).
//
// Files are deduplicated (first kept), at most 20, each put on one line and Tail-cut to 300 units
// (the file name is what matters). Constraints are deduplicated ignoring case and trailing
// punctuation, at most 12, each Head-cut to 300 units.
//
// The result never exceeds b.MaxChars (see Len). When it would, sections shrink by priority,
// the least valuable first, until it fits: the task's files are dropped from the last (the task
// itself names them), then the transcript is Tail-cut further, then the digest is Head-cut
// further, then the parent's files are dropped from the last (the oldest), then relevant
// passages from the last (the least relevant), then decisions from the first (the oldest), then
// constraints from the last; a cut section left with under 32 units of room is dropped. When
// anything but the transcript's older turns was cut, the block ends with one line saying what:
// "(cut to fit: 2 files the task names, part of the checkpoint, 3 of the parent's files)", its
// room taken from the transcript, then the digest; a block with no room left for it goes
// without. The heading, Parent, Project and Objective lines and the packet's task, workspace
// and depth always stay, unless they alone exceed b.MaxChars: then the block is Head-cut to
// b.MaxChars.
func InheritedBlock(in Inherited, b Budget) string {
	b = b.withDefaults()
	p := in.Parent

	title := oneLine(p.Title, titleChars)
	objective := oneLine(p.Objective, objectiveChars)
	digest := fitHead(in.Digest, digestChars, normalizeLines)
	transcript, groups := renderTail(in.Tail, b.TailChars)
	if title == "" && objective == "" && digest == "" && transcript == "" {
		return ""
	}

	var top strings.Builder
	top.WriteString(InheritedHeading)
	top.WriteString("\nParent session: ")
	if title == "" {
		title = oneLine(strings.Join(nonEmpty(p.Harness, "session", p.ID), " "), titleChars)
	}
	top.WriteString(title)
	if project := oneLine(p.Project, projectChars); project != "" {
		top.WriteString("\nProject: " + project)
	}
	if objective != "" {
		top.WriteString("\nObjective: " + objective)
	}
	if in.SearchTool != "" && p.ID != "" {
		top.WriteString("\n" + SearchHint(in.SearchTool, p.ID, in.SearchScope))
	}

	blk := inheritedSections{
		head:        top.String(),
		packet:      renderPacket(in.Packet),
		relevant:    passageLines(in.Relevant, in.RelevantMax),
		parentID:    p.ID,
		groups:      groups,
		digest:      digest,
		transcript:  transcript,
		files:       fileList(in.Files),
		constraints: constraintList(in.Constraints),
		decisions:   decisionList(in.Decisions),
	}
	return blk.fit(b.MaxChars)
}

// inheritedSections is the inherited block in parts, so it can shrink section by section.
type inheritedSections struct {
	head        string // heading and the Parent/Project/Objective lines
	packet      packetSections
	relevant    []passageLine
	parentID    string      // whose turns the transcript shows
	groups      []tailGroup // the transcript's turns, oldest first, before any cut
	digest      string      // redacted, Head-cut to digestChars
	transcript  string      // rendered turns, Tail-cut to tailChars
	files       []string    // "- path" lines
	constraints []string    // "- constraint" lines
	decisions   []string    // "- decision" lines
}

// Section headings, each preceded by a blank line.
const (
	digestHeading      = "\n\n### Latest checkpoint\n"
	transcriptHeading  = "\n\n" + heading.RecentTranscript + "\n"
	filesHeading       = "\n\n### Files the parent touched\n"
	constraintsHeading = "\n\n### Active constraints\n"
	decisionsHeading   = "\n\n### Decisions and changes of plan\n"
)

// String renders the block.
func (s inheritedSections) String() string {
	var b strings.Builder
	b.WriteString(s.head)
	section := func(heading, body string) {
		if body != "" {
			b.WriteString(heading)
			b.WriteString(body)
		}
	}
	b.WriteString(s.packet.task)
	section(taskFilesHeading, strings.Join(s.packet.files, "\n"))
	b.WriteString(s.packet.place)
	section(relevantHeading, strings.Join(s.relevantLines(), "\n"))
	section(digestHeading, s.digest)
	section(transcriptHeading, s.transcript)
	section(filesHeading, strings.Join(s.files, "\n"))
	section(constraintsHeading, strings.Join(s.constraints, "\n"))
	section(decisionsHeading, strings.Join(s.decisions, "\n"))
	return b.String()
}

// fit shrinks s, in the documented order, until it renders within max units. It measures the
// parts rather than rendering the whole at every step, and renders once.
func (s inheritedSections) fit(max int) string {
	var cut cutCounts
	for s.length() > max && len(s.packet.files) > 0 {
		s.packet.files = s.packet.files[:len(s.packet.files)-1]
		cut.taskFiles++
	}
	if n := s.length(); n > max && s.transcript != "" {
		room := max - (n - Len(s.transcript))
		if s.transcript = Tail(s.transcript, room); room < minSection {
			s.transcript, cut.transcript = "", true
		}
	}
	if n := s.length(); n > max && s.digest != "" {
		room := max - (n - Len(s.digest))
		cut.digest = true
		if s.digest = Head(s.digest, room); room < minSection {
			s.digest, cut.digestGone = "", true
		}
	}
	for s.length() > max && len(s.files) > 0 {
		s.files = s.files[:len(s.files)-1]
		cut.files++
	}
	for s.length() > max && len(s.relevant) > 0 {
		s.relevant = s.relevant[:len(s.relevant)-1]
		cut.passages++
	}
	for s.length() > max && len(s.decisions) > 0 {
		s.decisions = s.decisions[1:]
		cut.decisions++
	}
	for s.length() > max && len(s.constraints) > 0 {
		s.constraints = s.constraints[:len(s.constraints)-1]
		cut.constraints++
	}
	// The note on what was cut takes its room from the transcript, which was cut first anyway,
	// then from the digest; a block too tight for it goes without, and keeps what it had.
	note := cut.note()
	if note != "" && s.length()+Len(note) > max {
		try, c := s, cut
		if n := try.length() + Len(note); try.transcript != "" {
			room := max - (n - Len(try.transcript))
			if try.transcript = Tail(try.transcript, room); room < minSection {
				try.transcript, c.transcript = "", true
			}
			note = c.note()
		}
		if n := try.length() + Len(note); n > max && try.digest != "" {
			room := max - (n - Len(try.digest))
			c.digest = true
			if try.digest = Head(try.digest, room); room < minSection {
				try.digest, c.digestGone = "", true
			}
			note = c.note()
		}
		if try.length()+Len(note) <= max {
			s = try
		} else {
			note = ""
		}
	}
	s.relevant = s.unshown()
	out := s.String() + note
	if Len(out) > max {
		out = Head(out, max)
	}
	return out
}

// cutCounts is what fit left out beyond the transcript's older turns (which the transcript
// gives up first, by design, and says with its own "[…]").
type cutCounts struct {
	taskFiles, files, passages, decisions, constraints int
	digest, digestGone, transcript                     bool
}

// note is the block's last line when something was cut: "(cut to fit: …)", naming each section
// that lost something, least valuable first; "" when nothing was.
func (c cutCounts) note() string {
	var parts []string
	count := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	count(c.taskFiles, "file the task names", "files the task names")
	if c.transcript {
		parts = append(parts, "the recent transcript")
	}
	switch {
	case c.digestGone:
		parts = append(parts, "the checkpoint")
	case c.digest:
		parts = append(parts, "part of the checkpoint")
	}
	count(c.files, "of the parent's files", "of the parent's files")
	count(c.passages, "relevant passage", "relevant passages")
	count(c.decisions, "older decision", "older decisions")
	count(c.constraints, "constraint", "constraints")
	if len(parts) == 0 {
		return ""
	}
	return "\n\n(cut to fit: " + strings.Join(parts, ", ") + ")"
}

// length is Len(s.String()), without rendering it.
func (s inheritedSections) length() int {
	n := Len(s.head) + Len(s.packet.task) + Len(s.packet.place)
	section := func(heading string, body int) {
		if body > 0 {
			n += Len(heading) + body
		}
	}
	section(taskFilesHeading, linesLen(s.packet.files))
	section(relevantHeading, linesLen(s.relevantLines()))
	section(digestHeading, Len(s.digest))
	section(transcriptHeading, Len(s.transcript))
	section(filesHeading, linesLen(s.files))
	section(constraintsHeading, linesLen(s.constraints))
	section(decisionsHeading, linesLen(s.decisions))
	return n
}

// linesLen is Len(strings.Join(lines, "\n")).
func linesLen(lines []string) int {
	n := 0
	for i, l := range lines {
		if i > 0 {
			n++
		}
		n += Len(l)
	}
	return n
}

// oneLine is s redacted, with whitespace collapsed, Head-cut to max.
func oneLine(s string, max int) string {
	return fitHead(s, max, collapse)
}

// fitHead is s made valid, redacted and normalised by norm, then Head-cut to max. Only the first
// rawBudget(max) bytes of s are read; when more were there, the result is marked as cut.
func fitHead(s string, max int, norm func(string) string) string {
	raw, clipped := clipHead(s, rawBudget(max))
	t := norm(Redact(clean(raw)))
	if t == "" {
		return ""
	}
	return head(t, max, clipped)
}

// fitTail is fitHead for the end of s, with Tail.
func fitTail(s string, max int, norm func(string) string) string {
	raw, clipped := clipTail(s, rawBudget(max))
	t := norm(Redact(clean(raw)))
	if t == "" {
		return ""
	}
	return tail(t, max, clipped)
}

// nonEmpty returns the arguments that are not blank, in order.
func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// tailGroup is one turn as the transcript section renders it.
type tailGroup struct {
	seq   uint64
	text  string
	whole bool // a user or assistant turn whose text is shown uncut
}

// renderTail renders turns, one line group per turn, and Tail-cuts the whole to max. Only the
// newest turns that can reach the cut are rendered; groups are they, oldest first.
func renderTail(turns []kv.Turn, max int) (text string, groups []tailGroup) {
	n := 0
	for i := len(turns) - 1; i >= 0 && n <= max; i-- {
		g := renderTurn(turns[i], max)
		if g == "" {
			continue
		}
		if len(groups) > 0 {
			n++ // the newline between groups
		}
		n += Len(g)
		t := turns[i]
		groups = append(groups, tailGroup{seq: t.Seq, text: g, whole: (t.Role == "user" || t.Role == "assistant") && len(t.Text) <= max})
	}
	slices.Reverse(groups)
	texts := make([]string, len(groups))
	for i, g := range groups {
		texts[i] = g.text
	}
	return Tail(strings.Join(texts, "\n"), max), groups
}

// relevantLines are the relevant passages' lines.
func (s inheritedSections) relevantLines() []string {
	out := make([]string, len(s.relevant))
	for i, p := range s.relevant {
		out[i] = p.line
	}
	return out
}

// unshown returns the relevant passages but those whose turn of the parent the transcript, as
// it is now, shows whole: a passage says nothing the child does not read a few lines below.
func (s inheritedSections) unshown() []passageLine {
	shown := map[uint64]bool{}
	end := len(s.transcript) // the groups are matched from the transcript's end back
	for i := len(s.groups) - 1; i >= 0; i-- {
		g := s.groups[i].text
		if end < len(g) || s.transcript[end-len(g):end] != g {
			break // this group and the older ones were cut
		}
		if s.groups[i].whole {
			shown[s.groups[i].seq] = true
		}
		if end -= len(g); end == 0 || s.transcript[end-1] != '\n' {
			break
		}
		end--
	}
	var out []passageLine
	for _, p := range s.relevant {
		if !(p.session == s.parentID && shown[p.turn]) {
			out = append(out, p)
		}
	}
	return out
}

// renderTurn renders one turn as one or two lines; "" when it has nothing to show. max is the
// transcript budget: a user or assistant turn is read up to its last rawBudget(max) bytes.
func renderTurn(t kv.Turn, max int) string {
	tool := oneLine(t.Tool, toolTurnChars)
	files := oneLine(strings.Join(nonEmpty(t.Files...), ", "), toolTurnChars)
	toolLine := func(body string) string {
		if tool != "" {
			return "[tool " + tool + "] " + body
		}
		return "[tool] " + body
	}
	switch t.Role {
	case "user", "assistant":
		var lines []string
		if text := fitTail(t.Text, max, collapse); text != "" {
			lines = append(lines, "["+t.Role+"] "+text)
		}
		if t.Role == "assistant" && tool != "" && files != "" {
			lines = append(lines, toolLine(files))
		}
		return strings.Join(lines, "\n")
	case "tool":
		if files != "" {
			return toolLine(files)
		}
		if text := oneLine(t.Text, toolTurnChars); text != "" {
			return toolLine(text)
		}
	}
	return ""
}

// fileList returns the "- path" lines for files: deduplicated, first kept, at most maxFiles.
func fileList(files []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		if len(out) == maxFiles {
			break
		}
		p := fitTail(f, pathChars, flatten)
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, "- "+p)
	}
	return out
}

// constraintList returns the "- constraint" lines for constraints: redacted, whitespace collapsed,
// Head-cut to constraintChars, deduplicated ignoring case, at most MaxConstraints.
func constraintList(cs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cs {
		if len(out) == MaxConstraints {
			break
		}
		t := oneLine(c, constraintChars)
		if k := constraintKey(t); t != "" && !seen[k] {
			seen[k] = true
			out = append(out, "- "+t)
		}
	}
	return out
}

// flatten puts s on one line: line breaks and tabs become spaces; other spaces stay as they are,
// since they can be part of a path.
func flatten(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		switch r {
		case '\n', '\r', '\t', '\v', '\f', 0x85, 0x2028, 0x2029:
			return ' '
		}
		return r
	}, s))
}

// SearchHint is the inherited block's line that names the parent's full session key and how to
// search the rest of its transcript with the MCP tool tool.
func SearchHint(tool, parentID, scope string) string {
	args := `"session": "` + parentID + `"`
	if scope != "" {
		args += `, "scope": "` + scope + `"`
	}
	return "Parent session key: " + parentID + ` (more than this block holds: call ` + tool + ` with ` + args + `)`
}

// Decisions in the inherited block.
const (
	maxBlockDecisions = 10
	replacedChars     = 120 // what a decision replaced, as its line names it
)

// decisionList returns the "- decision" lines for ds (oldest first): redacted, on one line,
// deduplicated ignoring case and trailing punctuation (the latest kept), the newest
// maxBlockDecisions, each dated by its turn and naming what it replaced when the ledger knows.
func decisionList(ds []kv.Fact) []string {
	latest := map[string]int{}
	texts := make([]string, len(ds))
	for i, d := range ds {
		texts[i] = oneLine(d.Text, constraintChars)
		if texts[i] != "" {
			latest[constraintKey(texts[i])] = i
		}
	}
	var out []string
	for i, d := range ds {
		if texts[i] == "" || latest[constraintKey(texts[i])] != i {
			continue
		}
		var notes []string
		if d.Seq > 0 {
			notes = append(notes, fmt.Sprintf("turn %d", d.Seq))
		}
		if r := oneLine(d.Replaces, replacedChars); r != "" {
			notes = append(notes, `replaces "`+r+`"`)
		}
		line := "- " + texts[i]
		if len(notes) > 0 {
			line += " (" + strings.Join(notes, "; ") + ")"
		}
		out = append(out, line)
	}
	if len(out) > maxBlockDecisions {
		out = out[len(out)-maxBlockDecisions:]
	}
	return out
}
