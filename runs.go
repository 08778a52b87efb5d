package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/proxy"
)

// RunsCommand is `heirloom runs`: the sub-agent runs the sidecar recorded, newest first, as a
// table or the API's JSON (--json), and `heirloom runs show ID`: one run's cast result. It reads
// the API like SessionsCommand.
type RunsCommand struct {
	Env    []string
	Stdout io.Writer
	Stderr io.Writer
	// Now is the time CREATED is relative to. Nil means time.Now.
	Now func() time.Time
}

// Run lists the runs, or with "show ID" prints one. It returns errUsage for bad flags (already
// reported on Stderr).
func (c *RunsCommand) Run(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "show" {
		return c.show(ctx, args[1:])
	}
	fs := flag.NewFlagSet("heirloom runs", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	asJSON := fs.Bool("json", false, "print the API's JSON reply as is")
	session := fs.String("session", "", "only runs this session spawned; for a top-level session, every run of its tree (its full id)")
	root := fs.String("root", "", "only runs spawned within this top-level session (its full id)")
	parent := fs.String("parent", "", "only runs this session asked for (its full id)")
	child := fs.String("child", "", "only the run of this sub-agent session (its full id)")
	status := fs.String("status", "", "only runs with this status: pending, running, completed, failed, interrupted, refused…")
	harness := fs.String("harness", "", "only runs of this harness (claude-code, opencode, openclaw, codex)")
	typ := fs.String("type", "", "only runs of this sub-agent type (Explore, general-purpose, general…)")
	since := fs.String("since", "", "only runs created since: a duration back from now (24h), a date or an RFC 3339 time")
	limit := fs.Int("limit", 20, "at most this many runs")
	scope := fs.String("scope", "", "the memory scope to list (default: the configured one; OpenClaw runs are filed under their agent id, e.g. main)")
	sidecarURL := urlFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: heirloom runs [flags]\n       heirloom runs show [flags] ID\n\nLists the sub-agent runs heirloom recorded, newest first. A session flag takes the\nsession's id or the short id 'heirloom sessions' shows.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, c.Stdout); err != nil {
		return err
	}
	client := sidecar(c.Env, *sidecarURL)
	for _, key := range []*string{session, root, parent, child} {
		if err := resolveSessionFlag(ctx, client, key, *scope); err != nil {
			return err
		}
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}}
	filters := map[string]string{"session": *session, "root": *root, "parent": *parent, "child": *child,
		"status": *status, "harness": *harness, "type": *typ, "since": *since}
	filtered := false
	for name, v := range filters {
		setIf(q, name, v)
		filtered = filtered || v != ""
	}
	setIf(q, "scope", *scope)
	var list proxy.RunsReply
	raw, err := client.Get(ctx, "/api/runs", q, &list)
	switch {
	case err != nil:
		return explain(err)
	case *asJSON:
		_, err := c.Stdout.Write(raw)
		return err
	case len(list.Runs) == 0:
		_, err := fmt.Fprintln(c.Stdout, nothingIn("runs", filtered, *scope))
		return err
	}
	now := nowOr(c.Now)
	tw := newTable(c.Stdout, "ID", "TYPE", "STATUS", "CHILD", "CREATED", "DURATION", "DESCRIPTION")
	for _, r := range list.Runs {
		child := "-"
		if r.ChildID != "" {
			child = shortID(r.ChildID)
		}
		tw.row(shortID(r.ID), firstNonEmpty(r.Type, "-"), runStatus(r), child, ago(r.CreatedAt, now), runDuration(r), oneLine(firstNonEmpty(r.Description, r.Prompt), titleWidth))
	}
	return tw.Flush()
}

// show is `heirloom runs show ID`: the run's cast, its whole result while the result is kept
// (the condensed form once it was swept), or the API's JSON. ID may be the shortened id the
// table shows, or the start of an id, when it names one run.
func (c *RunsCommand) show(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("heirloom runs show", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: heirloom runs show [--json] [--scope S] ID\n\nPrints the run's result as a model reads it ([Subagent Result: …], how it ended,\nits figures): the whole result while it is kept (runs.result_retention), the\ncondensed form once it was swept.\n\nFlags:")
		fs.PrintDefaults()
	}
	asJSON := fs.Bool("json", false, "print the API's JSON reply as is: the run and its cast")
	scope := fs.String("scope", "", "the memory scope of the run (default: the configured one)")
	sidecarURL := urlFlag(fs)
	if err := parseArgs(fs, args, c.Stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(c.Stderr, "heirloom runs show: exactly one run id is required")
		fs.Usage()
		return errUsage
	}
	client := sidecar(c.Env, *sidecarURL)
	q := url.Values{"full": {"true"}}
	setIf(q, "scope", *scope)
	id := fs.Arg(0)
	var reply proxy.RunReply
	raw, err := client.Get(ctx, "/api/runs/"+url.PathEscape(id), q, &reply)
	var apiErr *proxy.Error
	if errors.As(err, &apiErr) && apiErr.Code == proxy.ECodeNotFound {
		full, ferr := c.fullID(ctx, client, id, *scope)
		if ferr != nil {
			return ferr
		}
		raw, err = client.Get(ctx, "/api/runs/"+url.PathEscape(full), q, &reply)
	}
	switch {
	case err != nil:
		return explain(err)
	case *asJSON:
		_, err := c.Stdout.Write(raw)
		return err
	}
	_, err = fmt.Fprintln(c.Stdout, reply.Cast)
	return err
}

// fullID finds the run whose id id shortens (the table's ID column) or starts (matchShort).
func (c *RunsCommand) fullID(ctx context.Context, client *proxy.Client, id, scope string) (string, error) {
	return matchShort(id, "run", func(prefix string) ([]string, error) {
		q := url.Values{"prefix": {prefix}, "limit": {strconv.Itoa(prefixLimit)}}
		setIf(q, "scope", scope)
		var list proxy.RunsReply
		if _, err := client.Get(ctx, "/api/runs", q, &list); err != nil {
			return nil, explain(err)
		}
		ids := make([]string, 0, len(list.Runs))
		for _, r := range list.Runs {
			ids = append(ids, r.ID)
		}
		return ids, nil
	})
}

// prefixLimit is the most runs or sessions read to find the one a shortened id names.
const prefixLimit = 100

// searchPrefix is what every id that shortID shortens to short starts with: short up to and
// including its first part before the last that shortID may have cut (eight characters after an
// optional short "xxx_" prefix), which is the start of the part it was cut from; all of short
// when none may have been.
func searchPrefix(short string) string {
	parts := strings.Split(short, ":")
	for i, p := range parts {
		if j := strings.LastIndexByte(p, '_'); j > 0 && j < 8 {
			p = p[j+1:]
		}
		if utf8.RuneCountInString(p) == 8 && i < len(parts)-1 {
			return strings.Join(parts[:i+1], ":")
		}
	}
	return short
}

// runStatus is a run's status, with its end reason when that says more (watchdog_timeout,
// ghost_sweep, killed).
func runStatus(r proxy.APIRun) string {
	if r.EndReason == "" || r.EndReason == r.Status {
		return r.Status
	}
	return r.Status + " (" + r.EndReason + ")"
}

// runDuration is how long a run took (inject.Runtime, as a cast shows it); "-" while unknown.
func runDuration(r proxy.APIRun) string {
	return firstNonEmpty(inject.Runtime(r.DurationMs, r.StartedAt, r.EndedAt), "-")
}
