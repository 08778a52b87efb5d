package proxy

import (
	"fmt"
	"strings"

	"github.com/heirloom-dev/heirloom/inject"
)

// The MCP tools' text: what an agent reads. Each reply says what it holds, and how to get more
// when there is more. Texts arrive redacted from the API.

// renderHits renders a search reply.
func renderHits(query string, reply SearchReply) string {
	var b strings.Builder
	if len(reply.Hits) == 0 {
		fmt.Fprintf(&b, "No turns match %q. Words are ANDed: try fewer words, a OR b, or a prefix*.", query)
		return b.String()
	}
	if len(reply.Hits) == 1 {
		fmt.Fprintf(&b, "1 turn matches %q:\n", query)
	} else {
		fmt.Fprintf(&b, "%d turns match %q, best first:\n", len(reply.Hits), query)
	}
	for i, h := range reply.Hits {
		head := []string{"session " + h.Session, fmt.Sprintf("turn %d", h.Turn), h.Role}
		if !h.Time.IsZero() {
			head = append(head, h.Time.UTC().Format("2006-01-02 15:04 UTC"))
		}
		if h.Harness != "" {
			head = append(head, h.Harness)
		}
		if h.Project != "" {
			head = append(head, h.Project)
		}
		if t := oneLineCut(h.Title, 80); t != "" {
			head = append(head, fmt.Sprintf("%q", t))
		}
		fmt.Fprintf(&b, "\n[%d] %s\n    %s\n    around it: session_transcript {\"session\": %q, \"from\": %d}\n", i+1, strings.Join(head, " · "), oneLineCut(h.Snippet, 400), h.Session, h.Turn-min(h.Turn, 2))
	}
	if reply.Cursor != "" {
		fmt.Fprintf(&b, "\nMore hits: call session_search again with the same query and \"cursor\": %q.", reply.Cursor)
	}
	return b.String()
}

// renderTranscript renders a page of turns, each text cut to chars, the whole page to about
// mcpReplyChars: past that the page ends early and says where the next one starts.
func renderTranscript(session string, from uint64, reply TranscriptReply, chars int) string {
	var b strings.Builder
	if len(reply.Turns) == 0 {
		fmt.Fprintf(&b, "Session %s has no turns from turn %d (none recorded yet, or the transcript ends before it).", session, from)
		return b.String()
	}
	first, last := reply.Turns[0].Seq, reply.Turns[0].Seq
	var body strings.Builder
	next := reply.Next
	for i, t := range reply.Turns {
		role := t.Role
		if t.Tool != "" {
			role += " " + t.Tool
		}
		text := t.Text
		if text == "" && len(t.Files) > 0 {
			text = inject.Redact(strings.Join(t.Files, ", "))
		}
		if n := inject.Len(text); n > chars {
			cut := strings.TrimSuffix(inject.Head(text, chars), " […]")
			text = fmt.Sprintf("%s … [cut: %d more characters; ask with a larger turn_chars]", cut, n-inject.Len(cut))
		}
		line := fmt.Sprintf("\n[%d] %s: %s\n", t.Seq, role, text)
		if i > 0 && body.Len()+len(line) > mcpReplyChars {
			seq := t.Seq
			next = &seq
			break
		}
		last = t.Seq
		body.WriteString(line)
	}
	fmt.Fprintf(&b, "Session %s, turns %d to %d:\n%s", session, first, last, body.String())
	if next != nil {
		fmt.Fprintf(&b, "\nMore turns: session_transcript with \"from\": %d.", *next)
	} else {
		b.WriteString("\nThat is the last turn recorded so far.")
	}
	return b.String()
}

