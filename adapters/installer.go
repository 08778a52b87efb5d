package adapters

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// Installer writes a harness's configuration so that the harness reaches heirloom: the work of
// `heirloom install NAME`. It keeps the user's other settings and a backup, is idempotent, and
// shows the change without making it under --dry-run.
type Installer interface {
	// Usage is the synopsis after "heirloom install ", e.g. "claude-code [--project DIR] [--dry-run]".
	Usage() string
	// Install parses args, the command line after the harness name (its own flags), and
	// installs, saying on env.Stdout what it changed and what the user does next. Flags it
	// cannot parse return an error wrapping ErrUsage, after the flag set printed why.
	Install(ctx context.Context, args []string, env InstallEnv) error
}

// Uninstaller removes exactly what its Installer added, keeping everything else and a backup of
// each file it changes: the work of `heirloom uninstall NAME`. A file the install changed and
// nobody changed since is given back byte for byte; --dry-run shows the change without making
// it. Installers implement it.
type Uninstaller interface {
	// UninstallUsage is the synopsis after "heirloom uninstall ".
	UninstallUsage() string
	// Uninstall parses args as Install does and takes heirloom out, saying on env.Stdout what it
	// changed.
	Uninstall(ctx context.Context, args []string, env InstallEnv) error
}

// InstallEnv is what an Installer may use of the command that runs it.
type InstallEnv struct {
	// HookCommand is how a command hook runs heirloom's hook shim, before the harness name:
	// "/path/to/heirloom-hook" when the light hook binary sits beside heirloom, else
	// "/path/to/heirloom hook".
	HookCommand string
	// Getenv reads the environment (HEIRLOOM_URL, HEIRLOOM_TOKEN, the harness's own variables).
	Getenv func(key string) string
	Stdout io.Writer
	Stderr io.Writer
}

// ErrUsage reports a command line an Installer could not parse; the message is already printed.
var ErrUsage = errors.New("usage")

// ErrHelp reports that the command line asked for help (-h, --help), which is printed.
var ErrHelp = errors.New("help")

// WantsHelp reports whether args ask for help: -h, -help or --help before any "--".
func WantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// ParseFlags parses an installer's command line: the flags define declares, plus --dry-run
// (described by dryRunHelp), with errors written to env.Stderr. A flag it cannot parse, or an
// argument left over, returns ErrUsage; -h or --help prints the flags on env.Stdout and returns
// ErrHelp.
func (env InstallEnv) ParseFlags(name string, args []string, dryRunHelp string, define func(fs *flag.FlagSet)) (dryRun bool, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	define(fs)
	dry := fs.Bool("dry-run", false, dryRunHelp)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: heirloom %s [flags]\n\nFlags:\n", name)
		fs.PrintDefaults()
	}
	var said bytes.Buffer
	fs.SetOutput(&said)
	err = fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		_, _ = env.Stdout.Write(said.Bytes())
		return false, ErrHelp
	case err != nil:
		_, _ = env.Stderr.Write(said.Bytes())
		return false, ErrUsage
	}
	fs.SetOutput(env.Stderr)
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "%s: unexpected argument %q\n", name, fs.Arg(0))
		return false, ErrUsage
	}
	return *dry, nil
}
