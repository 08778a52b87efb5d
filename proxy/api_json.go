package proxy

import (
	"time"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// The read API's reply shapes. They are spelled out here, field by field, so that a change to a
// stored record never changes the API by accident. Every field is always present (empty strings,
// zeros, empty lists) except the optional times noted, which are absent when unknown. Texts a
// user or agent wrote (turns, objectives, titles, run prompts and results) leave redacted, as in
// the blocks (inject.Redact).

// APISession is a session as the API shows it.
type APISession struct {
	Scope          string           `json:"scope"`
	ID             string           `json:"id"`
	Harness        string           `json:"harness"`
	NativeID       string           `json:"native_id"`
	ParentID       string           `json:"parent_id"`
	ParentScope    string           `json:"parent_scope,omitempty"` // when the parent is in another scope
	ParentInferred bool             `json:"parent_inferred"`
	Depth          int              `json:"depth"`
	Project        string           `json:"project"`
	ProjectNorm    string           `json:"project_norm"`
	Title          string           `json:"title"`
	Objective      string           `json:"objective"`
	AgentType      string           `json:"agent_type"`
	Status         string           `json:"status"`
	CreatedAt      time.Time        `json:"created_at"`
	UpdatedAt      time.Time        `json:"updated_at"`
	TurnCount      uint64           `json:"turn_count"`
	Files          []string         `json:"files"`
	Transcript     APITranscriptPos `json:"transcript"`
	Compactions    int              `json:"compactions"` // the compaction epoch: compactions reported so far
}

// APITranscriptPos is where heirloom has read a session's transcript file up to.
type APITranscriptPos struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
}

// APITurn is one transcript turn.
type APITurn struct {
	Seq      uint64    `json:"seq"`
	SourceID string    `json:"source_id"`
	Role     string    `json:"role"`
	Text     string    `json:"text"`
	Tool     string    `json:"tool"`
	Files    []string  `json:"files"`
	At       time.Time `json:"at,omitzero"` // absent when the harness gave no time
}

// APIRun is one sub-agent run.
type APIRun struct {
	Scope       string    `json:"scope"`
	ID          string    `json:"id"`
	Harness     string    `json:"harness"`
	RootID      string    `json:"root_id"`
	ParentID    string    `json:"parent_id"`
	ChildID     string    `json:"child_id"`
	ChildScope  string    `json:"child_scope,omitempty"` // when the child is in another scope
	Provisional bool      `json:"provisional"`
	Description string    `json:"description"`
	Prompt      string    `json:"prompt"`
	Type        string    `json:"type"`
	Status      string    `json:"status"`
	Result      string    `json:"result"`
	Tokens      int64     `json:"tokens"`
	DurationMs  int64     `json:"duration_ms"`
	CreatedAt   time.Time `json:"created_at"`
	StartedAt   time.Time `json:"started_at,omitzero"` // absent while pending
	EndedAt     time.Time `json:"ended_at,omitzero"`   // absent until it finished

	Depth int `json:"depth"` // the sub-agent's depth: 1 for a child of a top-level session
	// EndReason is heirloom's account of the end: completed, failed, killed, watchdog_timeout
	// or ghost_sweep; "" while open and for a refused spawn.
	EndReason string `json:"end_reason"`
	Reason    string `json:"reason"` // why, in words: a refusal's limit, what ended a swept run
	Turns     int    `json:"turns"`  // turns (steps) the sub-agent took; 0 when unknown
	// ResultChars is the full result's length, kept when it was swept; Result then holds its
	// condensed form at level Condensation.
	ResultChars  int       `json:"result_chars"`
	Swept        bool      `json:"swept"`
	SweptAt      time.Time `json:"swept_at,omitzero"` // absent until swept
	Condensation int       `json:"condensation"`
	// Summary is the level-2 summary of a long result while the full result is kept; "" when
	// none was made.
	Summary string `json:"summary"`
}