// renderLineage renders a session's place in its tree.
func renderLineage(reply LineageReply) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s\n", sessionLine(reply.Session))
	if reply.Session.Objective != "" {
		fmt.Fprintf(&b, "Objective: %s\n", oneLineCut(reply.Session.Objective, 500))
	}
	if len(reply.Ancestors) == 0 {
		b.WriteString("\nIt is a top-level session (no parent recorded).\n")
	} else {
		b.WriteString("\nAncestors, top-level session first:\n")
		for _, a := range reply.Ancestors {
			fmt.Fprintf(&b, "- %s\n", sessionLine(a))
		}
	}
	if len(reply.Descendants) == 0 {
		b.WriteString("\nNo sub-agents recorded below it.")
	} else {
		b.WriteString("\nSub-agents below it:\n")
		writeNodes(&b, reply.Descendants, 0)
	}
	if reply.Truncated {
		b.WriteString("\n(The tree was cut: too deep or too large to list whole.)")
	}
	return strings.TrimRight(b.String(), "\n")
}

func writeNodes(b *strings.Builder, nodes []LineageNode, depth int) {
	indent := strings.Repeat("  ", depth)
	for _, n := range nodes {
		fmt.Fprintf(b, "%s- %s\n", indent, sessionLine(n.Session))
		if r := n.Run; r != nil {
			if task := oneLineCut(firstNonEmpty(r.Description, r.Prompt), 200); task != "" {
				fmt.Fprintf(b, "%s  task: %s\n", indent, task)
			}
			if r.Result != "" {
				fmt.Fprintf(b, "%s  result: %s\n", indent, oneLineCut(r.Result, 300))
			}
		}
		writeNodes(b, n.Children, depth+1)
	}
}

// sessionLine is a session on one line: id, harness, status, title.
func sessionLine(s APISession) string {
	parts := []string{s.ID, s.Harness, s.Status}
	if s.AgentType != "" {
		parts = append(parts, "agent "+s.AgentType)
	}
	line := strings.Join(nonEmpty(parts), " · ")
	if t := oneLineCut(s.Title, 80); t != "" {
		line += fmt.Sprintf(" %q", t)
	}
	return line
}

// renderRuns renders a list of runs: each run's line, its description and task, then its cast
// when casts holds one (by run id; see mcpTools.casts), else a line of its result.
func renderRuns(in RunsInput, reply RunsReply, casts map[string]string) string {
	var b strings.Builder
	whose := "spawned by session " + in.Session
	if in.Session == "" {
		whose = "in the tree of session " + in.Root
	}
	if len(reply.Runs) == 0 {
		fmt.Fprintf(&b, "No sub-agent runs %s", whose)
		if in.Status != "" {
			fmt.Fprintf(&b, " with status %s", in.Status)
		}
		b.WriteString(".")
		return b.String()
	}
	if len(reply.Runs) == 1 {
		fmt.Fprintf(&b, "1 sub-agent run %s:\n", whose)
	} else {
		fmt.Fprintf(&b, "%d sub-agent runs %s, newest first:\n", len(reply.Runs), whose)
	}
	for _, r := range reply.Runs {
		head := []string{"run " + r.ID, r.Status}
		if r.ChildID != "" {
			head = append(head, "sub-agent session "+r.ChildID)
		}
		if r.Type != "" {
			head = append(head, "type "+r.Type)
		}
		if !r.CreatedAt.IsZero() {
			head = append(head, "started "+r.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
		}
		fmt.Fprintf(&b, "\n- %s\n", strings.Join(nonEmpty(head), " · "))
		if d := oneLineCut(r.Description, 200); d != "" {
			fmt.Fprintf(&b, "  description: %s\n", d)
		}
		if p := oneLineCut(r.Prompt, mcpRunTextChars); p != "" {
			fmt.Fprintf(&b, "  task: %s\n", p)
		}
		if cast := casts[r.ID]; cast != "" {
			fmt.Fprintf(&b, "\n%s\n", cast)
			continue
		}
		if r.EndReason != "" && r.EndReason != r.Status {
			fmt.Fprintf(&b, "  end reason: %s\n", r.EndReason)
		}
		if r.Result != "" {
			fmt.Fprintf(&b, "  result: %s\n", oneLineCut(r.Result, mcpRunTextChars))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// oneLineCut puts s on one line (runs of white space become one space) and cuts it to max
// UTF-16 units at a word boundary, marking the cut once (" […]").
func oneLineCut(s string, max int) string {
	return inject.Head(strings.Join(strings.Fields(s), " "), max)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func nonEmpty(ss []string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
