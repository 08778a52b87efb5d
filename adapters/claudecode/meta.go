package claudecode

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
)

// SubagentMetaFile is the agent-<id>.meta.json file Claude Code writes beside a sub-agent's
// transcript during the run (it does not exist yet when SubagentStart fires).
type SubagentMetaFile struct {
	AgentType   string `json:"agentType"`
	Description string `json:"description"`
	ToolUseID   string `json:"toolUseId"` // the spawning Agent/Task tool call
	SpawnDepth  int    `json:"spawnDepth"`
}

// SubagentMetaPath returns the metadata file beside the sub-agent transcript at
// agentTranscriptPath: ".../agent-<id>.jsonl" gives ".../agent-<id>.meta.json". It returns ""
// when agentTranscriptPath does not end in ".jsonl".
func (Adapter) SubagentMetaPath(agentTranscriptPath string) string {
	base, ok := strings.CutSuffix(agentTranscriptPath, ".jsonl")
	if !ok {
		return ""
	}
	return base + ".meta.json"
}

// ParseSubagentMeta decodes an agent-<id>.meta.json file. Anything but a JSON object with
// fields of the expected types returns an error wrapping adapters.ErrMalformed; a file read
// while Claude Code was still writing it fails that way too and may be read again later.
// Missing fields are zero.
func (Adapter) ParseSubagentMeta(b []byte) (adapters.SubagentMeta, error) {
	var m SubagentMetaFile
	if !adapters.IsObject(b) {
		return adapters.SubagentMeta{}, adapters.Malformed("sub-agent meta: not a JSON object")
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return adapters.SubagentMeta{}, adapters.Malformed("sub-agent meta: %v", err)
	}
	return adapters.SubagentMeta{
		AgentType:   m.AgentType,
		Description: m.Description,
		ToolUseID:   m.ToolUseID,
		SpawnDepth:  m.SpawnDepth,
	}, nil
}

// SubagentTranscriptPath returns where Claude Code keeps the transcript of sub-agent agentID
// of the session whose transcript is transcriptPath:
// "<dir>/<session>.jsonl" gives "<dir>/<session>/subagents/agent-<agentID>.jsonl", at every
// spawn depth. Its SubagentMetaPath is the sub-agent's metadata. It returns "" when
// transcriptPath does not end in ".jsonl" or agentID is empty or holds a path separator.
func SubagentTranscriptPath(transcriptPath, agentID string) string {
	return Adapter{}.SubagentTranscriptPath(transcriptPath, agentID)
}

// SubagentTranscriptPath implements adapters.SubagentMetas; see the package-level function.
func (Adapter) SubagentTranscriptPath(transcriptPath, agentID string) string {
	session, ok := strings.CutSuffix(filepath.Base(transcriptPath), ".jsonl")
	if !ok || session == "" || session == "." || session == ".." || !strings.HasSuffix(transcriptPath, ".jsonl") ||
		agentID == "" || strings.ContainsAny(agentID, `/\`+"\x00") {
		return ""
	}
	return filepath.Join(filepath.Dir(transcriptPath), session, "subagents", "agent-"+agentID+".jsonl")
}
