package hookshim

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
)

// DefaultURL is where the shim looks for the sidecar when HEIRLOOM_URL is unset: `heirloom
// serve`'s default listen address.
const DefaultURL = adapters.DefaultSidecarURL

// Main runs one hook process and returns its exit code: 0, or 2 when a wrapped command blocked
// (exited 2). prog is how the user invokes the shim ("heirloom hook" or "heirloom-hook"), for the
// usage line. args are what follows it: the harness name, then optionally "--" and the hook
// command to wrap, its name then its arguments (see Shim.Run for how the replies combine). env
// holds "KEY=VALUE" pairs: the shim's settings are read from it (see the package doc), and a
// wrapped command runs with all of it.
//
// Main reads no config file and never blocks the harness: misuse (no harness, a name that is not
// lowercase letters, digits and hyphens, "--" without a command) prints the empty reply {} and a
// usage line on stderr and returns 0, and so does every failure to reach the sidecar. Any
// well-formed harness name is relayed; the sidecar answers 404 for one it does not serve, which
// the shim reports as a warning naming the harness.
func Main(ctx context.Context, prog string, args, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || !adapters.ValidName(args[0]) {
		fmt.Fprintf(stderr, "heirloom: usage: %s claude-code [-- CMD ARGS…] | codex (hook JSON on stdin); replying {}\n", prog)
		fmt.Fprintln(stdout, emptyReply)
		return 0
	}
	harness := args[0]
	shim := &Shim{
		URL:     lookup(env, "HEIRLOOM_URL", DefaultURL),
		Timeout: envDuration(env, "HEIRLOOM_HOOK_TIMEOUT", DefaultTimeout, stderr),
		Token:   lookup(env, "HEIRLOOM_TOKEN", ""),
		Stdin:   stdin,
		Stdout:  stdout,
		Stderr:  stderr,
	}
	if len(args) > 1 && args[1] == "--" {
		if len(args) == 2 {
			fmt.Fprintf(stderr, "heirloom: usage: %s %s -- CMD [ARGS…]: no command after --; replying {}\n", prog, harness)
			fmt.Fprintln(stdout, emptyReply)
			return 0
		}
		if harness != "claude-code" {
			// Proxy mode merges replies by Claude Code's rules; a harness that runs several
			// hooks per event itself (Codex) needs none.
			fmt.Fprintf(stderr, "heirloom: %s %s -- CMD: wrapping a hook command is for claude-code only (%s runs several hooks per event itself: give it your command as a hook of its own); replying {}\n", prog, harness, harness)
			fmt.Fprintln(stdout, emptyReply)
			return 0
		}
		shim.Command = args[2:]
		shim.Env = env
		shim.CommandTimeout = envDuration(env, "HEIRLOOM_UPSTREAM_TIMEOUT", DefaultCommandTimeout, stderr)
		shim.MaxContextChars = maxContextChars(env, stderr)
	}
	return shim.Run(ctx, harness)
}

// envDuration reads the variable key of env: a Go duration ("1500ms", "2s") or whole
// milliseconds. Unset or invalid means def (invalid also warns).
func envDuration(env []string, key string, def time.Duration, stderr io.Writer) time.Duration {
	v := lookup(env, key, "")
	if v == "" {
		return def
	}
	if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d
	}
	fmt.Fprintf(stderr, "heirloom: %s=%q is not a duration; using %s\n", key, v, def)
	return def
}

// maxContextChars reads HEIRLOOM_MAX_CONTEXT_CHARS, the cap of a merged additionalContext:
// within adapters.MaxContextCharsMin..MaxContextCharsMax, like
// adapters.claude_code.max_context_chars. Unset or invalid means
// claudecode.DefaultMaxContextChars (invalid also warns).
func maxContextChars(env []string, stderr io.Writer) int {
	const def = claudecode.DefaultMaxContextChars
	v := lookup(env, "HEIRLOOM_MAX_CONTEXT_CHARS", "")
	if v == "" {
		return def
	}
	if n, err := strconv.Atoi(v); err == nil && n >= adapters.MaxContextCharsMin && n <= adapters.MaxContextCharsMax {
		return n
	}
	fmt.Fprintf(stderr, "heirloom: HEIRLOOM_MAX_CONTEXT_CHARS=%q is not a number in %d..%d; using %d\n", v, adapters.MaxContextCharsMin, adapters.MaxContextCharsMax, def)
	return def
}

// lookup returns the value of key in env ("KEY=VALUE" pairs; the last one counts), or def when
// unset or empty.
func lookup(env []string, key, def string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok && v != "" {
			return v
		}
	}
	return def
}
