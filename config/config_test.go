package config_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/config"
)

func TestDefault(t *testing.T) {
	want := config.Config{
		Listen:  "127.0.0.1:7433",
		DataDir: "/home/u/.local/share/heirloom",
		Scope:   "default",
		Log:     config.Log{Level: "info", Format: "auto"},
		Server: config.Server{
			MaxBodyBytes:    8 << 20,
			HookTimeout:     time.Second,
			ShutdownTimeout: 5 * time.Second,
		},
		Inherit: config.Inherit{Enabled: true, TailChars: 9500, RelevantPassages: 6, CrossScope: []string{"*"}},
		Spawn:   config.Spawn{MaxDepth: 3, MaxChildren: 10, Mode: "enforce"},
		Runs: config.Runs{
			WatchdogTimeout: 30 * time.Minute, GhostGrace: 10 * time.Minute, ResultRetention: 24 * time.Hour, MaxResultTokens: 4000,
		},
		Condense: config.Condense{Timeout: 30 * time.Second},
		Checkpoints: config.Checkpoints{
			EveryPrompts: 10, Every: 15 * time.Minute, Retention: 7 * 24 * time.Hour, Keep: 3,
		},
		Recovery: config.Recovery{Window: 4 * time.Hour},
		Adapters: config.Adapters{ClaudeCode: config.ClaudeCode{
			MaxContextChars: 9500,
			TranscriptRoots: []string{"/home/u/.claude/projects"},
			HookReadBytes:   1 << 20,
			MaxReadBytes:    4 << 20,
			Upstream:        config.Upstream{Timeout: 5 * time.Second, Headers: map[string]string{}},
		}, OpenCode: config.OpenCode{Servers: []config.OpenCodeServer{}},
			OpenClaw: config.OpenClaw{DescribeWait: 300 * time.Millisecond},
			Codex:    config.Codex{TranscriptRoots: []string{"/home/u/.codex/sessions"}}},
	}
	got := config.Default("/home/u", "")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate: got %v, want nil", err)
	}
}

func TestDefault_DataDir(t *testing.T) {
	for _, tt := range []struct {
		home, xdg, want string
	}{
		{"/home/u", "", "/home/u/.local/share/heirloom"},
		{"/home/u", "/xdg", "/xdg/heirloom"},
		{"/home/u", "relative", "/home/u/.local/share/heirloom"}, // the XDG spec ignores relative paths
		{"", "/xdg", "/xdg/heirloom"},
		{"", "", ""},
	} {
		if got := config.Default(tt.home, tt.xdg).DataDir; got != tt.want {
			t.Errorf("Default(%q, %q).DataDir: got %q, want %q", tt.home, tt.xdg, got, tt.want)
		}
	}
}

func TestFlagName(t *testing.T) {
	for key, want := range map[string]string{
		"listen":                               "listen",
		"data_dir":                             "data-dir",
		"log.level":                            "log-level",
		"adapters.claude_code.hook_read_bytes": "adapters-claude-code-hook-read-bytes",
		"adapters.claude_code.max_read_bytes":  "adapters-claude-code-max-read-bytes",
	} {
		if got := config.FlagName(key); got != want {
			t.Errorf("FlagName(%q): got %q, want %q", key, got, want)
		}
	}
}
