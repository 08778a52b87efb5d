package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/config"
)

func TestOpenCodeServers(t *testing.T) {
	t.Run("Env", func(t *testing.T) {
		l := mustLoad(t, config.Input{Home: "/home/u", Env: []string{"HEIRLOOM_ADAPTERS__OPENCODE__SERVERS=http://127.0.0.1:4096, http://127.0.0.1:4097"}})
		want := []config.OpenCodeServer{{URL: "http://127.0.0.1:4096"}, {URL: "http://127.0.0.1:4097"}}
		if got := l.Config.Adapters.OpenCode.Servers; !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	})
	for name, tt := range map[string]struct{ yaml, want string }{
		"ErrUnknownItemKey": {"adapters:\n  opencode:\n    servers:\n      - urll: http://x\n", "urll"},
		"ErrBadURL":         {"adapters:\n  opencode:\n    servers:\n      - url: ftp://x\n", "ftp://x"},
		"ErrNegativeDepth":  {"spawn:\n  max_depth: -1\n", "spawn.max_depth"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := config.Load(config.Input{Home: "/home/u", ConfigPath: path, ConfigRequired: true})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error naming %q", err, tt.want)
			}
		})
	}
	t.Run("PasswordHidden", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		os.WriteFile(path, []byte("adapters:\n  opencode:\n    servers:\n      - url: http://127.0.0.1:4096\n        password: hunter22\n"), 0o600)
		l := mustLoad(t, config.Input{Home: "/home/u", ConfigPath: path, ConfigRequired: true})
		var b strings.Builder
		l.WriteTo(&b)
		if strings.Contains(b.String(), "hunter22") || !strings.Contains(b.String(), "(set)") {
			t.Fatalf("config show leaks or hides wrongly:\n%s", b.String())
		}
	})
}
