// Package claudecode decodes Claude Code's hook calls and transcripts into the vocabulary of
// package adapters, and encodes the replies Claude Code expects.
//
// Everything here is pure: bytes in, values out, no I/O. Hook calls arrive as one JSON object
// (a command hook's stdin or an http hook's POST body) named by hook_event_name; transcripts
// are JSONL files under the project directory, one per session, with each sub-agent's own
// transcript and metadata in <session id>/subagents/ beside the session's file.
package claudecode

import "github.com/heirloom-dev/heirloom/adapters"

// Harness is the name of the harness, as in adapters.Event.Harness.
const Harness = "claude-code"

// Adapter decodes Claude Code hook calls, transcripts and sub-agent metadata. The zero value is
// ready to use and safe for concurrent use; it holds no state.
type Adapter struct{}

var (
	_ adapters.Hooks         = Adapter{}
	_ adapters.Transcripts   = Adapter{}
	_ adapters.SubagentMetas = Adapter{}
)

// Harness returns "claude-code".
func (Adapter) Harness() string { return Harness }
