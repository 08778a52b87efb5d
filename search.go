package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/proxy"
)

// SearchCommand is `heirloom search QUERY`: full-text search over every recorded transcript,
// through the sidecar's POST /api/sessions/search. It prints hits readably, or the API's JSON.
type SearchCommand struct {
	Env    []string
	Stdout io.Writer
	Stderr io.Writer
	// Now is the time hit times are relative to. Nil means time.Now.
	Now func() time.Time
}

// searchUsage opens the flag help.
const searchUsage = `Usage: heirloom search [flags] QUERY

Searches every recorded transcript, running or finished. Words are ANDed; a OR b; "exact phrase";
-word leaves out turns with it; pre* matches words starting with pre. Identifiers are split the
way code is read: WithCancel finds context.WithCancel, header finds parse_ledger_header.

Flags:
`

// Run searches. Flags may come before or after the query's words.
func (c *SearchCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("heirloom search", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), searchUsage)
		fs.PrintDefaults()
	}
	session := fs.String("session", "", "search only this session and its sub-agents (a session id as 'heirloom sessions' lists it)")
	harness := fs.String("harness", "", "only sessions of this harness (claude-code, opencode, openclaw, codex)")
	project := fs.String("project", "", "only sessions of this project directory")
	role := fs.String("role", "", "only turns of this role: user, assistant, tool or system")
	since := fs.String("since", "", "only turns after this: a duration back from now (24h, 30m) or a time (2026-11-20, RFC 3339)")
	until := fs.String("until", "", "only turns before this: as --since")
	limit := fs.Int("limit", 10, "at most this many hits")
	cursor := fs.String("cursor", "", "the next page: the cursor a previous search printed")
	scope := fs.String("scope", "", "the memory scope to search (default: the configured one)")
	asJSON := fs.Bool("json", false, "print the API's JSON reply as is")
	sidecarURL := urlFlag(fs)
	var words []string
	for rest := args; ; {
		if err := parseArgs(fs, rest, c.Stdout); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		if n := len(rest) - fs.NArg(); n > 0 && rest[n-1] == "--" {
			words = append(words, fs.Args()...) // after "--", words only
			break
		}
		words = append(words, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	query := strings.TrimSpace(strings.Join(words, " "))
	if query == "" {
		fmt.Fprintln(c.Stderr, "heirloom search: a query is required")
		fs.Usage()
		return errUsage
	}
	client := sidecar(c.Env, *sidecarURL)
	if err := resolveSessionFlag(ctx, client, session, *scope); err != nil {
		return err
	}
	now := nowOr(c.Now)
	var err error
	req := proxy.SearchRequest{Query: query, Scope: *scope, Session: *session, Harness: *harness, Project: *project, Role: *role, Limit: *limit, Cursor: *cursor}
	if req.Since, err = proxy.ParseWhen(*since, now); err != nil {
		return fmt.Errorf("--since: %w", err)
	}
	if req.Until, err = proxy.ParseWhen(*until, now); err != nil {
		return fmt.Errorf("--until: %w", err)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var reply proxy.SearchReply
	raw, err := client.Post(ctx, "/api/sessions/search", nil, body, &reply)
	if err != nil {
		return explain(err)
	}
	if *asJSON {
		_, err := c.Stdout.Write(raw)
		return err
	}
	return printHits(c.Stdout, reply, now)
}

// printHits prints each hit as a heading line and its snippet, indented, then the next page's
// command when there is one.
func printHits(out io.Writer, reply proxy.SearchReply, now time.Time) error {
	if len(reply.Hits) == 0 {
		_, err := fmt.Fprintln(out, "no turns match")
		return err
	}
	for i, h := range reply.Hits {
		if i > 0 {
			fmt.Fprintln(out)
		}
		head := []string{h.Session, fmt.Sprintf("turn %d", h.Turn), h.Role}
		if !h.Time.IsZero() {
			head = append(head, ago(h.Time, now))
		}
		if h.Title != "" {
			head = append(head, oneLine(h.Title, titleWidth))
		}
		fmt.Fprintf(out, "%s  (%s)\n", strings.Join(head, " · "), h.Harness)
		fmt.Fprintf(out, "    %s\n", h.Snippet)
	}
	if reply.Cursor != "" {
		fmt.Fprintf(out, "\nmore: add --cursor %s\n", reply.Cursor)
	}
	return nil
}
