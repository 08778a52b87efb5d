package kv

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Session statuses.
const (
	StatusActive = "active" // the harness is (or was last seen) running it
	StatusEnded  = "ended"  // the harness said it ended
)

// Session is one harness session or sub-agent, as heirloom knows it. A session is identified by
// (Scope, ID).
type Session struct {
	Scope   string // memory scope: the configured agent; for OpenClaw its agentId. Never empty.
	ID      string // heirloom's key for it, unique within Scope (Claude Code: session_id, or session_id:agent_id for a sub-agent)
	Harness string // "claude-code", "opencode", "openclaw" or "codex"
	// NativeID is the harness's own id (Claude Code: session_id, or agent_id for a sub-agent).
	NativeID string

	ParentID string // ID of the parent session; empty for a top-level session
	// ParentScope is the parent's memory scope when it is not Scope (an OpenClaw sub-agent
	// spawned under another agent id); "" when the parent is in Scope.
	ParentScope    string
	ParentInferred bool // the parent was guessed (no parent information in the payload), not read
	Depth          int  // 0 for a top-level session, 1 for its sub-agents, …

	Project     string // the working directory the harness reported
	ProjectNorm string // Project, realpath-normalised; groups sessions of one project
	Title       string // a short human title (a sub-agent's description); may be empty
	Objective   string // what the session is for: a sub-agent's task prompt, or a session's first prompt
	AgentType   string // the sub-agent type (Claude Code agent_type); empty for top-level sessions
	Status      string // StatusActive or StatusEnded

	CreatedAt time.Time // first seen
	UpdatedAt time.Time // last activity; drives the recency index

	Transcript TranscriptPos // where heirloom reads the session's transcript from
	TurnCount  uint64        // turns stored so far; the next turn's Seq
	// Compactions counts the compactions the harness reported: the session's compaction epoch.
	Compactions int
	// CompactedAt is when the latest compaction was reported; zero before the first.
	CompactedAt time.Time
	// Files are the files the session's turns touched, most recent first, at most MaxFiles.
	// AppendTurns keeps it; writers of the session leave it as read.
	Files []string

	// Prompts counts the user turns stored for the session: its prompts. Store-owned, like
	// TurnCount.
	Prompts int
	// Decisions and Constraints are stated explicitly (API, MCP), oldest first, at most
	// MaxStatements each.
	Decisions   []string
	Constraints []string
	// LastCheckpointPrompts and LastCheckpointAt are Prompts and the time when the session's
	// latest checkpoint was written; zero before the first. They decide the next periodic one.
	LastCheckpointPrompts int
	LastCheckpointAt      time.Time
	// ReinforcedEpoch is the compaction epoch (Compactions) whose objective reinforcement the
	// session was last given; the next one is due once Compactions exceeds it.
	ReinforcedEpoch int
	// FirstInjectDone says a plugin harness already asked for the session's first model call's
	// context (the recovered block is given once).
	FirstInjectDone bool
	// FreshObjective says the harness reset the session under its key (OpenClaw's reset and
	// new): its next user turn is its objective, whatever came before.
	FreshObjective bool
	// ResetSeq is TurnCount when the harness last reset the session under its key; 0 when it
	// never did. Turns before it, and checkpoints that cover no turn after it, belong to the old
	// conversation.
	ResetSeq uint64
	// CompactionCheckpoint is the ID of the session's latest pre_compaction checkpoint: the one
	// the objective reinforcement after that compaction hands back, however many checkpoints
	// (spawns, periodic) came after it. Empty before the first.
	CompactionCheckpoint string
}

// MaxStatements bounds Session.Decisions and Session.Constraints.
const MaxStatements = 50

// AddStatements appends the non-empty texts of add to list, dropping exact repeats, and keeps
// the newest MaxStatements.
func AddStatements(list []string, add ...string) []string {
	for _, a := range add {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		list = slices.DeleteFunc(list, func(s string) bool { return s == a })
		list = append(list, a)
	}
	if len(list) > MaxStatements {
		list = slices.Clone(list[len(list)-MaxStatements:])
	}
	return list
}

