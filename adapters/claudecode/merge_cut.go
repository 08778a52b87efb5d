package claudecode

import (
	"strconv"
	"strings"

	"github.com/heirloom-dev/heirloom/inject/heading"
	"github.com/heirloom-dev/heirloom/inject/textcut"
)

// section is one part of a merged context, in the order it is shown.
type section struct {
	name     string // what the cut marker calls it
	heading  string // its first line, kept when it is shortened; "" for none
	text     string
	priority int    // lower is kept longer
	cut      string // "", cutShortened or cutDropped
	cutOrder int    // when cut, its place in the order of cuts (1 for the first)
}

// The cut marker's verbs.
const (
	cutShortened = "shortened"
	cutDropped   = "dropped"
)

// minUseful is the least text, in UTF-16 units, a shortened section keeps under its heading;
// with less room it is dropped instead (heirloom's blocks use the same threshold).
const minUseful = 32

// mergeContext joins ours and the upstream's context within maxChars, cutting ours by sections
// (headings, highest priority first): see Merge. ours is kept byte for byte (bar surrounding
// whitespace) unless it must be cut itself.
func mergeContext(ours, theirs string, maxChars int, sections []string) string {
	ours = strings.TrimSpace(ours)
	whole := ours
	if theirs != "" {
		whole += contextSep + theirs
	}
	if textcut.Len(whole) <= maxChars {
		return whole
	}
	// Our recent transcript takes what room the rest leaves: it gives it up first.
	if merged, ok := yieldTranscript(ours, theirs, maxChars); ok {
		return merged
	}
	var up []section
	if theirs != "" {
		// Then the upstream's part goes first, with ours left as it is.
		parts := []section{
			{text: ours},
			{name: "upstream hook context", text: theirs, cut: cutShortened, cutOrder: 1},
		}
		used := textcut.Len(ours) + 2*textcut.Len(contextSep) + textcut.Len(cutMarker(parts, maxChars))
		if shortened, ok := shorten(parts[1], maxChars-used); ok {
			parts[1].text = shortened
			return withMarker(parts, maxChars)
		}
		parts[1].cut = cutDropped
		if merged := withMarker(parts, maxChars); textcut.Len(merged) <= maxChars {
			return merged
		}
		up = parts[1:]
	}
	// Then heirloom's sections, from the lowest priority up; among equals, the later one first.
	parts := append(splitSections(ours, sections), up...)
	for order := len(up) + 1; ; order++ {
		victim := -1
		for i, p := range parts {
			if p.cut == cutDropped {
				continue
			}
			if victim < 0 || p.priority >= parts[victim].priority {
				victim = i
			}
		}
		if victim < 0 {
			break
		}
		v := &parts[victim]
		v.cut, v.cutOrder = cutShortened, order
		used := textcut.Len(contextSep) + textcut.Len(cutMarker(parts, maxChars))
		if rest := joinSections(withoutSection(parts, victim)); rest != "" {
			used += textcut.Len(rest) + textcut.Len(contextSep)
		}
		if shortened, ok := shorten(*v, maxChars-used); ok {
			v.text = shortened
			break
		}
		v.cut = cutDropped
		if textcut.Len(withMarker(parts, maxChars)) <= maxChars {
			break
		}
	}
	if merged := withMarker(parts, maxChars); textcut.Len(merged) <= maxChars {
		return merged
	}
	// Only when maxChars is too small for the marker itself: keep what fits, ours first.
	return textcut.Head(whole, maxChars)
}

// yieldTranscript fits ours and theirs within maxChars by first cutting the older part of our
// inherited block's recent transcript (heading.RecentTranscript), which takes whatever room the
// block's other sections leave, or dropping that section. The upstream's part keeps up to half
// the cap: a longer one is cut to that at its end, and the cut marker says so. ok is false when
// ours has no such section, or that is not enough (the caller then cuts as before).
func yieldTranscript(ours, theirs string, maxChars int) (string, bool) {
	at := headingAt(ours, heading.RecentTranscript)
	if at < 0 {
		return "", false
	}
	bodyAt := at + len(heading.RecentTranscript) + 1
	if bodyAt > len(ours) {
		return "", false
	}
	end := len(ours)
	if i := strings.Index(ours[bodyAt:], "\n\n"); i >= 0 {
		end = bodyAt + i // the next section, or the block's cut note
	}
	after := "" // what follows ours: the upstream's part, and the marker when it was cut
	if theirs != "" {
		after = contextSep + theirs
		if textcut.Len(theirs) > maxChars/2 {
			part := section{name: "upstream hook context", text: theirs, cut: cutShortened, cutOrder: 1}
			marker := cutMarker([]section{part}, maxChars)
			short, ok := shorten(part, maxChars/2-textcut.Len(contextSep)-textcut.Len(marker))
			if !ok {
				return "", false
			}
			after = contextSep + short + contextSep + marker
		}
	}
	body := ours[bodyAt:end]
	need := textcut.Len(ours) + textcut.Len(after) - maxChars
	if keep := textcut.Len(body) - need; keep >= minUseful {
		if merged := ours[:bodyAt] + textcut.Tail(body, keep) + ours[end:] + after; textcut.Len(merged) <= maxChars {
			return merged, true
		}
	}
	without := strings.TrimSpace(strings.TrimRight(ours[:at], "\n") + ours[end:])
	if merged := without + after; textcut.Len(merged) <= maxChars {
		return merged, true
	}
	return "", false
}

