package config_test

import (
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/config"
)

func TestError_Error(t *testing.T) {
	for _, tt := range []struct {
		err  *config.Error
		want string
	}{
		{&config.Error{Key: "inherit.tail_chars", Source: "env HEIRLOOM_INHERIT__TAIL_CHARS", Value: "abc", Msg: "is not an integer"},
			`config: inherit.tail_chars from env HEIRLOOM_INHERIT__TAIL_CHARS: "abc" is not an integer`},
		{&config.Error{Key: "inherti", Source: "file /x/config.yaml", Err: config.ErrUnknownKey},
			`config: unknown key "inherti" in file /x/config.yaml`},
		{&config.Error{Source: "env HEIRLOOM_listen", Err: config.ErrUnknownKey},
			`config: env HEIRLOOM_listen: unknown key`},
		{&config.Error{Source: "file /x/config.yaml", Err: errors.New("yaml: line 3: mapping values are not allowed in this context")},
			`config: file /x/config.yaml: yaml: line 3: mapping values are not allowed in this context`},
		{&config.Error{Source: "file /x/config.yaml", Err: fs.ErrNotExist},
			`config: file /x/config.yaml: file does not exist`},
		{&config.Error{Key: "listen", Value: "0.0.0.0:7433", Msg: "is not a loopback address: set token (HEIRLOOM_TOKEN) before binding it"},
			`config: listen: "0.0.0.0:7433" is not a loopback address: set token (HEIRLOOM_TOKEN) before binding it`},
		{&config.Error{Key: "server.hook_timeout", Source: "flag --server-hook-timeout", Value: -time.Second, Msg: "must be greater than 0"},
			`config: server.hook_timeout from flag --server-hook-timeout: "-1s" must be greater than 0`},
		{&config.Error{Key: "listen", Source: "file /x", Value: map[string]any{"a": 1}, Msg: "is not a string"},
			`config: listen from file /x: a mapping is not a string`},
		{&config.Error{Key: "scope", Value: "0123456789012345678901234567890123456789012345678901234567890123456789012345678é9", Msg: "is not a valid scope"},
			`config: scope: "0123456789012345678901234567890123456789012345678901234567890123456789012345678…" is not a valid scope`},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %s, want %s", got, tt.want)
		}
	}
}

func TestError_Unwrap(t *testing.T) {
	err := error(&config.Error{Source: "file /x", Err: fs.ErrNotExist})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got errors.Is(%v, fs.ErrNotExist) false, want true", err)
	}
}
