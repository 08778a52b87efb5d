package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/proxy"
)

// HookCommand is `heirloom hook <harness> [-- CMD ARGS…]`: the command-hook shim. It reads no
// config file, so a hook costs one process start and one loopback request. Its exit code is 0,
// or 2 when a wrapped command blocked (exited 2).
type HookCommand struct {
	Env    []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// hookHarnesses are the harnesses whose hooks the shim relays: those with a /hooks/<name>
// endpoint. Codex joins when its adapter does.
var hookHarnesses = map[string]bool{"claude-code": true}

// Run relays one hook call; after "--" it also wraps an existing hook command (proxy.Shim.Run
// says how the replies combine). Misuse still prints the empty reply, since a hook must never
// block.
func (c *HookCommand) Run(ctx context.Context, args []string) int {
	if len(args) == 0 || !hookHarnesses[args[0]] {
		fmt.Fprintln(c.Stderr, "heirloom: usage: heirloom hook claude-code [-- CMD ARGS…] (hook JSON on stdin); replying {}")
		fmt.Fprintln(c.Stdout, "{}")
		return 0
	}
	shim := &proxy.Shim{
		URL:     lookup(c.Env, "HEIRLOOM_URL", "http://127.0.0.1:7433"),
		Timeout: envDuration(c.Env, "HEIRLOOM_HOOK_TIMEOUT", 1500*time.Millisecond, c.Stderr),
		Token:   lookup(c.Env, "HEIRLOOM_TOKEN", ""),
		Stdin:   c.Stdin,
		Stdout:  c.Stdout,
		Stderr:  c.Stderr,
	}
	if len(args) > 1 && args[1] == "--" {
		if len(args) == 2 {
			fmt.Fprintln(c.Stderr, "heirloom: usage: heirloom hook claude-code -- CMD [ARGS…]: no command after --; replying {}")
			fmt.Fprintln(c.Stdout, "{}")
			return 0
		}
		shim.Command = args[2:]
		shim.Env = c.Env
		shim.CommandTimeout = envDuration(c.Env, "HEIRLOOM_UPSTREAM_TIMEOUT", 30*time.Second, c.Stderr)
		shim.MaxContextChars = maxContextChars(c.Env, c.Stderr)
	}
	return shim.Run(ctx, args[0])
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
// 500..10000 like adapters.claude_code.max_context_chars. Unset or invalid means 9500 (invalid
// also warns).
func maxContextChars(env []string, stderr io.Writer) int {
	const def = 9500
	v := lookup(env, "HEIRLOOM_MAX_CONTEXT_CHARS", "")
	if v == "" {
		return def
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 500 && n <= 10000 {
		return n
	}
	fmt.Fprintf(stderr, "heirloom: HEIRLOOM_MAX_CONTEXT_CHARS=%q is not a number in 500..10000; using %d\n", v, def)
	return def
}

// lookup returns the value of key in env ("KEY=VALUE" pairs), or def when unset or empty.
func lookup(env []string, key, def string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok && v != "" {
			return v
		}
	}
	return def
}
