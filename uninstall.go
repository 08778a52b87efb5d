package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
)

// UninstallCommand is `heirloom uninstall <harness>`: it removes exactly what `heirloom install`
// added to the harness's configuration, keeping everything else and a backup of every file it
// changes; a file nobody changed since the install is given back byte for byte.
type UninstallCommand struct {
	Stdout io.Writer
	Stderr io.Writer
}

// Run uninstalls from the harness named by args[0].
func (c *UninstallCommand) Run(ctx context.Context, args []string) error {
	reg := harnesses()
	if len(args) == 0 {
		fmt.Fprintln(c.Stderr, uninstallUsage(reg))
		return errUsage
	}
	if adapters.WantsHelp(args[:1]) || args[0] == "help" {
		fmt.Fprintln(c.Stdout, uninstallUsage(reg)+"\n\nRemoves what 'heirloom install' added (hooks, plugin, MCP entry), keeping everything else\nand a backup of each file it changes. Run 'heirloom uninstall HARNESS -h' for its flags.")
		return errHelp
	}
	if args[0] == "service" {
		return uninstallService(args[1:], c.Stdout, c.Stderr)
	}
	h, ok := reg.Get(args[0])
	u, can := h.Installer.(adapters.Uninstaller)
	if !ok || !can {
		fmt.Fprintf(c.Stderr, "heirloom uninstall: unknown harness %q\n%s\n", args[0], uninstallUsage(reg))
		return errUsage
	}
	err := u.Uninstall(ctx, args[1:], adapters.InstallEnv{Getenv: os.Getenv, Stdout: c.Stdout, Stderr: c.Stderr})
	switch {
	case errors.Is(err, adapters.ErrUsage):
		return errUsage
	case errors.Is(err, adapters.ErrHelp):
		return errHelp
	}
	return err
}

// uninstallUsage lists what `uninstall` can take out, one line per harness.
func uninstallUsage(reg *adapters.Registry) string {
	var lines []string
	for _, h := range reg.All() {
		if u, ok := h.Installer.(adapters.Uninstaller); ok {
			lines = append(lines, "heirloom uninstall "+u.UninstallUsage())
		}
	}
	lines = append(lines, "heirloom uninstall service [--dry-run]")
	return "usage: " + strings.Join(lines, "\n       ")
}
