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

// HookCommand is `heirloom hook <harness>`: the command-hook shim. It reads no config file, so a
// hook costs one process start and one loopback request. Its exit code is always 0.
type HookCommand struct {
	Env    []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// hookHarnesses are the harnesses whose hooks the shim relays: those with a /hooks/<name>
// endpoint. Codex joins when its adapter does.
var hookHarnesses = map[string]bool{"claude-code": true}

// Run relays one hook call. Misuse still prints the empty reply, since a hook must never block.
func (c *HookCommand) Run(ctx context.Context, args []string) int {
	if len(args) == 0 || !hookHarnesses[args[0]] {
		fmt.Fprintln(c.Stderr, "heirloom: usage: heirloom hook claude-code (hook JSON on stdin); replying {}")
		fmt.Fprintln(c.Stdout, "{}")
		return 0
	}
	shim := &proxy.Shim{
		URL:     lookup(c.Env, "HEIRLOOM_URL", "http://127.0.0.1:7433"),
		Timeout: hookTimeout(c.Env, c.Stderr),
		Token:   lookup(c.Env, "HEIRLOOM_TOKEN", ""),
		Stdin:   c.Stdin,
		Stdout:  c.Stdout,
		Stderr:  c.Stderr,
	}
	_ = shim.Run(ctx, args[0])
	return 0
}

// hookTimeout reads HEIRLOOM_HOOK_TIMEOUT: a Go duration ("1500ms", "2s") or whole milliseconds.
// Unset or invalid means 1500ms (invalid also warns).
func hookTimeout(env []string, stderr io.Writer) time.Duration {
	const def = 1500 * time.Millisecond
	v := lookup(env, "HEIRLOOM_HOOK_TIMEOUT", "")
	if v == "" {
		return def
	}
	if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d
	}
	fmt.Fprintf(stderr, "heirloom: HEIRLOOM_HOOK_TIMEOUT=%q is not a duration; using %s\n", v, def)
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
