// Command heirloom-hook is heirloom's command-hook shim on its own: the same process as
// `heirloom hook`, in a binary that links only the standard library and the hook's own packages
// (no store, server, metrics or config), so each hook starts in a few milliseconds less.
//
//	heirloom-hook claude-code [-- CMD ARGS…]   hook JSON on stdin, the reply on stdout
//
// Install it beside heirloom:
//
//	go install github.com/heirloom-dev/heirloom/cmd/heirloom-hook@latest
//
// It accepts any harness name the sidecar might serve; package hookshim documents its settings.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/heirloom-dev/heirloom/hookshim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := hookshim.Main(ctx, "heirloom-hook", os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