// RunReply is the reply of GET /api/runs/{id}: the run, and its result cast as a model reads it
// (the header, the result condensed to fit, the footer; see inject.CastRun).
type RunReply struct {
	Run  APIRun `json:"run"`
	Cast string `json:"cast"`
}

// SessionsReply is the reply of GET /api/sessions: newest first.
type SessionsReply struct {
	Sessions []APISession `json:"sessions"`
}

// SessionReply is the reply of GET /api/sessions/{key}. Run is the run that spawned the
// session (null for a top-level session or one not paired yet); Children counts its direct
// sub-agents.
type SessionReply struct {
	Session  APISession `json:"session"`
	Run      *APIRun    `json:"run"`
	Children int        `json:"children"`
}

// TranscriptReply is the reply of GET /api/sessions/{key}/transcript. Next is the from value
// of the next page, or null when the page reached the last turn stored so far; a running
// session's later turns are then read from the last seq plus one.
type TranscriptReply struct {
	Turns []APITurn `json:"turns"`
	Next  *uint64   `json:"next"`
}

// LineageReply is the reply of GET /api/sessions/{key}/lineage. Ancestors run from the root to
// the direct parent; Truncated says a bound (depth, node count) or a cycle cut the walk short.
type LineageReply struct {
	Session     APISession    `json:"session"`
	Ancestors   []APISession  `json:"ancestors"`
	Descendants []LineageNode `json:"descendants"`
	Truncated   bool          `json:"truncated"`
}

// LineageNode is one descendant in a lineage tree: the session, the run that spawned it (null
// when none is paired) and its own descendants, oldest first.
type LineageNode struct {
	Session  APISession    `json:"session"`
	Run      *APIRun       `json:"run"`
	Children []LineageNode `json:"children"`
}

// RunsReply is the reply of GET /api/runs: newest first.
type RunsReply struct {
	Runs []APIRun `json:"runs"`
}

func apiSession(s kv.Session) APISession {
	return APISession{
		Scope: s.Scope, ID: s.ID, Harness: s.Harness, NativeID: s.NativeID,
		ParentID: s.ParentID, ParentScope: s.ParentScope, ParentInferred: s.ParentInferred, Depth: s.Depth,
		Project: s.Project, ProjectNorm: s.ProjectNorm, Title: inject.Redact(s.Title), Objective: inject.Redact(s.Objective),
		AgentType: s.AgentType, Status: s.Status, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		TurnCount: s.TurnCount, Files: nonNil(s.Files),
		Transcript:  APITranscriptPos{Path: s.Transcript.Path, Offset: s.Transcript.Offset},
		Compactions: s.Compactions,
	}
}

func apiSessions(list []kv.Session) []APISession {
	out := make([]APISession, len(list))
	for i, s := range list {
		out[i] = apiSession(s)
	}
	return out
}

func apiTurn(t kv.Turn) APITurn {
	return APITurn{Seq: t.Seq, SourceID: t.SourceID, Role: t.Role, Text: inject.Redact(t.Text), Tool: t.Tool, Files: nonNil(t.Files), At: t.At}
}

func apiRun(r kv.Run) APIRun {
	return APIRun{
		Scope: r.Scope, ID: r.ID, Harness: r.Harness, RootID: r.RootID, ParentID: r.ParentID,
		ChildID: r.ChildID, ChildScope: r.ChildScope, Provisional: r.Provisional, Description: inject.Redact(r.Description),
		Prompt: inject.Redact(r.Prompt), Type: r.Type, Status: r.Status, Result: inject.Redact(r.Result), Tokens: r.Tokens,
		DurationMs: r.DurationMs, CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, EndedAt: r.EndedAt,
		Depth: r.Depth, EndReason: r.EndReason, Reason: inject.Redact(r.Reason), Turns: r.Turns,
		ResultChars: r.ResultChars, Swept: r.Swept, SweptAt: r.SweptAt, Condensation: r.Condensation,
		Summary: inject.Redact(r.Summary),
	}
}

// nonNil returns list, or an empty list for nil, so JSON shows [] rather than null.
func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
