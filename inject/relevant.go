package inject

import (
	"fmt"
	"strings"
)

// Passage is one passage of the parent's family that a search for the child's task found: a
// short part of one turn, already cut (a search snippet), attributed to its session and turn.
type Passage struct {
	Session string // the session's ID
	// From names the session for the child: "parent", or "sub-agent <title>" for one of the
	// parent's sub-agents.
	From string
	Turn uint64 // the turn's Seq in its session
	Role string // "user", "assistant", "tool" or "system"
	Text string
}

// Passages in the inherited block.
const (
	// MaxPassages bounds the passages one block shows.
	MaxPassages  = 12
	passageChars = 400 // one passage's text
	fromChars    = 60  // its session's name
)

const relevantHeading = "\n\n### Relevant to your task\n"

// passageLine is one rendered passage and the turn it came from.
type passageLine struct {
	session string
	turn    uint64
	line    string
}

// passageLines renders the passages as "- [<From>, turn N, <role>] text" lines (", <role>" left
// out when unknown; From "session <ID>" when empty), best first: redacted, on one line, the text
// Head-cut to passageChars; repeats of a text already listed are left out, and at most max are
// kept (≤ 0 or over MaxPassages: MaxPassages). Which of them the transcript section already
// shows is decided once the block fits (inheritedSections.fit).
func passageLines(ps []Passage, max int) []passageLine {
	if max <= 0 || max > MaxPassages {
		max = MaxPassages
	}
	seen := map[string]bool{}
	var out []passageLine
	for _, p := range ps {
		if len(out) == max {
			break
		}
		text := oneLine(p.Text, passageChars)
		key := strings.ToLower(strings.Trim(text, "… "))
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		from := oneLine(p.From, fromChars)
		if from == "" {
			from = "session " + oneLine(p.Session, fromChars)
		}
		label := fmt.Sprintf("%s, turn %d", from, p.Turn)
		if role := oneLine(p.Role, fromChars); role != "" {
			label += ", " + role
		}
		out = append(out, passageLine{session: p.Session, turn: p.Turn, line: "- [" + label + "] " + text})
	}
	return out
}
