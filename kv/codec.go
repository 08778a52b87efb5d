package kv

import (
	"encoding/json"
	"fmt"
	"time"
)

// Values are JSON. The structs below are the on-disk shape, with explicit names, so renaming a
// field of Session or Turn cannot silently change what is stored. Unknown fields are ignored
// when reading, so a newer binary may add fields without a schema bump; removing or re-meaning
// one needs a migration (migrate.go).

// sessionValue is the stored form of a Session (key: sessionKey).
type sessionValue struct {
	Scope          string          `json:"scope"`
	ID             string          `json:"id"`
	Harness        string          `json:"harness"`
	NativeID       string          `json:"native_id,omitempty"`
	ParentID       string          `json:"parent_id,omitempty"`
	ParentScope    string          `json:"parent_scope,omitempty"`
	ParentInferred bool            `json:"parent_inferred,omitempty"`
	Depth          int             `json:"depth,omitempty"`
	Project        string          `json:"project,omitempty"`
	ProjectNorm    string          `json:"project_norm,omitempty"`
	Title          string          `json:"title,omitempty"`
	Objective      string          `json:"objective,omitempty"`
	AgentType      string          `json:"agent_type,omitempty"`
	Status         string          `json:"status"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
	Transcript     transcriptValue `json:"transcript"`
	TurnCount      uint64          `json:"turn_count"`
	Files          []string        `json:"files,omitempty"`
	Compactions    int             `json:"compactions,omitempty"`
	CompactedAt    time.Time       `json:"compacted_at,omitzero"`

	Prompts               int       `json:"prompts,omitempty"`
	Decisions             []string  `json:"decisions,omitempty"`
	Constraints           []string  `json:"constraints,omitempty"`
	LastCheckpointPrompts int       `json:"last_checkpoint_prompts,omitempty"`
	LastCheckpointAt      time.Time `json:"last_checkpoint_at,omitzero"`
	ReinforcedEpoch       int       `json:"reinforced_epoch,omitempty"`
	FirstInjectDone       bool      `json:"first_inject_done,omitempty"`
	FreshObjective        bool      `json:"fresh_objective,omitempty"`
	ResetSeq              uint64    `json:"reset_seq,omitempty"`
	CompactionCheckpoint  string    `json:"compaction_checkpoint,omitempty"`
}

type transcriptValue struct {
	Path   string `json:"path,omitempty"`
	Offset int64  `json:"offset,omitempty"`
	Ident  string `json:"ident,omitempty"`
}

// turnValue is the stored form of a Turn (key: turnKey, which carries Seq).
type turnValue struct {
	SourceID string    `json:"source_id,omitempty"`
	Role     string    `json:"role"`
	Text     string    `json:"text,omitempty"`
	Tool     string    `json:"tool,omitempty"`
	Files    []string  `json:"files,omitempty"`
	At       time.Time `json:"at,omitzero"`

	Unindexed bool `json:"unindexed,omitempty"`
}

func encodeSession(s *Session) ([]byte, error) {
	v := sessionValue{
		Scope: s.Scope, ID: s.ID, Harness: s.Harness, NativeID: s.NativeID,
		ParentID: s.ParentID, ParentScope: s.ParentScope, ParentInferred: s.ParentInferred, Depth: s.Depth,
		Project: s.Project, ProjectNorm: s.ProjectNorm, Title: s.Title, Objective: s.Objective,
		AgentType: s.AgentType, Status: s.Status, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		Transcript: transcriptValue(s.Transcript),
		TurnCount:  s.TurnCount,
		Files:      s.Files,

		Compactions: s.Compactions,
		CompactedAt: s.CompactedAt,

		Prompts: s.Prompts, Decisions: s.Decisions, Constraints: s.Constraints,
		LastCheckpointPrompts: s.LastCheckpointPrompts, LastCheckpointAt: s.LastCheckpointAt,
		ReinforcedEpoch: s.ReinforcedEpoch, FirstInjectDone: s.FirstInjectDone, FreshObjective: s.FreshObjective, ResetSeq: s.ResetSeq,
		CompactionCheckpoint: s.CompactionCheckpoint,
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode session %s/%s: %w", s.Scope, s.ID, err)
	}
	return b, nil
}

func decodeSession(b []byte) (Session, error) {
	var v sessionValue
	if err := json.Unmarshal(b, &v); err != nil {
		return Session{}, fmt.Errorf("decode session: %w", err)
	}
	return Session{
		Scope: v.Scope, ID: v.ID, Harness: v.Harness, NativeID: v.NativeID,
		ParentID: v.ParentID, ParentScope: v.ParentScope, ParentInferred: v.ParentInferred, Depth: v.Depth,
		Project: v.Project, ProjectNorm: v.ProjectNorm, Title: v.Title, Objective: v.Objective,
		AgentType: v.AgentType, Status: v.Status, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
		Transcript: TranscriptPos(v.Transcript),
		TurnCount:  v.TurnCount,
		Files:      v.Files,

		Compactions: v.Compactions,
		CompactedAt: v.CompactedAt,

		Prompts: v.Prompts, Decisions: nilIfEmpty(v.Decisions), Constraints: nilIfEmpty(v.Constraints),
		LastCheckpointPrompts: v.LastCheckpointPrompts, LastCheckpointAt: v.LastCheckpointAt,
		ReinforcedEpoch: v.ReinforcedEpoch, FirstInjectDone: v.FirstInjectDone, FreshObjective: v.FreshObjective, ResetSeq: v.ResetSeq,
		CompactionCheckpoint: v.CompactionCheckpoint,
	}, nil
}

func encodeTurn(t *Turn) ([]byte, error) {
	b, err := json.Marshal(turnValue{
		SourceID: t.SourceID, Role: t.Role, Text: t.Text, Tool: t.Tool, Files: t.Files, At: t.At, Unindexed: t.Unindexed,
	})
	if err != nil {
		return nil, fmt.Errorf("encode turn %d: %w", t.Seq, err)
	}
	return b, nil
}

// decodeTurn decodes a turn value; seq comes from its key.
func decodeTurn(seq uint64, b []byte) (Turn, error) {
	var v turnValue
	if err := json.Unmarshal(b, &v); err != nil {
		return Turn{}, fmt.Errorf("decode turn %d: %w", seq, err)
	}
	return Turn{Seq: seq, SourceID: v.SourceID, Role: v.Role, Text: v.Text, Tool: v.Tool, Files: v.Files, At: v.At, Unindexed: v.Unindexed}, nil
}

// encodeUint and decodeUint store plain numbers: the schema version and the Seq that a
// turn-source entry points at.
func encodeUint(n uint64) []byte {
	b, _ := json.Marshal(n) // a uint64 always encodes
	return b
}

func decodeUint(b []byte) (uint64, error) {
	var n uint64
	if err := json.Unmarshal(b, &n); err != nil {
		return 0, fmt.Errorf("decode number: %w", err)
	}
	return n, nil
}

// runValue is the stored form of a Run (key: runKey).
type runValue struct {
	Scope        string    `json:"scope"`
	ID           string    `json:"id"`
	Harness      string    `json:"harness"`
	RootID       string    `json:"root_id"`
	ParentID     string    `json:"parent_id"`
	ChildID      string    `json:"child_id,omitempty"`
	ChildScope   string    `json:"child_scope,omitempty"`
	Provisional  bool      `json:"provisional,omitempty"`
	Description  string    `json:"description,omitempty"`
	Prompt       string    `json:"prompt,omitempty"`
	Type         string    `json:"type,omitempty"`
	Depth        int       `json:"depth,omitempty"`
	Status       string    `json:"status"`
	EndReason    string    `json:"end_reason,omitempty"`
	Reason       string    `json:"reason,omitempty"`
	Result       string    `json:"result,omitempty"`
	ResultChars  int       `json:"result_chars,omitempty"`
	Swept        bool      `json:"swept,omitempty"`
	SweptAt      time.Time `json:"swept_at,omitzero"`
	Condensation int       `json:"condensation,omitempty"`
	Turns        int       `json:"turns,omitempty"`
	Tokens       int64     `json:"tokens,omitempty"`
	DurationMs   int64     `json:"duration_ms,omitempty"`
	Summary      string    `json:"summary,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	StartedAt    time.Time `json:"started_at,omitzero"`
	EndedAt      time.Time `json:"ended_at,omitzero"`
}

