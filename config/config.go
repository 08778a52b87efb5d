// Package config owns heirloom's one typed configuration tree.
//
// Values come from four layers, each overriding the one before it: built-in
// defaults ([Default]), a YAML file, HEIRLOOM_* environment variables and
// command-line flags. [Load] merges them, rejects unknown keys and values of
// the wrong type (naming the key and the layer), then runs [Config.Validate].
// Only main imports this package; it copies values into the other packages.
package config

import (
	"path/filepath"
	"time"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/proxy"
)

// defaultTranscriptRoot is where Claude Code keeps its transcripts, before
// "~/" is expanded.
const defaultTranscriptRoot = "~/.claude/projects"

// defaultCodexRoot is where Codex CLI keeps its rollout files ($CODEX_HOME/sessions, CODEX_HOME
// being ~/.codex unless set), before "~/" is expanded.
const defaultCodexRoot = "~/.codex/sessions"

// Config is the whole configuration. Keys are the koanf tags joined with ".",
// e.g. "log.level". A zero Config is not valid: start from [Default] or [Load].
type Config struct {
	// Listen is the host:port of the HTTP API and hook endpoints. A host that
	// is not loopback requires Token. Port 0 picks a free port. Default
	// "127.0.0.1:7433"; empty is invalid.
	Listen string `koanf:"listen"`

	// DataDir is the directory holding the store. "~/" is expanded at load.
	// Empty is invalid; Default uses $XDG_DATA_HOME/heirloom, else
	// <home>/.local/share/heirloom.
	DataDir string `koanf:"data_dir"`

	// Token is the bearer token the API requires. Empty means the API is
	// open to any local caller, which is allowed only on a loopback Listen.
	// Default empty; set it with HEIRLOOM_TOKEN rather than in a file.
	Token string `koanf:"token"`

	// Scope is the memory scope (the configured agent) every record is stored
	// under. It must match ^[a-z0-9][a-z0-9_-]{0,63}$; empty is invalid.
	// Default "default".
	Scope string `koanf:"scope"`

	// Log configures the logger.
	Log Log `koanf:"log"`

	// Server configures the HTTP server.
	Server Server `koanf:"server"`

	// Inherit configures the context a sub-agent inherits from its parent.
	Inherit Inherit `koanf:"inherit"`

	// Spawn configures what heirloom allows when a session spawns a sub-agent.
	Spawn Spawn `koanf:"spawn"`

	// Runs configures the lifecycle of sub-agent runs: the sweeps, result retention and
	// condensation.
	Runs Runs `koanf:"runs"`

	// Condense configures level-2 condensation: an OpenAI-compatible endpoint that summarises
	// long results.
	Condense Condense `koanf:"condense"`

	// Checkpoints configures when session checkpoints are taken and how long they are kept.
	Checkpoints Checkpoints `koanf:"checkpoints"`

	// Recovery configures the checkpoint a starting session recovers.
	Recovery Recovery `koanf:"recovery"`

	// Adapters configures each harness adapter.
	Adapters Adapters `koanf:"adapters"`
}

// Log configures the logger.
type Log struct {
	// Level is the minimum level logged: trace, debug, info, warn or error.
	// Default "info"; empty is invalid.
	Level string `koanf:"level"`

	// Format is auto, text or json; auto picks text on a terminal and json
	// otherwise. Default "auto"; empty is invalid.
	Format string `koanf:"format"`
}

// Server configures the HTTP server.
type Server struct {
	// MaxBodyBytes caps the size of a request body; larger requests are
	// refused. Default 8 MiB; it must be > 0.
	MaxBodyBytes int64 `koanf:"max_body_bytes"`

	// HookTimeout is how long a hook handler may work before it replies {}
	// so the harness never waits on heirloom. Default 1s; it must be > 0.
	HookTimeout time.Duration `koanf:"hook_timeout"`

	// ShutdownTimeout is how long shutdown waits for requests in flight
	// before closing their connections. Default 5s; it must be > 0.
	ShutdownTimeout time.Duration `koanf:"shutdown_timeout"`
}

