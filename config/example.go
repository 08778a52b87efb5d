package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
)

// docs explains every key and section in one line, for Example.
var docs = map[string]string{
	"listen":   "Address of the HTTP API and hook endpoints, host:port. A non-loopback host requires token.",
	"data_dir": "Directory of the store. Default: $XDG_DATA_HOME/heirloom, else ~/.local/share/heirloom.",
	"token":    "Bearer token the API requires; empty leaves it open to local callers. Prefer HEIRLOOM_TOKEN.",
	"scope":    "Memory scope (the configured agent): 1-64 of a-z, 0-9, '_' and '-'.",

	"log":        "Logging.",
	"log.level":  "Minimum level: trace, debug, info, warn or error.",
	"log.format": "auto (text on a terminal, else json), text or json.",

	"server":                  "HTTP server.",
	"server.max_body_bytes":   "Largest request body accepted, in bytes.",
	"server.hook_timeout":     "How long a hook handler may work before it replies {}.",
	"server.shutdown_timeout": "How long shutdown waits for requests in flight.",

	"inherit":                   "Context a sub-agent inherits from its parent session.",
	"inherit.enabled":           "Add heirloom's blocks (inherited, reinforcement, recovered); false: passive, record only.",
	"inherit.tail_chars":        "Most characters of the parent's transcript tail to include (it takes what the block's other sections leave); 0 for none.",
	"inherit.relevant_passages": "Passages of the parent's sessions most relevant to a sub-agent's task to include; 0 for none.",
	"inherit.cross_scope":       "Scopes whose sessions hand context to sub-agents spawned in another scope (OpenClaw agentId); \"*\" for all, [] for none.",

	"adapters":                               "Harness adapters.",
	"adapters.claude_code":                   "Claude Code.",
	"adapters.claude_code.max_context_chars": fmt.Sprintf("Cap on the context returned to one hook, %d..%d.", adapters.MaxContextCharsMin, adapters.MaxContextCharsMax),
	"adapters.claude_code.transcript_roots":  "Directories transcripts may be read from (absolute, or starting with ~/).",
	"adapters.claude_code.hook_read_bytes":   "Transcript bytes one hook reads while Claude Code waits; more is read in the background.",
	"adapters.claude_code.max_read_bytes":    "The longest transcript record parsed; a longer one is skipped.",
	"adapters.claude_code.upstream":          "Existing http hook target to forward hook calls to (proxy mode); heirloom's context comes first.",
	"adapters.claude_code.upstream.url":      "Where hook calls are POSTed, e.g. http://127.0.0.1:8080/hooks; empty for none.",
	"adapters.claude_code.upstream.timeout":  "How long a forwarded call may take before heirloom replies with its context alone.",
	"adapters.claude_code.upstream.headers":  "Extra request headers, name: value (in the environment: Name=value,Name2=value2).",
	"adapters.claude_code.upstream.token":    "Bearer token sent to the upstream; empty sends none.",
	"adapters.codex":                         "Codex CLI (its hooks share claude_code's read limits and context cap).",
	"adapters.codex.transcript_roots":        "Directories Codex rollout files may be read from (absolute, or starting with ~/).",
	"adapters.opencode":                      "OpenCode.",
	"adapters.opencode.servers":              "OpenCode servers to follow: URLs, or {url, password, directory} items.",
	"adapters.openclaw":                      "OpenClaw.",
	"adapters.openclaw.url":                  "OpenClaw Gateway to follow (ws://127.0.0.1:18789); empty follows none.",
	"adapters.openclaw.token":                "Gateway auth token; empty uses OPENCLAW_GATEWAY_TOKEN. Prefer that variable.",
	"adapters.openclaw.describe_wait":        "How long /api/inject may ask the Gateway about a sub-agent's parent; 0 never asks.",

	"checkpoints":               "Session checkpoints: what a session is for and where it stands.",
	"checkpoints.every_prompts": "Prompts between periodic checkpoints of a session.",
	"checkpoints.every":         "Activity between periodic checkpoints of a session.",
	"checkpoints.retention":     "How long checkpoints are kept, beyond the newest of each session.",
	"checkpoints.keep":          "Newest checkpoints of each session kept whatever their age.",

	"recovery":        "The checkpoint a starting session recovers.",
	"recovery.window": "How old another session's checkpoint of the project may be to be recovered.",

	"runs":                   "Sub-agent runs after their spawn: heirloom's records only, it never stops an agent.",
	"runs.watchdog_timeout":  "A run running longer than this ends as watchdog_timeout.",
	"runs.ghost_grace":       "A pending run no sub-agent started within this, or a running one whose parent ended, ends as ghost_sweep.",
	"runs.result_retention":  "How long a finished run keeps its full result before it is swept to its condensed form.",
	"runs.max_result_tokens": "Estimated tokens (4 characters each) a result may have to be shown whole; longer ones are condensed.",

	"condense":         "Level-2 condensation: an OpenAI-compatible model summarises long results (empty url: head and tail instead).",
	"condense.url":     "Base URL of the API, e.g. http://127.0.0.1:11434/v1 (POST …/chat/completions); empty for none.",
	"condense.model":   "The model to ask; required with url.",
	"condense.token":   "Bearer token for the API; empty sends none. Prefer HEIRLOOM_CONDENSE__TOKEN.",
	"condense.timeout": "How long one summary may take; past it the result is shown as head and tail.",

	"spawn":              "Limits on spawning sub-agents (a top-level session is depth 0, its sub-agents 1).",
	"spawn.max_depth":    "Deepest a sub-agent may be; a spawn that would go deeper is refused. 0 for no limit.",
	"spawn.max_children": "Active sub-agents (pending and running) one session may have; 0 for no limit.",
	"spawn.mode":         "enforce (refuse a spawn past a limit) or observe (record and report it, never refuse).",
}

