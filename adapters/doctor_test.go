package adapters_test

import (
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
)

func TestSameURL(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"http://127.0.0.1:7433", "http://127.0.0.1:7433/", true},
		{"http://localhost:7433/mcp", "http://127.0.0.1:7433/mcp", true},
		{"http://[::1]:7433", "http://127.0.0.1:7433", true},
		{"http://127.0.0.1:7433", "http://127.0.0.1:7434", false},
		{"http://127.0.0.1:7433/mcp", "http://127.0.0.1:7433", false},
		{"http://127.0.0.1", "http://127.0.0.1:80", true},
	} {
		if got := adapters.SameURL(c.a, c.b); got != c.same {
			t.Errorf("SameURL(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

func TestCommandProgram(t *testing.T) {
	for cmd, want := range map[string]string{
		"/usr/local/bin/heirloom-hook claude-code":               "/usr/local/bin/heirloom-hook",
		`"/opt/My Tools/heirloom" hook claude-code`:              "/opt/My Tools/heirloom",
		"HEIRLOOM_URL=http://x:1 /bin/heirloom-hook claude-code": "/bin/heirloom-hook",
		"~/bin/heirloom-hook claude-code":                        "",
		"$HOME/bin/heirloom-hook claude-code":                    "",
		"heirloom hook claude-code":                              "heirloom",
		`"unclosed`:                                              "",
	} {
		if got := adapters.CommandProgram(cmd); got != want {
			t.Errorf("CommandProgram(%q) = %q, want %q", cmd, got, want)
		}
	}
}
