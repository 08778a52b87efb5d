package adapters

import (
	"context"
	"fmt"
)

// Registration is everything heirloom can do with one harness; a nil field means the harness
// lacks it. Each harness package returns its own (claudecode.Registration(), …) and main lists
// them once in a Registry: the hook route /hooks/{name}, `heirloom hook NAME`, `heirloom
// install NAME`, the engine's transcript reading and the stream clients `heirloom serve` runs
// all follow from that list, so a new harness is one package plus one line.
type Registration struct {
	// Name names the harness, as in Event.Harness and the /hooks/{name} route: lowercase
	// letters, digits and dashes.
	Name string
	// Hooks decodes the hook calls the harness makes (command hooks through `heirloom hook
	// NAME`, http hooks to POST /hooks/{name}) and encodes heirloom's replies.
	Hooks Hooks
	// Transcripts parses the transcript files the harness writes, which heirloom reads as hooks
	// arrive.
	Transcripts Transcripts
	// SubagentMetas reads what the harness records about a sub-agent beside its transcript.
	SubagentMetas SubagentMetas
	// Plugin is heirloom's plugin inside the harness: it posts events to POST /hooks/{name} and
	// asks POST /api/inject before each model call. A harness has Hooks or Plugin, not both.
	Plugin Plugin
	// Installer writes the harness's configuration so it reaches heirloom.
	Installer Installer
	// Stream builds the client that follows one of the harness's endpoints (OpenCode's server
	// event stream, OpenClaw's Gateway) and hands its events to the engine: `heirloom serve`
	// builds one per endpoint its configuration names for the harness, opens them once it
	// serves and closes them first. A client that is also a Describer answers the engine's
	// questions about the harness's sessions.
	Stream NewStream
	// RunsByChild says the harness's events name a sub-agent run by the sub-agent's session, not
	// by the tool call that spawned it (OpenClaw: its task and spawn receipts carry the child's
	// key). A spawn its plugin asks heirloom about before the call runs is then recorded only
	// when refused (under the call's id, as no child exists); an allowed one is recorded when
	// the events report its child. False: runs are named by the spawning call (Claude Code's
	// tool_use_id, OpenCode's callID), and an allowed spawn is recorded at once, pending.
	RunsByChild bool
	// SpawnReceipts says the spawning tool returns the new sub-agent's id before the sub-agent
	// starts (Codex: spawn_agent answers {"agent_id"} at once, and its PostToolUse may come
	// before the sub-agent's SubagentStart): the spawn's result then records which sub-agent
	// serves it, and that sub-agent's start pairs with it exactly.
	SpawnReceipts bool
}

// Plugin is what the sidecar needs of a harness that reaches heirloom through a plugin of its
// own (OpenClaw): decoding what the plugin posts, and reading its session keys, which may name
// their memory scope and say whether they belong to a sub-agent.
type Plugin interface {
	// DecodeHook decodes one body the plugin posted. Bad input returns an error wrapping
	// ErrMalformed; a hook the adapter does not know decodes to KindUnknown.
	DecodeHook(body []byte) (Event, error)
	// ScopeOf returns the memory scope a session key names; "" means the configured scope.
	ScopeOf(session string) string
	// IsSubagent reports whether a session key, by itself, names a sub-agent.
	IsSubagent(session string) bool
}

// Describer asks a streaming harness about one session now (OpenClaw's Gateway client).
type Describer interface {
	// Describe returns the session's current state as events for a Sink. It fails fast when
	// not connected and honours ctx's deadline.
	Describe(ctx context.Context, session string) ([]Event, error)
}

// Registry is the harnesses heirloom knows, by name. The zero value and nil know none.
type Registry struct {
	list   []Registration
	byName map[string]int
}

// ValidName reports whether name has the shape of a harness name: 1 to 32 lowercase letters,
// digits and dashes, not starting with a dash. (A hand-written check, not a regexp: the hook
// process links this package, and a package-level regexp would be compiled at every hook.)
func ValidName(name string) bool {
	if name == "" || len(name) > 32 || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// NewRegistry returns a Registry of regs, in that order. A name that is malformed or given
// twice is an error.
func NewRegistry(regs ...Registration) (*Registry, error) {
	r := &Registry{byName: make(map[string]int, len(regs))}
	for _, reg := range regs {
		if !ValidName(reg.Name) {
			return nil, fmt.Errorf("harness name %q: want lowercase letters, digits and dashes", reg.Name)
		}
		if _, dup := r.byName[reg.Name]; dup {
			return nil, fmt.Errorf("harness %q registered twice", reg.Name)
		}
		if reg.Hooks != nil && reg.Plugin != nil {
			return nil, fmt.Errorf("harness %q: hooks and a plugin both post to /hooks/%s; give one", reg.Name, reg.Name)
		}
		r.byName[reg.Name] = len(r.list)
		r.list = append(r.list, reg)
	}
	return r, nil
}

// Get returns the registration of harness name; ok is false when none is registered.
func (r *Registry) Get(name string) (reg Registration, ok bool) {
	if r == nil {
		return Registration{}, false
	}
	i, ok := r.byName[name]
	if !ok {
		return Registration{}, false
	}
	return r.list[i], true
}

// All returns every registration, in the order given to NewRegistry.
func (r *Registry) All() []Registration {
	if r == nil {
		return nil
	}
	return append([]Registration(nil), r.list...)
}

// KnownHarnesses are the harness names sessions and runs may carry: the harnesses heirloom has
// adapters for, and Codex CLI, next. A filter on any other name is a mistake, not an empty
// result.
var KnownHarnesses = []string{"claude-code", "opencode", "openclaw", "codex"}
