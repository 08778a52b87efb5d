package opencode

import (
	"context"
	"flag"
	"fmt"

	"github.com/heirloom-dev/heirloom/adapters"
)

// Installer is `heirloom install opencode`: heirloom's plugin where OpenCode loads it.
type Installer struct{}

var _ adapters.Installer = Installer{}

// Usage is the synopsis of `heirloom install opencode`.
func (Installer) Usage() string { return "opencode [--project DIR] [--dry-run]" }

// Install parses args and writes the plugin (see Install); it says what it did on env.Stdout.
func (Installer) Install(_ context.Context, args []string, env adapters.InstallEnv) error {
	var project string
	dryRun, err := env.ParseFlags("install opencode", args, "print the change as a diff; change nothing", func(fs *flag.FlagSet) {
		fs.StringVar(&project, "project", "", "install into DIR/.opencode/plugin/ (default: OpenCode's global plugin dir, ~/.config/opencode/plugin/)")
	})
	if err != nil {
		return err
	}
	// Install says what it did (or would do) on Out.
	res, err := Install(InstallOptions{Project: project, DryRun: dryRun, Out: env.Stdout})
	if err != nil {
		return err
	}
	if !res.DryRun && res.Action != InstallUnchanged {
		fmt.Fprintln(env.Stdout, "Restart OpenCode to load it, and point heirloom at the server: adapters.opencode.servers in config.yaml, or HEIRLOOM_ADAPTERS__OPENCODE__SERVERS=http://127.0.0.1:4096.")
	}
	return nil
}
