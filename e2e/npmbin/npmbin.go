// Package npmbin finds the harness binaries that e2e/npm/install.sh installs from npm, for the
// live tests: one lookup rule and one skip-or-fail rule for every harness.
package npmbin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// RequireEnv, when set to anything but "" or "0", turns a missing binary into a test failure
// rather than a skip. CI sets it after running install.sh.
const RequireEnv = "HEIRLOOM_E2E_REQUIRE"

// Find returns the absolute path of the executable named by the environment variable envVar
// when it is set, else of e2e/npm/node_modules/.bin/<name> under the module root. It returns an
// error when that file is missing or not an executable regular file.
func Find(envVar, name string) (string, error) {
	if p := os.Getenv(envVar); p != "" {
		return checkExecutable(p)
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return checkExecutable(filepath.Join(root, "e2e", "npm", "node_modules", ".bin", name))
}

// FindIn is Find for a package installed in a folder of its own under e2e/npm (OpenClaw and the
// Node.js it runs on): it returns the absolute path of the executable named by envVar when that
// is set, else of e2e/npm/<dir>/node_modules/.bin/<name> under the module root.
func FindIn(envVar, dir, name string) (string, error) {
	if p := os.Getenv(envVar); p != "" {
		return checkExecutable(p)
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return checkExecutable(filepath.Join(root, "e2e", "npm", dir, "node_modules", ".bin", name))
}

// Missing ends tb because the binary name could not be used (err says why): a skip with
// "<name> not installed: run e2e/npm/install.sh", or a failure when RequireEnv is set.
func Missing(tb testing.TB, name string, err error) {
	tb.Helper()
	msg := fmt.Sprintf("%s not installed: run e2e/npm/install.sh (%v)", name, err)
	if v := os.Getenv(RequireEnv); v != "" && v != "0" {
		tb.Fatalf("%s; %s is set", msg, RequireEnv)
	}
	tb.Skip(msg)
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

// moduleRoot walks up from the working directory (a package directory under go test) to the
// directory holding go.mod.
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
