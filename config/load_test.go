package config_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/config"
)

const home = "/home/u"

// writeConfig writes content to config.yaml in a temporary directory and
// returns its path.
func writeConfig(tb testing.TB, content string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// mustLoad loads in and fails the test on error.
func mustLoad(tb testing.TB, in config.Input) *config.Loaded {
	tb.Helper()
	l, err := config.Load(in)
	if err != nil {
		tb.Fatalf("Load: %v", err)
	}
	return l
}

// configErrors returns every *config.Error in err, looking inside joins.
func configErrors(err error) []*config.Error {
	if ce, ok := err.(*config.Error); ok {
		return []*config.Error{ce}
	}
	var out []*config.Error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, configErrors(e)...)
		}
	}
	return out
}

func TestLoad_Precedence(t *testing.T) {
	path := writeConfig(t, `
listen: "127.0.0.1:8000"
scope: from-file
log:
  level: warn
  format: text
inherit:
  tail_chars: 100
`)
	l := mustLoad(t, config.Input{
		Home:       home,
		ConfigPath: path,
		Env: []string{
			"PATH=/usr/bin",
			"HEIRLOOM_LOG__LEVEL=error",
			"HEIRLOOM_INHERIT__TAIL_CHARS=200",
			"HEIRLOOM_TOKEN=t0ken",
		},
		Flags: map[string]string{"log.level": "debug", "data_dir": "/flag/dir"},
	})

	want := config.Default(home, "")
	want.Listen = "127.0.0.1:8000"
	want.Scope = "from-file"
	want.Log = config.Log{Level: "debug", Format: "text"}
	want.Inherit.TailChars = 200
	want.Token = "t0ken"
	want.DataDir = "/flag/dir"
	if !reflect.DeepEqual(l.Config, want) {
		t.Errorf("got config %+v, want %+v", l.Config, want)
	}

	for key, origin := range map[string]string{
		"listen":                                "file " + path,
		"scope":                                 "file " + path,
		"log.format":                            "file " + path,
		"log.level":                             "flag --log-level",
		"inherit.tail_chars":                    "env HEIRLOOM_INHERIT__TAIL_CHARS",
		"token":                                 "env HEIRLOOM_TOKEN",
		"data_dir":                              "flag --data-dir",
		"server.hook_timeout":                   "default",
		"inherit.enabled":                       "default",
		"adapters.claude_code.transcript_roots": "default",
	} {
		if got := l.Origins[key]; got != origin {
			t.Errorf("origin of %s: got %q, want %q", key, got, origin)
		}
	}
	if got, want := len(l.Origins), 42; got != want {
		t.Errorf("got %d origins, want %d (one per key)", got, want)
	}
}

func TestLoad_Testdata(t *testing.T) {
	def := config.Default(home, "")
	partial := def
	partial.Log.Level = "warn"
	partial.Inherit.TailChars = 1200
	partial.Server.HookTimeout = 250 * time.Millisecond

	for _, tt := range []struct {
		file string
		want config.Config
	}{
		{"full.yaml", config.Config{
			Listen:  "0.0.0.0:9000",
			DataDir: "/srv/heirloom",
			Token:   "s3cret",
			Scope:   "team-a",
			Log:     config.Log{Level: "debug", Format: "json"},
			Server: config.Server{
				MaxBodyBytes:    1 << 20,
				HookTimeout:     1500 * time.Millisecond,
				ShutdownTimeout: 10 * time.Second,
			},
			Inherit: config.Inherit{Enabled: false, TailChars: 0, RelevantPassages: 2, CrossScope: []string{"main"}},
			Spawn:   config.Spawn{MaxDepth: 2, MaxChildren: 4, Mode: "observe"},
			Runs: config.Runs{
				WatchdogTimeout: time.Hour, GhostGrace: 5 * time.Minute, ResultRetention: 48 * time.Hour, MaxResultTokens: 2000,
			},
			Condense: config.Condense{URL: "http://127.0.0.1:11434/v1", Model: "qwen3:4b", Token: "sk-local", Timeout: 10 * time.Second},
			Checkpoints: config.Checkpoints{
				EveryPrompts: 5, Every: 30 * time.Minute, Retention: 72 * time.Hour, Keep: 1,
			},
			Recovery: config.Recovery{Window: 2 * time.Hour},
			Adapters: config.Adapters{ClaudeCode: config.ClaudeCode{
				MaxContextChars: 8000,
				TranscriptRoots: []string{home + "/.claude/projects", "/var/lib/claude/projects"},
				HookReadBytes:   1 << 20,
				MaxReadBytes:    2 << 20,
				Upstream: config.Upstream{
					URL:     "http://127.0.0.1:8080/hooks",
					Timeout: 2 * time.Second,
					Headers: map[string]string{"X-Api-Key": "k3y", "X-Team": "a"},
					Token:   "up-secret",
				},
			}, OpenCode: config.OpenCode{Servers: []config.OpenCodeServer{
				{URL: "http://127.0.0.1:4096", Password: "pw", Directory: "/srv/app"},
				{URL: "http://127.0.0.1:4097"},
			}}, OpenClaw: config.OpenClaw{URL: "ws://127.0.0.1:18790", Token: "gw-secret", DescribeWait: time.Second},
				Codex: config.Codex{TranscriptRoots: []string{"/home/u/.codex/sessions"}}},
		}},
		{"partial.yaml", partial},
		{"empty.yaml", def},
	} {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			l := mustLoad(t, config.Input{Home: home, ConfigPath: path, ConfigRequired: true})
			if !reflect.DeepEqual(l.Config, tt.want) {
				t.Errorf("got %+v, want %+v", l.Config, tt.want)
			}
		})
	}
}

