package main

import (
	"context"
	"fmt"
	"io"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/config"
)

// ConfigCommand is `heirloom config show|example`.
type ConfigCommand struct {
	Env    []string
	Stdout io.Writer
	Stderr io.Writer
}

// Run prints the effective config with each value's origin, or a commented example file.
func (c *ConfigCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(c.Stderr, configUsage)
		return errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(c.Stdout, configUsage)
		return errHelp
	case "show":
		loaded, err := loadConfig("config show", args[1:], c.Env, c.Stdout, c.Stderr)
		if err != nil {
			return err
		}
		_, err = loaded.WriteTo(c.Stdout)
		return err
	case "example":
		if adapters.WantsHelp(args[1:]) {
			fmt.Fprint(c.Stdout, configUsage)
			return errHelp
		}
		_, err := io.WriteString(c.Stdout, config.Example())
		return err
	default:
		fmt.Fprintf(c.Stderr, "heirloom config: unknown subcommand %q\n%s", args[0], configUsage)
		return errUsage
	}
}

// configUsage is `heirloom config`'s help.
const configUsage = `Usage: heirloom config show [flags]   the effective configuration and where each value came from
       heirloom config example        a commented config file of every setting with its default
`