// Inherit configures the "Inherited from Parent Session" block.
type Inherit struct {
	// Enabled turns heirloom's blocks on. Default true; false is passive
	// mode: sub-agents inherit nothing and no reinforcement or recovered
	// block is added, while sessions, transcripts, runs and checkpoints are
	// still recorded.
	Enabled bool `koanf:"enabled"`

	// TailChars is how many characters of the parent's transcript tail the
	// block carries at most. Default 9500, the whole reply: the tail takes whatever the
	// block's other sections leave; zero means no tail; negative is invalid.
	TailChars int `koanf:"tail_chars"`

	// RelevantPassages is how many passages of the parent's family most relevant to a
	// sub-agent's task its block carries, under "Relevant to your task". Default 6; zero turns
	// the section off; negative is invalid.
	RelevantPassages int `koanf:"relevant_passages"`

	// CrossScope lists the memory scopes whose sessions hand their context to sub-agents
	// spawned in another scope (an OpenClaw parent spawning under another agent id). "*" means
	// every scope; an empty list keeps every scope's context in its scope. Default ["*"]: the
	// harness already decided the spawn may cross (OpenClaw's subagents.allowAgents).
	CrossScope []string `koanf:"cross_scope"`
}

// Spawn configures what heirloom allows when a session spawns a sub-agent. A top-level
// session is at depth 0, its sub-agents at depth 1.
type Spawn struct {
	// MaxDepth is the deepest a sub-agent may be: a spawn that would create a sub-agent deeper
	// than this is refused. Default 3; 0 means no limit; negative is invalid.
	MaxDepth int `koanf:"max_depth"`

	// MaxChildren is how many active sub-agents (pending and running together) one session may
	// have: a spawn past it is refused. Default 10; 0 means no limit; negative is invalid.
	MaxChildren int `koanf:"max_children"`

	// Mode is enforce (a spawn past a limit is refused: the model reads the reason as the
	// tool's error) or observe (it is recorded and reported, never refused). Default enforce.
	Mode string `koanf:"mode"`
}

// Runs configures the lifecycle of sub-agent runs after their spawn. heirloom only ends its own
// records: it never stops a harness's agent.
type Runs struct {
	// WatchdogTimeout: a run running longer than this ends as watchdog_timeout. Default 30m;
	// it must be > 0.
	WatchdogTimeout time.Duration `koanf:"watchdog_timeout"`

	// GhostGrace: a pending run whose sub-agent has not started this long after the spawn ends
	// as ghost_sweep, as does a running run whose parent session ended this long ago (at most
	// a minute). Default 10m; it must be > 0.
	GhostGrace time.Duration `koanf:"ghost_grace"`

	// ResultRetention is how long a finished run keeps its full result before it is swept to
	// its condensed form. Default 24h; it must be > 0.
	ResultRetention time.Duration `koanf:"result_retention"`

	// MaxResultTokens is the most estimated tokens (4 characters each) a result may have to be
	// surfaced whole; a longer one is condensed. Default 4000; it must be > 0.
	MaxResultTokens int `koanf:"max_result_tokens"`
}

// Condense configures level-2 condensation. With URL and Model set, a result longer than
// runs.max_result_tokens is summarised once, in the background, by that model; without them,
// or when the call fails, it is condensed to its head and tail (level 3).
type Condense struct {
	// URL is the base URL of an OpenAI-compatible API, e.g. "http://127.0.0.1:11434/v1"
	// (heirloom POSTs URL/chat/completions), or the chat-completions URL itself. Default
	// empty: no level 2.
	URL string `koanf:"url"`

	// Model is the model to ask. Required with URL.
	Model string `koanf:"model"`

	// Token, when set, is sent as "Authorization: Bearer <token>". Default empty; set it with
	// HEIRLOOM_CONDENSE__TOKEN rather than in a file.
	Token string `koanf:"token"`

	// Timeout bounds one summary; past it the result is condensed at level 3. Default 30s; it
	// must be > 0.
	Timeout time.Duration `koanf:"timeout"`
}

// Checkpoints configures session checkpoints.
type Checkpoints struct {
	// EveryPrompts is how many prompts a session has between periodic checkpoints. Default 10;
	// it must be > 0.
	EveryPrompts int `koanf:"every_prompts"`

	// Every is how long a session may be active between periodic checkpoints. Default 15m; it
	// must be > 0.
	Every time.Duration `koanf:"every"`

	// Retention is how long checkpoints are kept, beyond the newest Keep of each session.
	// Default 168h (7 days); it must be > 0.
	Retention time.Duration `koanf:"retention"`

	// Keep is how many of each session's newest checkpoints are kept whatever their age.
	// Default 3; negative is invalid.
	Keep int `koanf:"keep"`
}

