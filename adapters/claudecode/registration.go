package claudecode

import "github.com/heirloom-dev/heirloom/adapters"

// Registration is Claude Code's entry in heirloom's registry: its hook calls (command hooks
// through `heirloom hook claude-code`, http hooks to POST /hooks/claude-code), its transcripts
// and its sub-agents' metadata files.
func Registration() adapters.Registration {
	return adapters.Registration{
		Name:          Harness,
		Hooks:         Adapter{},
		Transcripts:   Adapter{},
		SubagentMetas: Adapter{},
		Installer:     Installer{},
	}
}
