package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/proxy"
)

// ExplainCommand is `heirloom explain KEY`: every block of context heirloom delivered to a
// session (the newest kv.MaxBlocks), newest first: when, through which hook or plugin call, which
// blocks and how many characters, from which parent and whether that pairing was provisional or
// confirmed, what was cut to fit, and the text as the harness got it.
type ExplainCommand struct {
	Env    []string
	Stdout io.Writer
	Stderr io.Writer
	// Now is the time ages are relative to. Nil means time.Now.
	Now func() time.Time
}

// Run explains.
func (c *ExplainCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("heirloom explain", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: heirloom explain [flags] KEY\n\nShows every block of context heirloom gave session KEY (its id, or the short id\n'heirloom sessions' shows), newest first: when, through which hook or plugin call, how many\ncharacters, from which parent and whether that pairing was provisional or confirmed, what was\ncut to fit, and the text itself.\n\nFlags:")
		fs.PrintDefaults()
	}
	scope := fs.String("scope", "", "the memory scope of the session (default: the configured one; OpenClaw's: its agent id)")
	text := fs.Bool("text", true, "print each block's text (--text=false: only what, when and why)")
	limit := fs.Int("limit", 0, "at most this many deliveries (default: every one kept)")
	asJSON := fs.Bool("json", false, "print the API's JSON reply as is")
	sidecarURL := urlFlag(fs)
	key, err := parseKeyArgs(fs, args, c.Stdout)
	if err != nil {
		return err
	}
	client := sidecar(c.Env, *sidecarURL)
	if key, err = resolveSession(ctx, client, key, *scope); err != nil {
		return err
	}
	q := url.Values{}
	setIf(q, "scope", *scope)
	if *limit > 0 {
		q.Set("limit", strconv.Itoa(*limit))
	}
	if !*text {
		q.Set("text", "false")
	}
	var reply proxy.BlocksReply
	raw, err := client.Get(ctx, "/api/sessions/"+url.PathEscape(key)+"/blocks", q, &reply)
	switch {
	case err != nil:
		return explain(err)
	case *asJSON:
		_, err := c.Stdout.Write(raw)
		return err
	}
	return printBlocks(c.Stdout, reply, nowOr(c.Now))
}

// printBlocks prints a session's deliveries, newest first.
func printBlocks(out io.Writer, reply proxy.BlocksReply, now time.Time) error {
	s := reply.Session
	fmt.Fprintf(out, "%s (%s", s.ID, s.Harness)
	if s.ParentID != "" {
		fmt.Fprintf(out, ", sub-agent of %s", s.ParentID)
	}
	fmt.Fprintln(out, ")")
	if len(reply.Blocks) == 0 {
		_, err := fmt.Fprintln(out, "heirloom gave it no context yet (a top-level session gets a block after a compaction, or at its start when its project has a recent checkpoint; a sub-agent at its start)")
		return err
	}
	for _, b := range reply.Blocks {
		fmt.Fprintf(out, "\n%s (%s) via %s: %s, %d characters\n", b.Time.Local().Format("2006-01-02 15:04:05"), ago(b.Time, now), b.Via, strings.Join(blockNames(b.Blocks), " + "), b.Chars)
		if b.Parent != "" {
			parent := b.Parent
			if b.ParentScope != "" {
				parent += " (scope " + b.ParentScope + ")"
			}
			fmt.Fprintf(out, "  from parent %s, paired %s\n", parent, b.Pairing)
		}
		if b.Cut != "" {
			fmt.Fprintf(out, "  %s\n", b.Cut)
		}
		if b.Text != "" {
			for _, line := range strings.Split(strings.TrimRight(b.Text, "\n"), "\n") {
				fmt.Fprintf(out, "  │ %s\n", line)
			}
		}
	}
	return nil
}

// blockNames names blocks by their headings, plainly: "inherited", "objective reinforcement",
// "recovered checkpoint".
func blockNames(headings []string) []string {
	if len(headings) == 0 {
		return []string{"context"}
	}
	out := make([]string, 0, len(headings))
	for _, h := range headings {
		switch {
		case strings.Contains(h, "Inherited"):
			out = append(out, "inherited block")
		case strings.Contains(h, "Objective"):
			out = append(out, "objective reinforcement")
		case strings.Contains(h, "Recovered"):
			out = append(out, "recovered checkpoint")
		default:
			out = append(out, h)
		}
	}
	return out
}
