package npmbin

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
)

// VersionTimeout bounds one run of Version: a first run reads a large
// binary, or loads a large JavaScript bundle, on a loaded machine.
const VersionTimeout = time.Minute

var versions sync.Map // command line -> version, asked once per test binary

// Bin returns the path of the executable that Find finds for envVar and
// name, once `<path> --version` has answered (Version, with env). When the
// executable is missing, or its version check fails (such as npm's
// placeholder for a binary whose postinstall did not run), it ends tb
// through Missing: a skip, or a failure when RequireEnv is set.
func Bin(tb testing.TB, envVar, name string, env func(dir string) []string) string {
	tb.Helper()
	path, err := Find(envVar, name)
	if err == nil {
		_, err = Version(tb, []string{path, "--version"}, env)
	}
	if err != nil {
		Missing(tb, name, err)
	}
	return path
}

// Version runs the command line args (an executable, then its flags, such as
// "--version") and returns its output, trimmed. It runs it once per test
// binary: later calls with the same args return the first answer, and only
// the first logs it to tb. env, when not nil, returns the command's
// environment given a throwaway directory (for HOME and TMPDIR: harnesses
// write their config and cache there), which is removed afterwards; nil
// inherits the test's environment. A failure, such as npm's placeholder for
// a binary whose postinstall did not run or an unsupported node, comes back
// with the first line of the command's stderr.
func Version(tb testing.TB, args []string, env func(dir string) []string) (string, error) {
	tb.Helper()
	key := strings.Join(args, " ")
	if v, ok := versions.Load(key); ok {
		return v.(string), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), VersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	if env != nil {
		dir, err := os.MkdirTemp("", "npmbin")
		if err != nil {
			return "", fmt.Errorf("create temp dir: %w", err)
		}
		defer os.RemoveAll(dir)
		cmd.Env = env(dir)
	}
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && len(exitErr.Stderr) > 0 {
			return "", fmt.Errorf("%s: %v: %s", key, err, firstLine(string(exitErr.Stderr)))
		}
		return "", fmt.Errorf("%s: %w", key, err)
	}
	v := strings.TrimSpace(string(out))
	if _, loaded := versions.LoadOrStore(key, v); !loaded {
		tb.Logf("%s: %s", key, v)
	}
	return v, nil
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
