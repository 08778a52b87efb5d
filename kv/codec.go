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
}

func encodeSession(s *Session) ([]byte, error) {
	v := sessionValue{
		Scope: s.Scope, ID: s.ID, Harness: s.Harness, NativeID: s.NativeID,
		ParentID: s.ParentID, ParentInferred: s.ParentInferred, Depth: s.Depth,
		Project: s.Project, ProjectNorm: s.ProjectNorm, Title: s.Title, Objective: s.Objective,
		AgentType: s.AgentType, Status: s.Status, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		Transcript: transcriptValue(s.Transcript),
		TurnCount:  s.TurnCount,
		Files:      s.Files,

		Compactions: s.Compactions,
		CompactedAt: s.CompactedAt,
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
		ParentID: v.ParentID, ParentInferred: v.ParentInferred, Depth: v.Depth,
		Project: v.Project, ProjectNorm: v.ProjectNorm, Title: v.Title, Objective: v.Objective,
		AgentType: v.AgentType, Status: v.Status, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
		Transcript: TranscriptPos(v.Transcript),
		TurnCount:  v.TurnCount,
		Files:      v.Files,

		Compactions: v.Compactions,
		CompactedAt: v.CompactedAt,
	}, nil
}

func encodeTurn(t *Turn) ([]byte, error) {
	b, err := json.Marshal(turnValue{
		SourceID: t.SourceID, Role: t.Role, Text: t.Text, Tool: t.Tool, Files: t.Files, At: t.At,
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
	return Turn{Seq: seq, SourceID: v.SourceID, Role: v.Role, Text: v.Text, Tool: v.Tool, Files: v.Files, At: v.At}, nil
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
	Scope       string    `json:"scope"`
	ID          string    `json:"id"`
	Harness     string    `json:"harness"`
	RootID      string    `json:"root_id"`
	ParentID    string    `json:"parent_id"`
	ChildID     string    `json:"child_id,omitempty"`
	Provisional bool      `json:"provisional,omitempty"`
	Description string    `json:"description,omitempty"`
	Prompt      string    `json:"prompt,omitempty"`
	Type        string    `json:"type,omitempty"`
	Status      string    `json:"status"`
	Result      string    `json:"result,omitempty"`
	Tokens      int64     `json:"tokens,omitempty"`
	DurationMs  int64     `json:"duration_ms,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	StartedAt   time.Time `json:"started_at,omitzero"`
	EndedAt     time.Time `json:"ended_at,omitzero"`
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
