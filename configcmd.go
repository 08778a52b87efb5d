package main

import (
	"context"
	"fmt"
	"io"

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
		return fmt.Errorf("usage: heirloom config show [flags] | heirloom config example")
	}
	switch args[0] {
	case "show":
		loaded, err := loadConfig("config show", args[1:], c.Env, c.Stderr)
		if err != nil {
			return err
		}
		_, err = loaded.WriteTo(c.Stdout)
		return err
	case "example":
		_, err := io.WriteString(c.Stdout, config.Example())
		return err
	default:
		return fmt.Errorf("config: unknown subcommand %q: want show or example", args[0])
	}
}
