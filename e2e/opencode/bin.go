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
	"os"
	"testing"

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

// Bin returns the path of the OpenCode binary: $HEIRLOOM_OPENCODE_BIN when
// set, else e2e/npm/node_modules/.bin/opencode under the module root. When
// the binary is absent, or is still the placeholder npm installs before the
// package's postinstall has linked the native binary, it skips tb with
// "opencode not installed: run e2e/npm/install.sh" (or fails it, when
// HEIRLOOM_E2E_REQUIRE is set). It logs the version the first time it sees
// a path.
func Bin(tb testing.TB) string {
	tb.Helper()
	// Any opencode run creates its config, cache and data dirs in HOME.
	return npmbin.Bin(tb, BinEnv, "opencode", func(home string) []string {
		return []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + home}
	})
}