// Recovery configures the "Recovered Session Checkpoint" block.
type Recovery struct {
	// Window is how old another session's checkpoint of the same project may be for a new
	// session to recover it. Default 4h; it must be > 0.
	Window time.Duration `koanf:"window"`
}

// Adapters configures each harness adapter.
type Adapters struct {
	// ClaudeCode configures the Claude Code adapter.
	ClaudeCode ClaudeCode `koanf:"claude_code"`
	// OpenCode configures the OpenCode adapter.
	OpenCode OpenCode `koanf:"opencode"`
	// OpenClaw configures the OpenClaw adapter.
	OpenClaw OpenClaw `koanf:"openclaw"`
	// Codex configures the Codex CLI adapter.
	Codex Codex `koanf:"codex"`
}

// Codex configures the Codex CLI adapter. Its hooks share the Claude Code
// adapter's read limits (hook_read_bytes, max_read_bytes) and context cap.
type Codex struct {
	// TranscriptRoots are the directories Codex rollout files may be read
	// from; a transcript_path outside them is ignored. "~/" is expanded at
	// load and every root must then be absolute. Default
	// ["~/.codex/sessions"]; empty reads none.
	TranscriptRoots []string `koanf:"transcript_roots"`
}

// OpenClaw configures the OpenClaw adapter.
type OpenClaw struct {
	// URL is the OpenClaw Gateway whose session events heirloom follows, e.g.
	// "ws://127.0.0.1:18789". Default empty: no Gateway is followed (the plugin still reaches
	// heirloom, but a sub-agent's parent is then known only from the plugin's subagent_spawned).
	URL string `koanf:"url"`
	// Token is the Gateway's auth token. Empty: OPENCLAW_GATEWAY_TOKEN, if set.
	Token string `koanf:"token"`
	// DescribeWait bounds how long a plugin's /api/inject waits for the Gateway to describe a
	// sub-agent whose parent heirloom does not know yet. Default 300ms; 0 never asks.
	DescribeWait time.Duration `koanf:"describe_wait"`
}

// OpenCode configures the OpenCode adapter.
type OpenCode struct {
	// Servers are the OpenCode servers (`opencode serve`, or the TUI's server) whose event
	// streams heirloom follows. Default none. In the environment, a comma-separated list of URLs.
	Servers []OpenCodeServer `koanf:"servers"`
}

// OpenCodeServer is one OpenCode server to follow.
type OpenCodeServer struct {
	// URL is the server's base URL, e.g. "http://127.0.0.1:4096". Required.
	URL string `koanf:"url"`
	// Password is the server's basic-auth password (OPENCODE_SERVER_PASSWORD). Empty: the
	// password heirloom itself finds in OPENCODE_SERVER_PASSWORD, if any.
	Password string `koanf:"password"`
	// Directory selects one project instance of the server; empty means the server's own
	// working directory.
	Directory string `koanf:"directory"`
}

// ClaudeCode configures the Claude Code adapter.
type ClaudeCode struct {
	// MaxContextChars caps the additionalContext heirloom returns to one
	// hook. Default 9500. It must be within 500..10000: Claude Code replaces
	// an additionalContext over 10,000 characters.
	MaxContextChars int `koanf:"max_context_chars"`

	// TranscriptRoots are the directories transcripts may be read from; a
	// transcript_path outside them is ignored. "~/" is expanded at load and
	// every root must then be absolute. Default ["~/.claude/projects"];
	// empty is invalid.
	TranscriptRoots []string `koanf:"transcript_roots"`

	// HookReadBytes is how much of a transcript one hook reads while Claude
	// Code waits. A transcript with more unread (one heirloom never saw) is
	// read in the background instead, this much at a time. Default 1 MiB, or
	// max_read_bytes when only that is set lower; it must be > 0.
	HookReadBytes int64 `koanf:"hook_read_bytes"`

	// MaxReadBytes is the longest transcript record heirloom parses: a
	// longer one is skipped. Default 4 MiB; it must be at least
	// hook_read_bytes.
	MaxReadBytes int64 `koanf:"max_read_bytes"`

	// Upstream is an existing http hook target heirloom sits in front of
	// (proxy mode): each POST /hooks/claude-code is forwarded to it and its
	// reply comes back with heirloom's context first. Default: none.
	Upstream Upstream `koanf:"upstream"`
}

