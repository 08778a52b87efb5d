package openclaw

import (
	"context"
	"flag"
	"fmt"

	"github.com/heirloom-dev/heirloom/adapters"
)

// Installer is `heirloom install openclaw`: heirloom's plugin where OpenClaw discovers it,
// enabled in OpenClaw's config, found as OpenClaw finds it (OPENCLAW_CONFIG_PATH,
// OPENCLAW_STATE_DIR, ~/.openclaw).
type Installer struct{}

var _ adapters.Installer = Installer{}

// Usage is the synopsis of `heirloom install openclaw`.
func (Installer) Usage() string { return "openclaw [--url URL] [--dry-run]" }

// Install parses args and installs the plugin (see Install); it says what it did on env.Stdout.
func (Installer) Install(_ context.Context, args []string, env adapters.InstallEnv) error {
	var sidecar string
	dryRun, err := env.ParseFlags("install openclaw", args, "print the change (the config as a diff); change nothing", func(fs *flag.FlagSet) {
		fs.StringVar(&sidecar, "url", "", "the sidecar URL the plugin calls (default: $HEIRLOOM_URL, else "+DefaultSidecarURL+")")
	})
	if err != nil {
		return err
	}
	if sidecar == "" {
		sidecar = env.Getenv("HEIRLOOM_URL")
	}
	// Install says what it did (or would do) on Out.
	res, err := Install(InstallOptions{URL: sidecar, Token: env.Getenv("HEIRLOOM_TOKEN"), DryRun: dryRun, Out: env.Stdout})
	if err != nil {
		return fmt.Errorf("install openclaw: %w", err)
	}
	if !res.DryRun && (res.PluginAction != InstallUnchanged || res.ConfigAction != InstallUnchanged) {
		fmt.Fprintln(env.Stdout, "Restart the OpenClaw Gateway to load it (openclaw gateway restart), and start the sidecar with `heirloom serve`; the plugin fails open while the sidecar is down.")
	}
	if !res.DryRun {
		fmt.Fprint(env.Stdout, followHint)
	}
	return nil
}

// followHint is the step install cannot take for the user: heirloom's own config.
const followHint = `So heirloom also follows the Gateway (sessions, parents, transcripts, runs), give it the
Gateway's address and token, in ~/.config/heirloom/config.yaml:
  adapters:
    openclaw:
      url: ws://127.0.0.1:18789
or in heirloom serve's environment: HEIRLOOM_ADAPTERS__OPENCLAW__URL=ws://127.0.0.1:18789, with
OPENCLAW_GATEWAY_TOKEN set to the Gateway's token (gateway.auth.token in openclaw.json).
`
