package config_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/config"
)

func TestUpstream(t *testing.T) {
	t.Run("File", func(t *testing.T) {
		path := writeConfig(t, "adapters:\n  claude_code:\n    upstream:\n      url: http://127.0.0.1:9/h\n      headers:\n        X-Api-Key: \"a=b,c\"\n")
		l := mustLoad(t, config.Input{Home: home, ConfigPath: path})
		want := config.Upstream{URL: "http://127.0.0.1:9/h", Timeout: 5 * time.Second, Headers: map[string]string{"X-Api-Key": "a=b,c"}}
		if got := l.Config.Adapters.ClaudeCode.Upstream; !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
		if got := l.Origins["adapters.claude_code.upstream.headers"]; got != "file "+path {
			t.Errorf("origin of headers: got %q", got)
		}
	})
	t.Run("Env", func(t *testing.T) {
		l := mustLoad(t, config.Input{Home: home, Env: []string{
			"HEIRLOOM_ADAPTERS__CLAUDE_CODE__UPSTREAM__URL=http://127.0.0.1:9/h",
			"HEIRLOOM_ADAPTERS__CLAUDE_CODE__UPSTREAM__HEADERS=X-A=1, X-B = x=y ,",
			"HEIRLOOM_ADAPTERS__CLAUDE_CODE__UPSTREAM__TIMEOUT=250ms",
			"HEIRLOOM_ADAPTERS__CLAUDE_CODE__UPSTREAM__TOKEN=tok",
		}})
		want := config.Upstream{URL: "http://127.0.0.1:9/h", Timeout: 250 * time.Millisecond,
			Headers: map[string]string{"X-A": "1", "X-B": "x=y"}, Token: "tok"}
		if got := l.Config.Adapters.ClaudeCode.Upstream; !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
	t.Run("EnvReplacesFileHeaders", func(t *testing.T) {
		path := writeConfig(t, "adapters:\n  claude_code:\n    upstream:\n      headers: {X-A: file}\n")
		l := mustLoad(t, config.Input{Home: home, ConfigPath: path, Env: []string{"HEIRLOOM_ADAPTERS__CLAUDE_CODE__UPSTREAM__HEADERS=X-B=env"}})
		if got, want := l.Config.Adapters.ClaudeCode.Upstream.Headers, map[string]string{"X-B": "env"}; !reflect.DeepEqual(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	for name, tt := range map[string]struct {
		file string
		env  []string
		want string // in the error
	}{
		"ErrEnvHeaderEntry": {env: []string{"HEIRLOOM_ADAPTERS__CLAUDE_CODE__UPSTREAM__HEADERS__X_A=1"}, want: "HEIRLOOM_ADAPTERS__CLAUDE_CODE__UPSTREAM__HEADERS__X_A"},
		"ErrEnvHeaderPair":  {env: []string{"HEIRLOOM_ADAPTERS__CLAUDE_CODE__UPSTREAM__HEADERS=novalue"}, want: "adapters.claude_code.upstream.headers"},
		"ErrNestedHeader":   {file: "adapters:\n  claude_code:\n    upstream:\n      headers:\n        X-A:\n          deep: 1\n", want: "adapters.claude_code.upstream.headers"},
		"ErrHeadersList":    {file: "adapters:\n  claude_code:\n    upstream:\n      headers: [a, b]\n", want: "adapters.claude_code.upstream.headers"},
		"ErrUnknownKey":     {file: "adapters:\n  claude_code:\n    upstream:\n      uri: http://x\n", want: "adapters.claude_code.upstream.uri"},
		"ErrURL":            {file: "adapters:\n  claude_code:\n    upstream:\n      url: localhost:8080\n", want: "adapters.claude_code.upstream.url"},
	} {
		t.Run(name, func(t *testing.T) {
			in := config.Input{Home: home, Env: tt.env}
			if tt.file != "" {
				in.ConfigPath = writeConfig(t, tt.file)
			}
			_, err := config.Load(in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error naming %q", err, tt.want)
			}
		})
	}
	t.Run("SecretsHidden", func(t *testing.T) {
		path := writeConfig(t, "adapters:\n  claude_code:\n    upstream:\n      url: http://127.0.0.1:9/h\n      token: hunter22\n      headers:\n        X-Api-Key: hunter23\n")
		l := mustLoad(t, config.Input{Home: home, ConfigPath: path})
		var b strings.Builder
		if _, err := l.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			`adapters.claude_code.upstream.headers: {"X-Api-Key": "(set)"}  # file ` + path,
			`adapters.claude_code.upstream.token: (set)  # file ` + path,
		} {
			if !strings.Contains(b.String(), want+"\n") {
				t.Errorf("got\n%s\nwant a line %q", b.String(), want)
			}
		}
		if strings.Contains(b.String(), "hunter2") {
			t.Errorf("config show leaks a secret:\n%s", b.String())
		}
		_, err := config.Load(config.Input{Home: home, ConfigPath: writeConfig(t, "adapters:\n  claude_code:\n    upstream:\n      headers: {X-A: [hunter24]}\n")})
		if err == nil || strings.Contains(err.Error(), "hunter24") {
			t.Errorf("got %v, want an error without the header value", err)
		}
	})
}
