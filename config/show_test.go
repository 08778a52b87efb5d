package config_test

import (
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/config"
)

func TestLoaded_WriteTo(t *testing.T) {
	path := writeConfig(t, "log:\n  level: debug\n")
	l := mustLoad(t, config.Input{
		Home:       home,
		ConfigPath: path,
		Env:        []string{"HEIRLOOM_TOKEN=hunter2", "HEIRLOOM_LISTEN=0.0.0.0:7433"},
		Flags:      map[string]string{"inherit.tail_chars": "10"},
	})
	var b strings.Builder
	n, err := l.WriteTo(&b)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(b.Len()) {
		t.Errorf("got n %d, want %d", n, b.Len())
	}
	want := `adapters.claude_code.hook_read_bytes: 1048576  # default
adapters.claude_code.max_context_chars: 9500  # default
adapters.claude_code.max_read_bytes: 4194304  # default
adapters.claude_code.transcript_roots: ["/home/u/.claude/projects"]  # default
adapters.claude_code.upstream.headers: {}  # default
adapters.claude_code.upstream.timeout: "5s"  # default
adapters.claude_code.upstream.token: ""  # default
adapters.claude_code.upstream.url: ""  # default
adapters.codex.transcript_roots: ["/home/u/.codex/sessions"]  # default
adapters.openclaw.describe_wait: "300ms"  # default
adapters.openclaw.token: ""  # default
adapters.openclaw.url: ""  # default
adapters.opencode.servers: []  # default
checkpoints.every: "15m0s"  # default
checkpoints.every_prompts: 10  # default
checkpoints.keep: 3  # default
checkpoints.retention: "168h0m0s"  # default
condense.model: ""  # default
condense.timeout: "30s"  # default
condense.token: ""  # default
condense.url: ""  # default
data_dir: "/home/u/.local/share/heirloom"  # default
inherit.cross_scope: ["*"]  # default
inherit.enabled: true  # default
inherit.relevant_passages: 6  # default
inherit.tail_chars: 10  # flag --inherit-tail-chars
listen: "0.0.0.0:7433"  # env HEIRLOOM_LISTEN
log.format: "auto"  # default
log.level: "debug"  # file ` + path + `
recovery.window: "4h0m0s"  # default
runs.ghost_grace: "10m0s"  # default
runs.max_result_tokens: 4000  # default
runs.result_retention: "24h0m0s"  # default
runs.watchdog_timeout: "30m0s"  # default
scope: "default"  # default
server.hook_timeout: "1s"  # default
server.max_body_bytes: 8388608  # default
server.shutdown_timeout: "5s"  # default
spawn.max_children: 10  # default
spawn.max_depth: 3  # default
spawn.mode: "enforce"  # default
token: (set)  # env HEIRLOOM_TOKEN
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(b.String(), "hunter2") {
		t.Errorf("got the token's value in the output, want it hidden")
	}
}

func TestLoaded_WriteTo_NoToken(t *testing.T) {
	l := mustLoad(t, config.Input{Home: home})
	var b strings.Builder
	if _, err := l.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if want := "token: \"\"  # default\n"; !strings.Contains(b.String(), want) {
		t.Errorf("got\n%s\nwant a line %q", b.String(), want)
	}
}