// withMarker joins the sections not dropped and appends the cut marker.
func withMarker(parts []section, maxChars int) string {
	merged := joinSections(parts)
	if merged != "" {
		merged += contextSep
	}
	return merged + cutMarker(parts, maxChars)
}

// shorten Head-cuts s's text to room units. ok is false when nothing useful would remain: less
// than minUseful units of text under its heading.
func shorten(s section, room int) (string, bool) {
	if room < textcut.Len(s.heading)+minUseful {
		return "", false
	}
	cut := textcut.Head(s.text, room)
	body, ok := strings.CutPrefix(cut, s.heading)
	if !ok || textcut.Len(strings.TrimSpace(body)) < minUseful {
		return "", false
	}
	return cut, true
}

// splitSections splits heirloom's context at headings (the first line equal to each; an empty
// heading is ignored), whose index is their priority. Text before the first heading, or all of
// it when no heading is found, is a section of the lowest priority among heirloom's. Each
// section's surrounding whitespace is trimmed.
func splitSections(ours string, headings []string) []section {
	type start struct{ at, priority int }
	var starts []start
	for p, h := range headings {
		if h == "" {
			continue
		}
		if at := headingAt(ours, h); at >= 0 {
			starts = append(starts, start{at, p})
		}
	}
	// Order by position: an insertion sort, for a handful of headings.
	for i := 1; i < len(starts); i++ {
		for j := i; j > 0 && starts[j].at < starts[j-1].at; j-- {
			starts[j], starts[j-1] = starts[j-1], starts[j]
		}
	}
	var parts []section
	add := func(text, heading string, priority int) {
		if text = strings.TrimSpace(text); text == "" {
			return
		}
		name := "heirloom context"
		if heading != "" {
			name = strings.TrimPrefix(strings.Trim(heading, "[]"), "## ")
		}
		parts = append(parts, section{name: name, heading: heading, text: text, priority: priority})
	}
	first := len(ours)
	if len(starts) > 0 {
		first = starts[0].at
	}
	add(ours[:first], "", len(headings))
	for i, st := range starts {
		end := len(ours)
		if i+1 < len(starts) {
			end = starts[i+1].at
		}
		add(ours[st.at:end], headings[st.priority], st.priority)
	}
	return parts
}

// headingAt returns the offset of the first line of s equal to heading, or -1.
func headingAt(s, heading string) int {
	for from := 0; from < len(s); {
		i := strings.Index(s[from:], heading)
		if i < 0 {
			return -1
		}
		at := from + i
		end := at + len(heading)
		if (at == 0 || s[at-1] == '\n') && (end == len(s) || s[end] == '\n' || s[end] == '\r') {
			return at
		}
		from = at + 1
	}
	return -1
}

// joinSections joins the sections not dropped, in order, with a blank line between them.
func joinSections(parts []section) string {
	var b strings.Builder
	for _, p := range parts {
		if p.cut == cutDropped {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(contextSep)
		}
		b.WriteString(p.text)
	}
	return b.String()
}

// withoutSection returns parts with parts[i] marked dropped, for measuring the others.
func withoutSection(parts []section, i int) []section {
	out := append([]section(nil), parts...)
	out[i].cut = cutDropped
	return out
}

// cutMarker says which sections were shortened or dropped, in the order they were cut, e.g.
// "[heirloom: cut to fit 9500 characters: upstream hook context dropped; Recovered Session
// Checkpoint shortened]".
func cutMarker(parts []section, maxChars int) string {
	cuts := make([]string, len(parts)+1)
	for _, p := range parts {
		if p.cut != "" && p.cutOrder < len(cuts) {
			cuts[p.cutOrder] = p.name + " " + p.cut
		}
	}
	var named []string
	for _, c := range cuts {
		if c != "" {
			named = append(named, c)
		}
	}
	return "[heirloom: cut to fit " + strconv.Itoa(maxChars) + " characters: " + strings.Join(named, "; ") + "]"
}