func TestLoad_Defaults(t *testing.T) {
	t.Run("NoFile", func(t *testing.T) {
		l := mustLoad(t, config.Input{Home: home})
		if want := config.Default(home, ""); !reflect.DeepEqual(l.Config, want) {
			t.Errorf("got %+v, want %+v", l.Config, want)
		}
		for key, origin := range l.Origins {
			if origin != "default" {
				t.Errorf("origin of %s: got %q, want default", key, origin)
			}
		}
	})
	t.Run("XDGDataHome", func(t *testing.T) {
		l := mustLoad(t, config.Input{Home: home, Env: []string{"XDG_DATA_HOME=/xdg"}})
		if got, want := l.Config.DataDir, "/xdg/heirloom"; got != want {
			t.Errorf("got data_dir %q, want %q", got, want)
		}
	})
	t.Run("MissingOptionalFile", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nope.yaml")
		l := mustLoad(t, config.Input{Home: home, ConfigPath: path})
		if want := config.Default(home, ""); !reflect.DeepEqual(l.Config, want) {
			t.Errorf("got %+v, want %+v", l.Config, want)
		}
	})
}

func TestLoad_HomeExpansion(t *testing.T) {
	path := writeConfig(t, `
data_dir: ~/state/heirloom
adapters:
  claude_code:
    transcript_roots: ["~/.claude/projects", "~/other", "/abs"]
`)
	l := mustLoad(t, config.Input{Home: home, ConfigPath: path})
	if got, want := l.Config.DataDir, home+"/state/heirloom"; got != want {
		t.Errorf("got data_dir %q, want %q", got, want)
	}
	got := l.Config.Adapters.ClaudeCode.TranscriptRoots
	want := []string{home + "/.claude/projects", home + "/other", "/abs"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got transcript_roots %q, want %q", got, want)
	}

	t.Run("ErrNoHome", func(t *testing.T) {
		_, err := config.Load(config.Input{Env: []string{"XDG_DATA_HOME=/xdg"}})
		var ce *config.Error
		if !errors.As(err, &ce) {
			t.Fatalf("got error %v, want a *config.Error", err)
		}
		if got, want := ce.Key, "adapters.claude_code.transcript_roots"; got != want {
			t.Errorf("got key %q, want %q", got, want)
		}
		if got, want := ce.Value, any("~/.claude/projects"); got != want {
			t.Errorf("got value %v, want %v", got, want)
		}
	})
}

func TestLoad_EnvList(t *testing.T) {
	l := mustLoad(t, config.Input{Home: home, Env: []string{
		"HEIRLOOM_ADAPTERS__CLAUDE_CODE__TRANSCRIPT_ROOTS=/a, ~/b ,/c",
		"HEIRLOOM_INHERIT__ENABLED=false",
		"HEIRLOOM_SERVER__HOOK_TIMEOUT=1500ms",
		"HEIRLOOM_SERVER__MAX_BODY_BYTES=1024",
	}})
	if got, want := l.Config.Adapters.ClaudeCode.TranscriptRoots, []string{"/a", home + "/b", "/c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got transcript_roots %q, want %q", got, want)
	}
	if l.Config.Inherit.Enabled {
		t.Errorf("got inherit.enabled true, want false")
	}
	if got, want := l.Config.Server.HookTimeout, 1500*time.Millisecond; got != want {
		t.Errorf("got hook_timeout %v, want %v", got, want)
	}
	if got, want := l.Config.Server.MaxBodyBytes, int64(1024); got != want {
		t.Errorf("got max_body_bytes %d, want %d", got, want)
	}
}

