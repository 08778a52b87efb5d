package kv

import (
	"fmt"
	"time"
)

// Turn is one stored transcript record of a session. Turns are append-only, one key per turn,
// ordered by Seq.
type Turn struct {
	Seq      uint64    // position in the session's transcript, from 0; assigned by the store
	SourceID string    // the harness's id for the record; a re-read with the same SourceID is not stored twice
	Role     string    // "user", "assistant", "tool" or "system"
	Text     string    // the readable text
	Tool     string    // the tool's name, for tool calls and results
	Files    []string  // file paths the record's tool calls touched
	At       time.Time // when the harness wrote it; zero when unknown
	// Unindexed keeps the turn out of the search index (heirloom's own MCP traffic: an agent's
	// searches must not find their own queries and results). It is stored and read back.
	Unindexed bool
}

// Validate reports the first problem with t.
func (t *Turn) Validate() error {
	switch t.Role {
	case "user", "assistant", "tool", "system":
		return nil
	default:
		return fmt.Errorf("turn %d: role %q: want user, assistant, tool or system", t.Seq, t.Role)
	}
}
