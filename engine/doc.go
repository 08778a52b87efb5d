// Package engine is where heirloom decides: harness traffic, already normalised by an adapter
// into adapters.Events, becomes durable state in kv, and the context blocks inject renders are
// gathered from that state. It knows nothing of HTTP; proxy carries requests to it and its
// answers back.
//
// # What it owns
//
//   - Sessions and lineage (hook.go, lineage.go): a harness that calls hooks (Claude Code) names
//     a sub-agent's top-level session but not which spawn it serves, so a starting sub-agent is
//     paired with a pending spawn by type and order, provisionally when that is a guess, and
//     confirmed or corrected when the harness tells (metadata file, the spawn's result). A
//     session is recorded when the harness starts it (SessionStart, a prompt); a later event
//     naming one heirloom never saw records it only when its transcript shows turns (heirloom
//     started while it ran), so a stray call stores nothing (see admitSession).
//   - Stream consumption (stream.go): Engine is the adapters.Sink of the streaming harnesses
//     (OpenCode, OpenClaw), whose events name parents and children outright.
//   - Transcript ingest (ingest.go): the new part of a transcript is read at each hook, at most
//     Config.HookReadBytes while the harness waits; more than that (a transcript heirloom never
//     saw) is read in the background, parsed outside the session's lock and stored under it, and
//     a reply meanwhile takes the parent's recent turns from the file's end.
//   - What the blocks need (inherit.go, inject.go): a parent is read once, from one snapshot
//     (kv.View: the session, its newest turns, its latest checkpoint), for its child's
//     inherited block; plugins ask through Inject.
//   - Checkpoints, reinforcement and recovery (checkpoint.go): digests are built when a
//     checkpoint is written (periodically, when a session spawns, before a compaction, when
//     asked), never per reply; a reply renders the stored one.
//
// # Concurrency
//
// Work for one session runs under that session's lock (the hooks of a Claude Code session's
// sub-agents take their top-level session's lock, so parallel sub-agents' hooks cannot race
// each other's pairing). A change that must hold together is one kv transaction. Work a hook's
// deadline cut short carries on under the engine's own context; so do the background
// checkpoints, transcript catch-ups and the pruner. Close stops new work, cancels that context
// and waits for what runs.
package engine