func TestLoad_IgnoredEnv(t *testing.T) {
	l := mustLoad(t, config.Input{Home: home, Env: []string{
		"HEIRLOOM_URL=http://127.0.0.1:1",
		"HEIRLOOM_HOOK_TIMEOUT=not-a-duration",
		"HEIRLOOM_CONFIG=/nowhere.yaml",
		"HEIRLOOM_UPSTREAM_TIMEOUT=5s",
		"HEIRLOOM_MAX_CONTEXT_CHARS=8000",
	}})
	if want := config.Default(home, ""); !reflect.DeepEqual(l.Config, want) {
		t.Errorf("got %+v, want %+v", l.Config, want)
	}
}

// TestLoad_Errors covers each class of error: the key, source and value it
// names.
func TestLoad_Errors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		file   string // written to a temporary config.yaml when not empty
		env    []string
		flags  map[string]string
		key    string
		source string // "file" stands for "file <temporary path>"
		value  any
		err    error // wanted with errors.Is, if not nil
	}{
		{name: "UnknownFileKey", file: "inherti:\n  tail_chars: 1\n  enabled: true\n",
			key: "inherti", source: "file", err: config.ErrUnknownKey},
		{name: "UnknownNestedKey", file: "log:\n  levle: debug\n",
			key: "log.levle", source: "file", err: config.ErrUnknownKey},
		{name: "KeyCaseMatters", file: "Listen: 127.0.0.1:1\n",
			key: "Listen", source: "file", err: config.ErrUnknownKey},
		{name: "UnknownEnv", env: []string{"HEIRLOOM_LISTN=x"},
			key: "listn", source: "env HEIRLOOM_LISTN", err: config.ErrUnknownKey},
		{name: "LowerCaseEnv", env: []string{"HEIRLOOM_listen=x"},
			source: "env HEIRLOOM_listen", err: config.ErrUnknownKey},
		{name: "UnknownFlag", flags: map[string]string{"nope": "1"},
			key: "nope", source: "flag --nope", err: config.ErrUnknownKey},
		{name: "BadIntEnv", env: []string{"HEIRLOOM_INHERIT__TAIL_CHARS=abc"},
			key: "inherit.tail_chars", source: "env HEIRLOOM_INHERIT__TAIL_CHARS", value: "abc"},
		{name: "StringInIntFile", file: "inherit:\n  tail_chars: lots\n",
			key: "inherit.tail_chars", source: "file", value: "lots"},
		{name: "FractionInIntFile", file: "inherit:\n  tail_chars: 1.5\n",
			key: "inherit.tail_chars", source: "file", value: 1.5},
		{name: "BadDurationFile", file: "server:\n  hook_timeout: soon\n",
			key: "server.hook_timeout", source: "file", value: "soon"},
		{name: "BareNumberDuration", file: "server:\n  hook_timeout: 1000\n",
			key: "server.hook_timeout", source: "file", value: 1000},
		{name: "BadDurationFlag", flags: map[string]string{"server.shutdown_timeout": "5"},
			key: "server.shutdown_timeout", source: "flag --server-shutdown-timeout", value: "5"},
		{name: "BadBoolEnv", env: []string{"HEIRLOOM_INHERIT__ENABLED=maybe"},
			key: "inherit.enabled", source: "env HEIRLOOM_INHERIT__ENABLED", value: "maybe"},
		{name: "NumberInStringFile", file: "scope: 12\n",
			key: "scope", source: "file", value: 12},
		{name: "MappingInStringFile", file: "listen:\n  host: x\n",
			key: "listen", source: "file", value: map[string]any{}},
		{name: "ScalarSection", file: "log: debug\n",
			key: "log", source: "file", value: "debug"},
		{name: "TokenValueHidden", file: "token: [a, b]\n",
			key: "token", source: "file"},
		{name: "NonLoopbackWithoutToken", env: []string{"HEIRLOOM_LISTEN=0.0.0.0:7433"},
			key: "listen", source: "env HEIRLOOM_LISTEN", value: "0.0.0.0:7433"},
		{name: "InvalidScope", flags: map[string]string{"scope": "Team A"},
			key: "scope", source: "flag --scope", value: "Team A"},
		{name: "InvalidFileValue", file: "adapters:\n  claude_code:\n    max_context_chars: 20000\n",
			key: "adapters.claude_code.max_context_chars", source: "file", value: 20000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := config.Input{Home: home, Env: tt.env, Flags: tt.flags}
			source := tt.source
			if tt.file != "" {
				in.ConfigPath = writeConfig(t, tt.file)
				if source == "file" {
					source = "file " + in.ConfigPath
				}
			}
			l, err := config.Load(in)
			if err == nil {
				t.Fatalf("got config %+v, want an error", l.Config)
			}
			errs := configErrors(err)
			if len(errs) != 1 {
				t.Fatalf("got %d config errors (%v), want 1", len(errs), err)
			}
			ce := errs[0]
			if ce.Key != tt.key {
				t.Errorf("got key %q, want %q", ce.Key, tt.key)
			}
			if ce.Source != source {
				t.Errorf("got source %q, want %q", ce.Source, source)
			}
			if !reflect.DeepEqual(ce.Value, tt.value) {
				t.Errorf("got value %#v, want %#v", ce.Value, tt.value)
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("got error %v, want one that is %v", err, tt.err)
			}
		})
	}
}