// MaxFiles bounds Session.Files.
const MaxFiles = 50

// touchFiles puts files (in the order touched) at the front of s.Files, without duplicates,
// keeping at most MaxFiles.
func (s *Session) touchFiles(files []string) {
	if len(files) == 0 {
		return
	}
	out := make([]string, 0, MaxFiles)
	seen := map[string]bool{}
	for i := len(files) - 1; i >= 0 && len(out) < MaxFiles; i-- {
		if f := files[i]; f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, f := range s.Files {
		if len(out) >= MaxFiles {
			break
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	s.Files = out
}

// TranscriptPos is where heirloom has read a transcript file up to.
type TranscriptPos struct {
	Path   string // the transcript file; empty when the harness keeps none
	Offset int64  // bytes consumed so far: the next read starts here
	// Ident identifies the file that Offset belongs to (device and inode), so a replaced file is
	// re-read from 0. Empty when unknown.
	Ident string
}

// Validate reports the first problem with s as an error naming the field.
func (s *Session) Validate() error {
	switch {
	case s.Scope == "":
		return fmt.Errorf("session: scope required")
	case strings.ContainsRune(s.Scope, 0):
		return fmt.Errorf("session %q: scope contains NUL", s.ID)
	case s.ID == "":
		return fmt.Errorf("session: id required")
	case strings.ContainsRune(s.ID, 0):
		return fmt.Errorf("session %q: id contains NUL", s.ID)
	case s.Harness == "":
		return fmt.Errorf("session %q: harness required", s.ID)
	case s.ParentID == s.ID && s.ParentScope == "":
		return fmt.Errorf("session %q: is its own parent", s.ID)
	case s.ParentScope != "" && (s.ParentScope == s.Scope || checkScope(s.ParentScope) != nil):
		return fmt.Errorf("session %q: parent scope %q: not another valid scope", s.ID, s.ParentScope)
	case s.Status != StatusActive && s.Status != StatusEnded:
		return fmt.Errorf("session %q: status %q: want %q or %q", s.ID, s.Status, StatusActive, StatusEnded)
	}
	return nil
}

// Fact kinds.
const (
	FactConstraint = "constraint" // a standing rule: "never touch vendor/"
	FactDecision   = "decision"   // a choice made: "we'll use SQLite from now on"
	FactPlan       = "plan"       // a change of plan: "scratch that, switch to the v2 API"
	FactFile       = "file"       // a file the session changed (an edit or a write): its path
)

// Fact is one entry of a session's facts ledger.
type Fact struct {
	Kind string `json:"k"` // FactConstraint, FactDecision or FactPlan
	Text string `json:"t"`
	Seq  uint64 `json:"s"` // the turn that stated it (its latest statement)
	Role string `json:"r"` // "user" or "assistant"
	// Replaces is the text of the fact this one superseded, when it superseded one.
	Replaces string `json:"rp,omitempty"`
	// Replaced says a later fact superseded this one, in turn ReplacedAt.
	Replaced   bool   `json:"rd,omitempty"`
	ReplacedAt uint64 `json:"ra,omitempty"`
}

// FactFinder keeps a session's facts ledger as its turns are stored. The finding is the caller's
// business (package inject), as a search index's analysis is; the store keeps the ledger, a
// record of its own beside the session's, in the batch that stores the turns, and reads it only
// when a turn states something or a stored turn is stored again.
type FactFinder interface {
	// Detect returns what t states, without Seq; cheap when it states nothing.
	Detect(t *Turn) []Fact
	// Note returns ledger with t (stored new, or again in place, with its Seq) and found, what
	// Detect found in it.
	Note(ledger []Fact, t *Turn, found []Fact) []Fact
}
