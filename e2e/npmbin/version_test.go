package npmbin_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/npmbin"
)

// script writes an executable shell script into a temp dir of t.
func script(t *testing.T, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("needs /bin/sh")
	}
	p := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersion(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		// The script counts its runs in HOME/../runs: a second call must not run it.
		runs := filepath.Join(t.TempDir(), "runs")
		bin := script(t, "echo run >> "+runs+"\necho \"  1.2.3 ($HOME)  \"\n")
		env := func(dir string) []string { return []string{"HOME=" + dir} }
		v, err := npmbin.Version(t, []string{bin, "--version"}, env)
		if err != nil || !strings.HasPrefix(v, "1.2.3 (") || strings.HasSuffix(v, " ") {
			t.Fatalf("got %q, %v", v, err)
		}
		home := strings.TrimSuffix(strings.TrimPrefix(v, "1.2.3 ("), ")")
		if _, err := os.Stat(home); !os.IsNotExist(err) {
			t.Errorf("throwaway HOME %s not removed (%v)", home, err)
		}
		if again, err := npmbin.Version(t, []string{bin, "--version"}, env); again != v || err != nil {
			t.Errorf("second call: got %q, %v", again, err)
		}
		if b, _ := os.ReadFile(runs); string(b) != "run\n" {
			t.Errorf("ran %q, want once", b)
		}
	})
	t.Run("Fails", func(t *testing.T) {
		bin := script(t, "echo >&2\necho 'postinstall script was not run' >&2\necho more >&2\nexit 1\n")
		_, err := npmbin.Version(t, []string{bin, "--version"}, nil)
		if err == nil || !strings.HasSuffix(err.Error(), ": postinstall script was not run") {
			t.Errorf("got %v, want the first line of stderr", err)
		}
	})
	t.Run("Missing", func(t *testing.T) {
		if _, err := npmbin.Version(t, []string{filepath.Join(t.TempDir(), "none"), "--version"}, nil); err == nil {
			t.Error("got no error")
		}
	})
}

func TestBin(t *testing.T) {
	t.Setenv(npmbin.RequireEnv, "")
	t.Run("OK", func(t *testing.T) {
		bin := script(t, "echo 9.9.9\n")
		t.Setenv("HEIRLOOM_TEST_BIN", bin)
		if got := npmbin.Bin(t, "HEIRLOOM_TEST_BIN", "tool", nil); got != bin {
			t.Errorf("got %q, want %q", got, bin)
		}
	})
	for name, body := range map[string]string{
		"Absent":   "",
		"Unusable": "echo 'postinstall script was not run' >&2\nexit 1\n",
	} {
		t.Run(name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "missing")
			if body != "" {
				bin = script(t, body)
			}
			t.Setenv("HEIRLOOM_TEST_BIN", bin)
			var skipped bool
			t.Run("Skips", func(t *testing.T) {
				defer func() { skipped = t.Skipped() }()
				npmbin.Bin(t, "HEIRLOOM_TEST_BIN", "tool", nil)
			})
			if !skipped {
				t.Error("Bin did not skip")
			}
		})
	}
}