// Upstream is an HTTP hook target heirloom forwards hook calls to.
type Upstream struct {
	// URL is where each hook call is POSTed, e.g.
	// "http://127.0.0.1:8080/hooks". Empty means no upstream; otherwise an
	// http(s) URL with a host.
	URL string `koanf:"url"`

	// Timeout bounds one forwarded call; past it heirloom replies with its
	// own context alone. Default 5s; it must be > 0.
	Timeout time.Duration `koanf:"timeout"`

	// Headers are extra request headers, name to value. Default none. Names
	// cannot contain "."; in the environment, a comma-separated list of
	// Name=value pairs.
	Headers map[string]string `koanf:"headers"`

	// Token, when set, is sent as "Authorization: Bearer <token>". Default
	// empty.
	Token string `koanf:"token"`
}

// Default returns a complete, working configuration for a user whose home
// directory is home. Its values are the defaults of the packages they
// configure (engine.DefaultConfig, proxy's Default* constants): each default
// is defined once, there. DataDir is xdgDataHome/heirloom when xdgDataHome is an
// absolute path (the XDG spec ignores relative ones), else
// home/.local/share/heirloom, else empty (which Validate rejects). With an
// empty home, the transcript root keeps its unexpanded "~/" form, which
// Validate also rejects.
func Default(home, xdgDataHome string) Config {
	var dataDir string
	switch {
	case filepath.IsAbs(xdgDataHome):
		dataDir = filepath.Join(xdgDataHome, "heirloom")
	case home != "":
		dataDir = filepath.Join(home, ".local", "share", "heirloom")
	}
	eng := engine.DefaultConfig()
	return Config{
		Listen:  proxy.DefaultAddr,
		DataDir: dataDir,
		Scope:   "default",
		Log:     Log{Level: "info", Format: "auto"},
		Server: Server{
			MaxBodyBytes:    proxy.DefaultMaxBodyBytes,
			HookTimeout:     proxy.DefaultHookTimeout,
			ShutdownTimeout: 5 * time.Second,
		},
		Inherit: Inherit{Enabled: !eng.Passive, TailChars: eng.TailChars, RelevantPassages: eng.RelevantPassages, CrossScope: eng.CrossScope},
		Spawn:   Spawn{MaxDepth: eng.Spawn.MaxDepth, MaxChildren: eng.Spawn.MaxChildren, Mode: eng.Spawn.Mode},
		Checkpoints: Checkpoints{
			EveryPrompts: eng.Checkpoints.EveryPrompts,
			Every:        eng.Checkpoints.Every,
			Retention:    eng.Checkpoints.Retention,
			Keep:         eng.Checkpoints.Keep,
		},
		Recovery: Recovery{Window: eng.Checkpoints.RecoveryWindow},
		Runs: Runs{
			WatchdogTimeout: eng.Runs.WatchdogTimeout,
			GhostGrace:      eng.Runs.GhostGrace,
			ResultRetention: eng.Runs.ResultRetention,
			MaxResultTokens: eng.Runs.MaxResultTokens,
		},
		Condense: Condense{Timeout: eng.Runs.CondenseTimeout},
		Adapters: Adapters{ClaudeCode: ClaudeCode{
			MaxContextChars: eng.MaxContextChars,
			TranscriptRoots: []string{expandHome(defaultTranscriptRoot, home)},
			HookReadBytes:   eng.HookReadBytes,
			MaxReadBytes:    eng.MaxReadBytes,
			Upstream:        Upstream{Timeout: proxy.DefaultUpstreamTimeout, Headers: map[string]string{}},
		}, OpenCode: OpenCode{Servers: []OpenCodeServer{}},
			OpenClaw: OpenClaw{DescribeWait: eng.DescribeWait},
			Codex:    Codex{TranscriptRoots: []string{expandHome(defaultCodexRoot, home)}}},
	}
}

// expandHome replaces a leading "~/" (or a lone "~") in path with home. It
// returns path unchanged when home is empty or path does not start with "~".
func expandHome(path, home string) string {
	if home == "" {
		return path
	}
	if path == "~" {
		return home
	}
	if rest, ok := cutHome(path); ok {
		return filepath.Join(home, rest)
	}
	return path
}

// cutHome reports whether path starts with "~/" and returns what follows.
func cutHome(path string) (string, bool) {
	if len(path) >= 2 && path[0] == '~' && path[1] == '/' {
		return path[2:], true
	}
	return "", false
}