func TestLoad_ConfigFile(t *testing.T) {
	t.Run("ErrMissingRequired", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nope.yaml")
		_, err := config.Load(config.Input{Home: home, ConfigPath: path, ConfigRequired: true})
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("got error %v, want fs.ErrNotExist", err)
		}
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Source != "file "+path {
			t.Errorf("got error %v, want a *config.Error from file %s", err, path)
		}
	})
	t.Run("ErrDirectory", func(t *testing.T) {
		// Only a missing optional file is skipped; other read errors are not.
		_, err := config.Load(config.Input{Home: home, ConfigPath: t.TempDir()})
		var ce *config.Error
		if !errors.As(err, &ce) {
			t.Fatalf("got error %v, want a *config.Error", err)
		}
	})
	t.Run("ErrYAML", func(t *testing.T) {
		path := writeConfig(t, "listen: a\nlog:\n  level: [unclosed\n")
		_, err := config.Load(config.Input{Home: home, ConfigPath: path})
		var ce *config.Error
		if !errors.As(err, &ce) {
			t.Fatalf("got error %v, want a *config.Error", err)
		}
		if ce.Key != "" || ce.Source != "file "+path || ce.Err == nil {
			t.Errorf("got %#v, want no key, source file %s and a YAML cause", ce, path)
		}
	})
	t.Run("ErrSeveral", func(t *testing.T) {
		path := writeConfig(t, "nope: 1\nscope: 2\n")
		_, err := config.Load(config.Input{Home: home, ConfigPath: path, Env: []string{"HEIRLOOM_X=1"}})
		var keys []string
		for _, ce := range configErrors(err) {
			keys = append(keys, ce.Key)
		}
		if want := []string{"nope", "scope", "x"}; !reflect.DeepEqual(keys, want) {
			t.Errorf("got error keys %q, want %q (from %v)", keys, want, err)
		}
	})
}

// TestLoad_MaxReadBelowHookRead: a config from before hook_read_bytes that set max_read_bytes
// below hook_read_bytes's default still loads, a hook reading at most max_read_bytes; both set
// so is an error naming max_read_bytes.
func TestLoad_MaxReadBelowHookRead(t *testing.T) {
	l := mustLoad(t, config.Input{Home: home, Env: []string{"HEIRLOOM_ADAPTERS__CLAUDE_CODE__MAX_READ_BYTES=524288"}})
	if cc := l.Config.Adapters.ClaudeCode; cc.HookReadBytes != 524288 || cc.MaxReadBytes != 524288 {
		t.Errorf("hook %d, max %d; want both 524288", cc.HookReadBytes, cc.MaxReadBytes)
	}
	_, err := config.Load(config.Input{Home: home, Env: []string{
		"HEIRLOOM_ADAPTERS__CLAUDE_CODE__MAX_READ_BYTES=524288", "HEIRLOOM_ADAPTERS__CLAUDE_CODE__HOOK_READ_BYTES=1048576"}})
	if errs := configErrors(err); len(errs) != 1 || errs[0].Key != "adapters.claude_code.max_read_bytes" {
		t.Errorf("both set, max below hook: got %v, want one error naming max_read_bytes", err)
	}
}
