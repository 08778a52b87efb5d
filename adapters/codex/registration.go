package codex

import "github.com/heirloom-dev/heirloom/adapters"

// Registration is Codex CLI's entry in heirloom's registry: its hook calls (command hooks
// through `heirloom hook codex`, or POST /hooks/codex), its rollout files, the session_meta at
// the head of a sub-agent's rollout, and its installer.
func Registration() adapters.Registration {
	return adapters.Registration{
		Name:          Harness,
		Hooks:         Adapter{},
		Transcripts:   Adapter{},
		SubagentMetas: Adapter{},
		SpawnReceipts: true,
		Installer:     Installer{},
	}
}