func encodeRun(r *Run) ([]byte, error) {
	b, err := json.Marshal(runValue(*r))
	if err != nil {
		return nil, fmt.Errorf("encode run %s/%s: %w", r.Scope, r.ID, err)
	}
	return b, nil
}

func decodeRun(b []byte) (Run, error) {
	var v runValue
	if err := json.Unmarshal(b, &v); err != nil {
		return Run{}, fmt.Errorf("decode run: %w", err)
	}
	return Run(v), nil
}

// checkpointValue is the stored form of a Checkpoint (key: checkpointKey).
type checkpointValue struct {
	Scope       string      `json:"scope"`
	ID          string      `json:"id"`
	SessionID   string      `json:"session_id"`
	Harness     string      `json:"harness,omitempty"`
	Project     string      `json:"project,omitempty"`
	ProjectNorm string      `json:"project_norm,omitempty"`
	Trigger     string      `json:"trigger"`
	Epoch       int         `json:"epoch,omitempty"`
	Prompts     int         `json:"prompts,omitempty"`
	TurnSeq     uint64      `json:"turn_seq,omitempty"`
	Digest      digestValue `json:"digest"`
	CreatedAt   time.Time   `json:"created_at"`
}

type digestValue struct {
	Objective     string           `json:"objective,omitempty"`
	Summary       string           `json:"summary,omitempty"`
	NextSteps     []string         `json:"next_steps,omitempty"`
	Prompts       []string         `json:"prompts,omitempty"`
	Decisions     []statementValue `json:"decisions,omitempty"`
	Constraints   []statementValue `json:"constraints,omitempty"`
	Files         []string         `json:"files,omitempty"`
	LastAssistant string           `json:"last_assistant,omitempty"`
	OpenRuns      []runDigestValue `json:"open_runs,omitempty"`
	FinishedRuns  []runDigestValue `json:"finished_runs,omitempty"`
}

