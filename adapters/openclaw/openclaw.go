// Package openclaw speaks to OpenClaw: it parses its session keys, decodes the frames of its
// Gateway (a WebSocket on 127.0.0.1:18789) and what heirloom's OpenClaw plugin posts, into the
// vocabulary of package adapters, follows a Gateway with a reconnecting client, and installs
// the plugin.
//
// OpenClaw names a session by key, agent:<agentId>:<rest>. The agentId is the memory scope of
// the session (Event.Scope). Sub-agents are agent:<id>:subagent:<uuid> at every depth: the key
// does not say who the parent is, the Gateway does (spawnedBy on the child's session entry), and
// so does the plugin's subagent_spawned hook (requesterSessionKey). For OpenClaw the run id of a
// spawn is always the child's session key, so every source of the same spawn lands in one run.
//
// Decoding is pure: bytes in, events out, no I/O and no state, so a frame decodes the same
// whether it arrives live or as part of the resync the client makes after every (re)connect.
package openclaw

import "github.com/heirloom-dev/heirloom/adapters"

// Adapter is what the sidecar's HTTP side needs of OpenClaw without a Gateway connection: it
// decodes what heirloom's plugin posts and reads session keys. The zero value is ready to use.
type Adapter struct{}

// Harness returns "openclaw".
func (Adapter) Harness() string { return Harness }

// DecodeHook decodes one body the plugin posted to /hooks/openclaw; see DecodeHook.
func (Adapter) DecodeHook(body []byte) (adapters.Event, error) { return DecodeHook(body) }

// ScopeOf returns the agentId of a session key, the memory scope of its session; "" when the
// key does not parse.
func (Adapter) ScopeOf(key string) string {
	k, err := ParseSessionKey(key)
	if err != nil {
		return ""
	}
	return k.AgentID
}

// IsSubagent reports whether a session key names a sub-agent (agent:<id>:subagent:<uuid>).
func (Adapter) IsSubagent(key string) bool {
	k, err := ParseSessionKey(key)
	return err == nil && k.IsSubagent()
}
