package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"

	"github.com/heirloom-dev/heirloom/proxy"
)

// CheckpointCommand is `heirloom checkpoint KEY`: it asks the sidecar to take a checkpoint of
// session KEY now (trigger explicit) and prints it, or the API's JSON (--json).
type CheckpointCommand struct {
	Env    []string
	Stdout io.Writer
	Stderr io.Writer
}

// Run takes the checkpoint. It returns errUsage for bad flags or a missing KEY (already
// reported on Stderr).
func (c *CheckpointCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("heirloom checkpoint", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: heirloom checkpoint KEY [--scope S] [--json]\n\nTakes a checkpoint of session KEY (its id, or the short id 'heirloom sessions' shows) now\nand prints it.\n\nFlags:")
		fs.PrintDefaults()
	}
	asJSON := fs.Bool("json", false, "print the API's JSON reply as is")
	scope := fs.String("scope", "", "the memory scope of the session (default: the configured one)")
	sidecarURL := urlFlag(fs)
	key, err := parseKeyArgs(fs, args, c.Stdout)
	if err != nil {
		return err
	}
	client := sidecar(c.Env, *sidecarURL)
	if key, err = resolveSession(ctx, client, key, *scope); err != nil {
		return err
	}
	q := url.Values{"trigger": {"explicit"}}
	setIf(q, "scope", *scope)
	var cp proxy.APICheckpoint
	raw, err := client.Post(ctx, "/api/sessions/"+url.PathEscape(key)+"/checkpoints", q, nil, &cp)
	switch {
	case err != nil:
		return explain(err)
	case *asJSON:
		_, err := c.Stdout.Write(raw)
		return err
	}
	_, err = fmt.Fprintf(c.Stdout, "checkpoint %s of %s (after %d prompts)\n%s\n", cp.ID, cp.Session, cp.Prompts, cp.Digest)
	return err
}
