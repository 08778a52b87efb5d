package main

import (
	"context"
	"io"
	"strings"

	"github.com/heirloom-dev/heirloom/hookshim"
)

// HookCommand is `heirloom hook <harness> [-- CMD ARGS…]`: the command-hook shim, the same
// process as the light `heirloom-hook` binary (package hookshim). It reads no config file, so a
// hook costs one process start and one loopback request. Its exit code is 0, or 2 when a
// wrapped command blocked (exited 2).
type HookCommand struct {
	Env    []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Run relays one hook call; after "--" it also wraps an existing hook command (hookshim.Main says
// how). Misuse still prints the empty reply, since a hook must never block.
func (c *HookCommand) Run(ctx context.Context, args []string) int {
	return hookshim.Main(ctx, "heirloom hook", args, c.Env, c.Stdin, c.Stdout, c.Stderr)
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