type statementValue struct {
	Text     string `json:"text"`
	Inferred bool   `json:"inferred,omitempty"`
}

type runDigestValue struct {
	RunID       string `json:"run_id"`
	ChildID     string `json:"child_id,omitempty"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status,omitempty"`
	Result      string `json:"result,omitempty"`
}

func encodeCheckpoint(c *Checkpoint) ([]byte, error) {
	d := &c.Digest
	b, err := json.Marshal(checkpointValue{
		Scope: c.Scope, ID: c.ID, SessionID: c.SessionID, Harness: c.Harness,
		Project: c.Project, ProjectNorm: c.ProjectNorm, Trigger: c.Trigger,
		Epoch: c.Epoch, Prompts: c.Prompts, TurnSeq: c.TurnSeq,
		Digest: digestValue{
			Objective: d.Objective, Summary: d.Summary, NextSteps: nilIfEmpty(d.NextSteps), Prompts: nilIfEmpty(d.Prompts),
			Decisions:     convertAll(d.Decisions, func(s Statement) statementValue { return statementValue(s) }),
			Constraints:   convertAll(d.Constraints, func(s Statement) statementValue { return statementValue(s) }),
			Files:         nilIfEmpty(d.Files),
			LastAssistant: d.LastAssistant,
			OpenRuns:      convertAll(d.OpenRuns, func(r RunDigest) runDigestValue { return runDigestValue(r) }),
			FinishedRuns:  convertAll(d.FinishedRuns, func(r RunDigest) runDigestValue { return runDigestValue(r) }),
		},
		CreatedAt: c.CreatedAt,
	})
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint %s/%s: %w", c.Scope, c.ID, err)
	}
	return b, nil
}

func decodeCheckpoint(b []byte) (Checkpoint, error) {
	var v checkpointValue
	if err := json.Unmarshal(b, &v); err != nil {
		return Checkpoint{}, fmt.Errorf("decode checkpoint: %w", err)
	}
	d := &v.Digest
	return Checkpoint{
		Scope: v.Scope, ID: v.ID, SessionID: v.SessionID, Harness: v.Harness,
		Project: v.Project, ProjectNorm: v.ProjectNorm, Trigger: v.Trigger,
		Epoch: v.Epoch, Prompts: v.Prompts, TurnSeq: v.TurnSeq,
		Digest: Digest{
			Objective: d.Objective, Summary: d.Summary, NextSteps: nilIfEmpty(d.NextSteps), Prompts: nilIfEmpty(d.Prompts),
			Decisions:     convertAll(d.Decisions, func(s statementValue) Statement { return Statement(s) }),
			Constraints:   convertAll(d.Constraints, func(s statementValue) Statement { return Statement(s) }),
			Files:         nilIfEmpty(d.Files),
			LastAssistant: d.LastAssistant,
			OpenRuns:      convertAll(d.OpenRuns, func(r runDigestValue) RunDigest { return RunDigest(r) }),
			FinishedRuns:  convertAll(d.FinishedRuns, func(r runDigestValue) RunDigest { return RunDigest(r) }),
		},
		CreatedAt: v.CreatedAt,
	}, nil
}

// convertAll maps in through f; nil when in is empty, so empty and nil store and read alike.
func convertAll[T, U any](in []T, f func(T) U) []U {
	if len(in) == 0 {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
