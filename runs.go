package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/heirloom-dev/heirloom/proxy"
)

// RunsCommand is `heirloom runs`: the sub-agent runs the sidecar recorded, newest first, as a
// table or the API's JSON (--json). It reads the API like SessionsCommand.
type RunsCommand struct {
	Env    []string
	Stdout io.Writer
	Stderr io.Writer
	// Now is the time CREATED is relative to. Nil means time.Now.
	Now func() time.Time
}

// Run lists the runs. It returns errUsage for bad flags (already reported on Stderr).
func (c *RunsCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("heirloom runs", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	asJSON := fs.Bool("json", false, "print the API's JSON reply as is")
	root := fs.String("root", "", "only runs spawned within this top-level session (its full id)")
	status := fs.String("status", "", "only runs with this status: pending, running, completed, failed, interrupted…")
	limit := fs.Int("limit", 20, "at most this many runs")
	scope := fs.String("scope", "", "the memory scope to list (default: the configured one; OpenClaw runs are filed under their agentId, e.g. main)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}}
	setIf(q, "root", *root)
	setIf(q, "status", *status)
	setIf(q, "scope", *scope)
	var list proxy.RunsReply
	raw, err := apiClient(c.Env).Get(ctx, "/api/runs", q, &list)
	switch {
	case err != nil:
		return explain(err)
	case *asJSON:
		_, err := c.Stdout.Write(raw)
		return err
	case len(list.Runs) == 0:
		_, err := fmt.Fprintln(c.Stdout, nothingIn("runs", *root != "" || *status != "", *scope))
		return err
	}
	now := nowOr(c.Now)
	tw := newTable(c.Stdout, "ID", "TYPE", "STATUS", "CHILD", "CREATED", "DURATION", "DESCRIPTION")
	for _, r := range list.Runs {
		child := "-"
		if r.ChildID != "" {
			child = shortID(r.ChildID)
		}
		tw.row(shortID(r.ID), firstNonEmpty(r.Type, "-"), r.Status, child, ago(r.CreatedAt, now), runDuration(r), oneLine(firstNonEmpty(r.Description, r.Prompt), titleWidth))
	}
	return tw.Flush()
}

// runDuration is how long a run took, to the second (to the millisecond under one): as reported, else from its start and end
// times; "-" while unknown.
func runDuration(r proxy.APIRun) string {
	d := time.Duration(r.DurationMs) * time.Millisecond
	if d <= 0 && !r.StartedAt.IsZero() && r.EndedAt.After(r.StartedAt) {
		d = r.EndedAt.Sub(r.StartedAt)
	}
	switch {
	case d <= 0:
		return "-"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
