package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
)

// InstallCommand is `heirloom install <harness>`: it writes the harness configuration that
// points the harness at heirloom, idempotently, keeping the user's other settings and a backup.
// Each harness's installer (its adapter's Registration) parses its own flags.
type InstallCommand struct {
	Stdout io.Writer
	Stderr io.Writer
}

// Run installs for the harness named by args[0].
func (c *InstallCommand) Run(ctx context.Context, args []string) error {
	reg := harnesses()
	if len(args) == 0 {
		fmt.Fprintln(c.Stderr, installUsage(reg))
		return errUsage
	}
	if adapters.WantsHelp(args[:1]) || args[0] == "help" {
		fmt.Fprintln(c.Stdout, installUsage(reg)+"\n       heirloom install service [--dry-run]\n\nRun 'heirloom install HARNESS -h' for a harness's flags.")
		return errHelp
	}
	if args[0] == "service" {
		return installService(args[1:], c.Stdout, c.Stderr)
	}
	h, ok := reg.Get(args[0])
	if !ok || h.Installer == nil {
		fmt.Fprintf(c.Stderr, "heirloom install: unknown harness %q\n%s\n", args[0], installUsage(reg))
		return errUsage
	}
	err := h.Installer.Install(ctx, args[1:], adapters.InstallEnv{
		HookCommand: hookCommand(),
		Getenv:      os.Getenv,
		Stdout:      c.Stdout,
		Stderr:      c.Stderr,
	})
	switch {
	case errors.Is(err, adapters.ErrUsage):
		return errUsage
	case errors.Is(err, adapters.ErrHelp):
		return errHelp
	}
	return err
}

// installUsage lists what `install` can set up, one line per harness with an installer.
func installUsage(reg *adapters.Registry) string {
	var b strings.Builder
	for _, h := range reg.All() {
		if h.Installer == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("usage: heirloom install ")
		} else {
			b.WriteString("\n       heirloom install ")
		}
		b.WriteString(h.Installer.Usage())
	}
	return b.String()
}

// hookCommand is how a command hook runs heirloom's hook process, before the harness name: the
// light heirloom-hook binary when it sits beside this one (go install puts both in one
// directory), else this binary's `hook` subcommand, which does the same at about twice the
// process start.
func hookCommand() string {
	self := selfCommand()
	if self != "heirloom" {
		light := filepath.Join(filepath.Dir(self), "heirloom-hook")
		if fi, err := os.Stat(light); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && !strings.ContainsAny(light, " \t\"'") {
			return light
		}
	}
	return self + " hook"
}

// selfCommand is how a hook should run this binary: its absolute path, unless it is a temporary
// build (go run), in which case the plain name from PATH.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil || strings.Contains(exe, "go-build") || strings.ContainsAny(exe, " \t\"'") {
		return "heirloom"
	}
	return exe
}
