// Package claude runs the real Claude Code binary (`claude -p`) offline in
// tests: a private HOME holding the test's settings.json (hooks go there),
// the model API pointed at a loopback stand-in (package messagesapi), and
// any other outbound HTTP(S) request sent to that stand-in as a proxy, where
// it is logged and refused (see Env).
//
// The binary is the one e2e/npm/install.sh installs at the version pinned in
// e2e/npm/package-lock.json. Tests that need it call Bin, which skips them
// when it is absent, unless HEIRLOOM_E2E_REQUIRE is set (CI sets it after
// running install.sh): then a missing binary fails the test instead.
package claude

import (
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/npmbin"
)

// Environment variables read by Bin.
const (
	// BinEnv names a claude binary to use instead of the npm-installed one.
	BinEnv = "HEIRLOOM_CLAUDE_BIN"
	// RequireEnv, when set to anything but "" or "0", turns a missing binary
	// into a test failure rather than a skip.
	RequireEnv = npmbin.RequireEnv
)

// Bin returns the path of the Claude Code binary: $HEIRLOOM_CLAUDE_BIN when
// set, else e2e/npm/node_modules/.bin/claude under the module root. When the
// binary is absent, or `claude --version` fails, it skips tb with "claude
// not installed: run e2e/npm/install.sh" (or fails it, when
// HEIRLOOM_E2E_REQUIRE is set). It logs the binary's version the first time
// it sees a path.
func Bin(tb testing.TB) string {
	tb.Helper()
	return npmbin.Bin(tb, BinEnv, "claude", nil)
}
