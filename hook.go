package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
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
// how). The harnesses it relays are those registered with hooks; misuse still prints the empty
// reply, since a hook must never block.
func (c *HookCommand) Run(ctx context.Context, args []string) int {
	if adapters.WantsHelp(args) { // before any "--": a wrapped command's own -h is its own
		fmt.Fprint(c.Stdout, hookUsage)
		return 0
	}
	if len(args) > 0 {
		if h, ok := harnesses().Get(args[0]); !ok || h.Hooks == nil {
			var names []string
			for _, h := range harnesses().All() {
				if h.Hooks != nil {
					names = append(names, h.Name)
				}
			}
			fmt.Fprintf(c.Stderr, "heirloom: no hooks of harness %q: heirloom hook takes %s [-- CMD ARGS…] (hook JSON on stdin); replying {}\n", args[0], strings.Join(names, " | "))
			fmt.Fprintln(c.Stdout, "{}")
			return 0
		}
	}
	return hookshim.Main(ctx, "heirloom hook", args, c.Env, c.Stdin, c.Stdout, c.Stderr)
}

// hookUsage is `heirloom hook`'s help.
const hookUsage = `Usage: heirloom hook claude-code               the command-hook shim: hook JSON on stdin, reply on stdout
       heirloom hook claude-code -- CMD ARGS…   the same in front of an existing hook command: its reply merged after heirloom's
       heirloom hook codex                     the same for Codex CLI (which runs several hooks per event: no -- CMD)

A harness runs this, not you: 'heirloom install claude-code' writes it into Claude Code's
settings, 'heirloom install codex' into Codex's config.toml. It reads HEIRLOOM_URL (default ` + "http://127.0.0.1:7433" + `), HEIRLOOM_TOKEN and
HEIRLOOM_HOOK_TIMEOUT, no config file, and always replies (an empty reply when the sidecar is
down), so a hook never blocks the harness.
`

// lookup returns the value of key in env ("KEY=VALUE" pairs), or def when unset or empty.
func lookup(env []string, key, def string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok && v != "" {
			return v
		}
	}
	return def
}
