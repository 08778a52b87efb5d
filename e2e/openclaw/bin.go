// Package openclaw runs the real OpenClaw Gateway (`openclaw gateway run`)
// offline in tests: a private HOME, TMPDIR and state directory, a config whose
// only model provider is a loopback stand-in for an OpenAI-compatible chat
// completions API (package chatapi), token auth, no update checks, no remote
// catalogs, no channels, and any other outbound HTTP(S) request sent to that
// stand-in as a proxy, where it is logged and refused (see Env). A Client
// speaks the Gateway's WebSocket protocol as an operator: it sends prompts,
// compacts sessions, and records every frame it sees.
//
// OpenClaw needs Node >= 24.16. The binaries are the ones e2e/npm/install.sh
// installs at the versions pinned in e2e/npm/openclaw/package-lock.json and
// e2e/npm/node24/package-lock.json; the Gateway runs with that node first on
// PATH. Tests that need them call Bin, which skips them when they are absent,
// unless HEIRLOOM_E2E_REQUIRE is set (CI sets it after running install.sh):
// then a missing binary fails the test instead.
package openclaw

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/npmbin"
)

// Environment variables read by Bin.
const (
	// BinEnv names an openclaw entry point (openclaw.mjs, or the .bin link to
	// it) to use instead of the npm-installed one.
	BinEnv = "HEIRLOOM_OPENCLAW_BIN"
	// NodeEnv names the node binary (>= 24.16) to run it with instead of the
	// npm-installed one.
	NodeEnv = "HEIRLOOM_OPENCLAW_NODE"
	// RequireEnv, when set to anything but "" or "0", turns a missing binary
	// into a test failure rather than a skip.
	RequireEnv = npmbin.RequireEnv
)

// Binary is an OpenClaw entry point and the node that runs it.
type Binary struct {
	// OpenClaw is the absolute path of openclaw.mjs (or a link to it).
	OpenClaw string
	// Node is the absolute path of a node >= 24.16.
	Node string
}

// Command returns a command running `node openclaw args...`. The caller sets
// its environment: see Env, which puts Node's directory first on PATH, as
// OpenClaw starts helper processes with the node it finds there.
func (b Binary) Command(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, b.Node, append([]string{b.OpenClaw}, args...)...)
}

// Bin returns the OpenClaw entry point and its node: $HEIRLOOM_OPENCLAW_BIN
// and $HEIRLOOM_OPENCLAW_NODE when set, else
// e2e/npm/openclaw/node_modules/.bin/openclaw and
// e2e/npm/node24/node_modules/.bin/node under the module root. When either is
// absent, or `openclaw --version` fails with that node, it skips tb with
// "openclaw not installed: run e2e/npm/install.sh" (or fails it, when
// HEIRLOOM_E2E_REQUIRE is set). It logs the version the first time it sees a
// pair.
func Bin(tb testing.TB) Binary {
	tb.Helper()
	var b Binary
	var err error
	if b.OpenClaw, err = npmbin.FindIn(BinEnv, "openclaw", "openclaw"); err == nil {
		if b.Node, err = npmbin.FindIn(NodeEnv, "node24", "node"); err == nil {
			err = checkVersion(tb, b)
		}
	}
	if err != nil {
		npmbin.Missing(tb, "openclaw", err)
	}
	return b
}

// checkVersion runs `openclaw --version` with b's node, a throwaway HOME,
// TMPDIR and state dir. An unsupported node, or an incomplete install, says
// why on stderr.
func checkVersion(tb testing.TB, b Binary) error {
	tb.Helper()
	_, err := npmbin.Version(tb, []string{b.Node, b.OpenClaw, "--version"}, func(home string) []string {
		return []string{
			"HOME=" + home, "TMPDIR=" + home, "PATH=" + nodePath(b.Node),
			"OPENCLAW_STATE_DIR=" + filepath.Join(home, "state"), "OPENCLAW_NO_AUTO_UPDATE=1",
		}
	})
	return err
}

// nodePath returns $PATH with node's directory first.
func nodePath(node string) string {
	return filepath.Dir(node) + string(os.PathListSeparator) + os.Getenv("PATH")
}
