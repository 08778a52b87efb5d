// Package opencode runs the real OpenCode server (`opencode serve`) offline
// in tests: a private HOME and TMPDIR, a project directory that is a git
// repository, an opencode.json whose only provider is a loopback stand-in
// for an OpenAI-compatible API (package chatapi), the test's plugin files in
// .opencode/plugin/, and any other outbound HTTP(S) request sent to that
// stand-in as a proxy, where it is logged and refused (see Env).
//
// The binary is the one e2e/npm/install.sh installs at the version pinned in
// e2e/npm/package-lock.json. Tests that need it call Bin, which skips them
// when it is absent, unless HEIRLOOM_E2E_REQUIRE is set (CI sets it after
// running install.sh): then a missing binary fails the test instead.
package opencode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/npmbin"
)

// Environment variables read by Bin.
const (
	// BinEnv names an opencode binary to use instead of the npm-installed one.
	BinEnv = "HEIRLOOM_OPENCODE_BIN"
	// RequireEnv, when set to anything but "" or "0", turns a missing binary
	// into a test failure rather than a skip.
	RequireEnv = npmbin.RequireEnv
)

var versions sync.Map // binary path -> version string, checked once per test binary

// Bin returns the path of the OpenCode binary: $HEIRLOOM_OPENCODE_BIN when
// set, else e2e/npm/node_modules/.bin/opencode under the module root. When
// the binary is absent, or is still the placeholder npm installs before the
// package's postinstall has linked the native binary, it skips tb with
// "opencode not installed: run e2e/npm/install.sh" (or fails it, when
// HEIRLOOM_E2E_REQUIRE is set). It logs the version the first time it sees
// a path.
func Bin(tb testing.TB) string {
	tb.Helper()
	path, err := npmbin.Find(BinEnv, "opencode")
	if err == nil {
		err = checkVersion(tb, path)
	}
	if err != nil {
		npmbin.Missing(tb, "opencode", err)
	}
	return path
}

// checkVersion runs `opencode --version` once per path, with a throwaway
// HOME (any opencode run creates its config, cache and data dirs there).
func checkVersion(tb testing.TB, path string) error {
	tb.Helper()
	if _, ok := versions.Load(path); ok {
		return nil
	}
	home, err := os.MkdirTemp("", "ocv")
	if err != nil {
		return fmt.Errorf("create temp dir: %w", err)
	}
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + home}
	out, err := cmd.Output()
	if err != nil {
		// The placeholder prints why on stderr ("postinstall script was not run").
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && len(exitErr.Stderr) > 0 {
			return fmt.Errorf("%s --version: %v: %s", path, err, firstLine(string(exitErr.Stderr)))
		}
		return fmt.Errorf("%s --version: %w", path, err)
	}
	v := strings.TrimSpace(string(out))
	versions.Store(path, v)
	tb.Logf("opencode %s (%s)", v, path)
	return nil
}

// firstLine returns the first non-blank line of s.
func firstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}