// commentedOut are keys Example shows as comments: data_dir because its
// default depends on XDG_DATA_HOME, the tokens because they are secrets.
var commentedOut = map[string]bool{
	"data_dir": true, "token": true, "adapters.openclaw.token": true, "adapters.claude_code.upstream.token": true,
	"condense.token": true,
}

// Example returns a YAML configuration file that shows every key at its
// default, each explained in one line; data_dir and token are left as
// comments. Loading it yields Default.
func Example() string {
	c := Default("", "")
	c.DataDir = "~/.local/share/heirloom"
	c.Adapters.ClaudeCode.TranscriptRoots = []string{defaultTranscriptRoot}
	c.Adapters.Codex.TranscriptRoots = []string{defaultCodexRoot}

	var b strings.Builder
	b.WriteString(`# heirloom configuration, with every key at its default.
#
# Each layer overrides the one before: built-in defaults, this file,
# HEIRLOOM_* environment variables, command-line flags. A variable is
# HEIRLOOM_ plus the upper-cased key with "__" for each "." (for example
# HEIRLOOM_LOG__LEVEL=debug); lists are comma-separated. Durations are
# strings such as "1500ms". Unknown keys are errors.
`)
	writeExample(&b, reflect.ValueOf(c), "", "")
	return b.String()
}

// writeExample writes the fields of struct v, whose keys start with prefix,
// indented by indent.
func writeExample(b *strings.Builder, v reflect.Value, prefix, indent string) {
	t := v.Type()
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("koanf")
		key := prefix + name
		if indent == "" {
			b.WriteString("\n")
		}
		b.WriteString(indent + "# " + docs[key] + "\n")
		fv := v.Field(i)
		if fv.Kind() == reflect.Struct {
			b.WriteString(indent + name + ":\n")
			writeExample(b, fv, key+".", indent+"  ")
			continue
		}
		line := indent + name + ": " + formatValue(fv.Interface()) + "\n"
		if commentedOut[key] {
			line = indent + "# " + name + ": " + formatValue(fv.Interface()) + "\n"
		}
		b.WriteString(line)
	}
}
