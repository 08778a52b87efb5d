package engine

import (
	"fmt"
	"strings"

	"github.com/heirloom-dev/heirloom/inject"
)

// Bounds on what an agent or user states through a checkpoint (the API, MCP's session_digest):
// statements are kept on the session, which every hook reads, so each is bounded.
const (
	maxObjectiveChars = 2000 // the objective
	maxSummaryChars   = 4000 // the summary
	maxStatementChars = 1000 // one decision, constraint or next step
	maxStatements     = 20   // decisions, constraints or next steps in one call, each kind
)

// check refuses statements past the bounds, naming which, as an *InvalidError.
func (st Statements) check() error {
	if n := inject.Len(strings.TrimSpace(st.Objective)); n > maxObjectiveChars {
		return &InvalidError{Message: fmt.Sprintf("objective: %d characters, at most %d", n, maxObjectiveChars)}
	}
	if n := inject.Len(strings.TrimSpace(st.Summary)); n > maxSummaryChars {
		return &InvalidError{Message: fmt.Sprintf("summary: %d characters, at most %d", n, maxSummaryChars)}
	}
	for name, list := range map[string][]string{"decisions": st.Decisions, "constraints": st.Constraints, "next_steps": st.NextSteps} {
		if len(list) > maxStatements {
			return &InvalidError{Message: fmt.Sprintf("%s: %d given, at most %d at a time", name, len(list), maxStatements)}
		}
		for i, s := range list {
			if n := inject.Len(strings.TrimSpace(s)); n > maxStatementChars {
				return &InvalidError{Message: fmt.Sprintf("%s[%d]: %d characters, at most %d", name, i, n, maxStatementChars)}
			}
		}
	}
	return nil
}
