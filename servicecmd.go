package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/service"
)

// serviceManager is this platform's service manager for this user.
func serviceManager() (service.Manager, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return service.Manager{}, fmt.Errorf("no home directory: %w", err)
	}
	return service.For(runtime.GOOS, home, os.Getenv("XDG_CONFIG_HOME"), os.Getuid())
}

// installService is `heirloom install service`: it writes the user service that runs `heirloom
// serve` at login (a systemd user unit, a launchd agent), restarted on failure, and enables and
// starts it; --dry-run prints the file and the commands instead.
func installService(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("heirloom install service", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: heirloom install service [--dry-run] [--binary PATH]\n\nRuns `heirloom serve` at login under the platform's service manager: a systemd user unit\n(~/.config/systemd/user/heirloom.service, logs in the journal) on Linux, a launchd agent\n(~/Library/LaunchAgents/dev.heirloom.sidecar.plist, logs in ~/Library/Logs/heirloom.log) on\nmacOS; restarted when it fails. It reads the same configuration as `heirloom serve`.\n\nFlags:")
		fs.PrintDefaults()
	}
	dryRun := fs.Bool("dry-run", false, "print the service file and the commands; change nothing")
	binary := fs.String("binary", "", "the heirloom binary the service runs (default: this one)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	m, err := serviceManager()
	if err != nil {
		return err
	}
	bin := *binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil || strings.Contains(bin, "go-build") {
			return errors.New("install service: this heirloom is a temporary build (go run); install it first (go install . ./cmd/heirloom-hook), or give --binary")
		}
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	if why := service.Unquotable(bin); why != "" {
		return fmt.Errorf("install service: %s: %s; move heirloom, or give --binary", bin, why)
	}
	content := m.File(service.Spec{Binary: bin, Args: []string{"serve"}})
	if *dryRun {
		fmt.Fprintf(stdout, "Would write %s (%s):\n%s\nand run:\n", m.Path, m.Kind, content)
		for _, c := range m.Enable {
			fmt.Fprintf(stdout, "  %s\n", strings.Join(c, " "))
		}
		return nil
	}
	old, err := os.ReadFile(m.Path)
	switch {
	case err == nil && bytes.Equal(old, content):
		fmt.Fprintf(stdout, "%s is already written\n", m.Path)
	case err == nil:
		backup := fmt.Sprintf("%s.bak-%s", m.Path, time.Now().UTC().Format("20060102T150405Z"))
		if err := os.WriteFile(backup, old, 0o644); err != nil {
			return fmt.Errorf("back up %s: %w", m.Path, err)
		}
		fmt.Fprintf(stdout, "kept the previous %s as %s\n", m.Path, backup)
		fallthrough
	case errors.Is(err, iofs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(m.Path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(m.Path, content, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", m.Path, err)
		}
		fmt.Fprintf(stdout, "wrote %s (%s): it runs %s serve\n", m.Path, m.Kind, bin)
	default:
		return fmt.Errorf("read %s: %w", m.Path, err)
	}
	for _, c := range m.Unload {
		_ = exec.Command(c[0], c[1:]...).Run() // none loaded is fine
	}
	if err := runAll(m.Enable, stdout); err != nil {
		hint := ""
		if m.Kind == "systemd --user" {
			hint = " (no user session bus, as over ssh or in a container? `loginctl enable-linger $USER` gives one)"
		}
		return fmt.Errorf("the service file is written, but enabling it failed%s: %w\nrun yourself: %s", hint, err, commandsText(m.Enable))
	}
	fmt.Fprintf(stdout, "heirloom now runs at login and is starting; its log: %s\n", m.Logs)
	return nil
}

// uninstallService is `heirloom uninstall service`: it stops and disables the user service and
// removes its file (a copy is kept).
func uninstallService(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("heirloom uninstall service", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: heirloom uninstall service [--dry-run]\n\nStops the user service `heirloom install service` set up, disables it and removes its file\n(a copy is kept beside it).\n\nFlags:")
		fs.PrintDefaults()
	}
	dryRun := fs.Bool("dry-run", false, "print the commands and the file to remove; change nothing")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	m, err := serviceManager()
	if err != nil {
		return err
	}
	old, err := os.ReadFile(m.Path)
	if errors.Is(err, iofs.ErrNotExist) {
		fmt.Fprintf(stdout, "no service file at %s: nothing to do\n", m.Path)
		return nil
	}
	if err != nil {
		return err
	}
	if *dryRun {
		fmt.Fprintf(stdout, "Would run %s, then remove %s", commandsText(m.Disable), m.Path)
		if len(m.Reload) > 0 {
			fmt.Fprintf(stdout, " and run %s", commandsText(m.Reload))
		}
		fmt.Fprintln(stdout)
		return nil
	}
	if err := runAll(m.Disable, stdout); err != nil {
		fmt.Fprintf(stderr, "warning: stopping the service failed (%v); removing its file all the same\n", err)
	}
	backup := fmt.Sprintf("%s.removed-%s", m.Path, time.Now().UTC().Format("20060102T150405Z"))
	if err := os.WriteFile(backup, old, 0o644); err != nil {
		return fmt.Errorf("keep a copy of %s: %w", m.Path, err)
	}
	if err := os.Remove(m.Path); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %s (a copy: %s)\n", m.Path, backup)
	if err := runAll(m.Reload, stdout); err != nil {
		fmt.Fprintf(stderr, "warning: %v\n", err)
	}
	return nil
}

// runAll runs each command, saying it on out, and stops at the first that fails.
func runAll(cmds [][]string, out io.Writer) error {
	for _, c := range cmds {
		fmt.Fprintf(out, "$ %s\n", strings.Join(c, " "))
		if b, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(c, " "), err, strings.TrimSpace(string(b)))
		}
	}
	return nil
}

// commandsText is cmds, one after the other.
func commandsText(cmds [][]string) string {
	var s []string
	for _, c := range cmds {
		s = append(s, strings.Join(c, " "))
	}
	return strings.Join(s, "; ")
}
