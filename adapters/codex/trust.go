package codex

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Codex runs a hook from config.toml only when the hook is trusted: when config.toml holds
// [hooks.state."<key>"] trusted_hash = "<hash>" for it, with the hash of the hook as it is now.
// An untrusted hook (or one changed since it was trusted) silently never runs. Both formulas
// below were checked against Codex CLI 0.169.0's own (`codex app-server`, method hooks/list:
// fields key and currentHash, trustStatus "trusted"); see e2e/live_codex_install_test.go.

// hookEvent is one Codex hook event heirloom installs its shim for.
type hookEvent struct {
	name  string // as config.toml names it: [[hooks.<name>]]
	snake string // as trust keys and hashes name it
}

// hookEvents are the events heirloom's shim is installed for, in the order install writes them.
var hookEvents = []hookEvent{
	{"SessionStart", "session_start"},
	{"UserPromptSubmit", "user_prompt_submit"},
	{"PreToolUse", "pre_tool_use"},
	{"PostToolUse", "post_tool_use"},
	{"SubagentStart", "subagent_start"},
	{"SubagentStop", "subagent_stop"},
	{"PreCompact", "pre_compact"},
	{"PostCompact", "post_compact"},
	{"Stop", "stop"},
	{"SessionEnd", "session_end"},
}

// Timeouts heirloom writes on its hooks, in seconds, which its trust hashes cover. Codex waits
// 600 s for a hook that sets none (1 s for SessionEnd); the shim gives up on the sidecar after
// 1.5 s and answers {} (HEIRLOOM_HOOK_TIMEOUT), so 10 s bounds a hook process that hangs
// without cutting a slow start short. SessionEnd runs as Codex exits: 3 s, as for Claude Code.
const (
	hookTimeout       = 10
	sessionEndTimeout = 3
)

// timeoutOf is the timeout heirloom writes on its hook for event.
func timeoutOf(event string) int {
	if event == "SessionEnd" {
		return sessionEndTimeout
	}
	return hookTimeout
}

// defaultTimeout is the timeout Codex gives a hook of event that sets none, in seconds.
func defaultTimeout(event string) int {
	if event == "SessionEnd" {
		return 1
	}
	return 600
}

// configFile is the name of Codex's config file in $CODEX_HOME.
const configFile = "config.toml"

// keyPath is the config path trust keys name for the config.toml in codexHome: the directory
// with every symbolic link resolved, then "config.toml" (Codex does not resolve a config.toml
// that is itself a link). A directory that does not exist yet is resolved as far as it exists.
func keyPath(codexHome string) (string, error) {
	abs, err := filepath.Abs(codexHome)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", codexHome, err)
	}
	var rest []string
	for dir := abs; ; {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(append(append([]string{real}, rest...), configFile)...), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join(abs, configFile), nil
		}
		rest = append([]string{filepath.Base(dir)}, rest...)
		dir = parent
	}
}

// TrustKey is the key of a hook's [hooks.state."<key>"] entry: the config file's path as
// keyPath gives it, the event in snake_case, the group's index among that event's groups in
// the file and the handler's index in the group, joined by colons, e.g.
// "/home/u/.codex/config.toml:session_start:0:0".
func TrustKey(configPath, snakeEvent string, group, handler int) string {
	return configPath + ":" + snakeEvent + ":" + strconv.Itoa(group) + ":" + strconv.Itoa(handler)
}

// parseTrustKey splits a trust key of configPath into its event and indexes; ok is false for a
// key of another file or another shape.
func parseTrustKey(key, configPath string) (snakeEvent string, group, handler int, ok bool) {
	rest, found := strings.CutPrefix(key, configPath+":")
	if !found {
		return "", 0, 0, false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 3 {
		return "", 0, 0, false
	}
	g, err1 := strconv.Atoi(parts[1])
	h, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || g < 0 || h < 0 || strconv.Itoa(g) != parts[1] {
		return "", 0, 0, false
	}
	return parts[0], g, h, true
}

// TrustHash is the trusted_hash of a group holding one command hook: "sha256:" and the hex
// SHA-256 of the compact JSON, keys sorted, of {"event_name", "hooks": [{"async": false,
// "command", "timeout", "type": "command"}], "matcher"}, where timeout is the effective one
// (the default when the hook sets none) and matcher is left out when it is "" (Codex treats an
// empty matcher as none). Strings are escaped as serde_json escapes them: only '"', '\\' and
// control characters, nothing else (not '<', '&' or U+2028, which encoding/json would).
func TrustHash(snakeEvent, matcher, command string, timeoutSec int) string {
	var b strings.Builder
	b.WriteString(`{"event_name":`)
	writeJSONString(&b, snakeEvent)
	b.WriteString(`,"hooks":[{"async":false,"command":`)
	writeJSONString(&b, command)
	b.WriteString(`,"timeout":`)
	b.WriteString(strconv.Itoa(timeoutSec))
	b.WriteString(`,"type":"command"}]`)
	if matcher != "" {
		b.WriteString(`,"matcher":`)
		writeJSONString(&b, matcher)
	}
	b.WriteString("}")
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeJSONString writes s as a JSON string the way serde_json does.
func writeJSONString(b *strings.Builder, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}
