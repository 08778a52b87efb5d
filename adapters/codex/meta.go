package codex

import (
	"bytes"
	"encoding/json"

	"github.com/heirloom-dev/heirloom/adapters"
)

// SessionMeta is the session_meta record that opens every rollout file. A sub-agent's names
// its parent thread and depth: the exact parent, at every depth.
type SessionMeta struct {
	ID             string `json:"id"`         // the thread's id (a sub-agent's agent_id)
	SessionID      string `json:"session_id"` // the root thread's id
	ParentThreadID string `json:"parent_thread_id"`
	Cwd            string `json:"cwd"`
	Source         struct {
		Subagent struct {
			ThreadSpawn struct {
				ParentThreadID string `json:"parent_thread_id"`
				Depth          int    `json:"depth"`
				AgentNickname  string `json:"agent_nickname"`
				AgentRole      string `json:"agent_role"`
			} `json:"thread_spawn"`
		} `json:"subagent"`
	} `json:"source"`
}

// SubagentMetaPath returns where a sub-agent's metadata lives: the session_meta record at the
// head of its own rollout, so the rollout itself. It exists when SubagentStart fires.
func (Adapter) SubagentMetaPath(agentTranscriptPath string) string { return agentTranscriptPath }

// SubagentTranscriptPath returns "": a sub-agent's rollout is named by its start time, which
// only Codex knows; SubagentStart carries the path itself.
func (Adapter) SubagentTranscriptPath(string, string) string { return "" }

// ParseSubagentMeta decodes the session_meta record on the first line of b (the head of a
// rollout; the rest of b is ignored, and a first line cut short is malformed). ParentID is the
// thread that spawned the sub-agent, SpawnDepth its depth (1 under the root), AgentType its
// role (DefaultAgentType when none), Description its nickname. A rollout of a root thread
// yields no ParentID. Anything but a session_meta record returns an error wrapping
// adapters.ErrMalformed.
func (Adapter) ParseSubagentMeta(b []byte) (adapters.SubagentMeta, error) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	var r rolloutRecord
	if !adapters.IsObject(b) {
		return adapters.SubagentMeta{}, adapters.Malformed("rollout: first line is not a JSON object")
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return adapters.SubagentMeta{}, adapters.Malformed("rollout: first line: %v", err)
	}
	if r.Type != "session_meta" {
		return adapters.SubagentMeta{}, adapters.Malformed("rollout: first record is %q, not session_meta", r.Type)
	}
	var m SessionMeta
	adapters.UnmarshalObject(r.Payload, &m)
	spawn := m.Source.Subagent.ThreadSpawn
	parent := spawn.ParentThreadID
	if parent == "" {
		parent = m.ParentThreadID
	}
	for field, id := range map[string]string{"parent_thread_id": parent, "id": m.ID} {
		if err := adapters.CheckID("rollout: "+field, id); err != nil {
			return adapters.SubagentMeta{}, err
		}
	}
	return adapters.SubagentMeta{
		AgentType:   agentType(spawn.AgentRole),
		Description: spawn.AgentNickname,
		SpawnDepth:  spawn.Depth,
		ParentID:    parent,
		ThreadID:    m.ID,
	}, nil
}
