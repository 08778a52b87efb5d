// Package codex decodes Codex CLI's hook calls and rollout files into the vocabulary of package
// adapters, encodes the replies Codex expects, and installs heirloom's hooks, trust entries and
// MCP server into Codex's config.toml.
//
// Decoding is pure: bytes in, values out, no I/O. Hook calls arrive as one JSON object on a
// command hook's stdin, named by hook_event_name. A sub-agent's hooks carry its agent_id while
// session_id stays the root session's; the sub-agent's rollout file
// ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl) starts with a session_meta
// record naming its parent thread and depth.
package codex

// Harness is the name of the harness, as in adapters.Event.Harness.
const Harness = "codex"

// Installer is `heirloom install codex` and `heirloom uninstall codex`: heirloom's hooks, their
// trust entries and its MCP server in Codex's config.toml. The zero value is ready to use.
type Installer struct{}
