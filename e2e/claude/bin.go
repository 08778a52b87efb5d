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
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Environment variables read by Bin.
const (
	// BinEnv names a claude binary to use instead of the npm-installed one.
	BinEnv = "HEIRLOOM_CLAUDE_BIN"
	// RequireEnv, when set to anything but "" or "0", turns a missing binary
	// into a test failure rather than a skip.
	RequireEnv = "HEIRLOOM_E2E_REQUIRE"
)

// installedBin is where e2e/npm/install.sh puts the binary, relative to the
// module root.
const installedBin = "e2e/npm/node_modules/.bin/claude"

var versions sync.Map // binary path -> version string, logged once per test binary

// Bin returns the path of the Claude Code binary: $HEIRLOOM_CLAUDE_BIN when
// set, else e2e/npm/node_modules/.bin/claude under the module root. When the
// binary is absent it skips tb with "claude not installed: run
// e2e/npm/install.sh" (or fails it, when HEIRLOOM_E2E_REQUIRE is set). It
// logs the binary's version the first time it sees a path.
func Bin(tb testing.TB) string {
	tb.Helper()
	path, err := findBin()
	if err != nil {
		msg := fmt.Sprintf("claude not installed: run e2e/npm/install.sh (%v)", err)
		if v := os.Getenv(RequireEnv); v != "" && v != "0" {
			tb.Fatalf("%s; %s is set", msg, RequireEnv)
		}
		tb.Skip(msg)
	}
	if _, ok := versions.Load(path); ok {
		return path
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		tb.Fatalf("run %s --version: %v", path, err)
	}
	v := strings.TrimSpace(string(out))
	versions.Store(path, v)
	tb.Logf("claude %s (%s)", v, path)
	return path
}

// findBin resolves the binary's path without touching the test.
func findBin() (string, error) {
	if p := os.Getenv(BinEnv); p != "" {
		return checkExecutable(p)
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return checkExecutable(filepath.Join(root, filepath.FromSlash(installedBin)))
}

// checkExecutable returns p, absolute, when it is an executable regular file.
func checkExecutable(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", p, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", abs)
	}
	return abs, nil
}

// moduleRoot walks up from the working directory (a package directory under
// go test) to the directory holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("get working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("look for go.mod: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
