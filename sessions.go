package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/heirloom-dev/heirloom/proxy"
)

// SessionsCommand is `heirloom sessions`: the sessions the sidecar recorded, newest first, as a
// table, a tree of sub-agents (--tree) or the API's JSON (--json). It reads the API at
// HEIRLOOM_URL with the bearer token HEIRLOOM_TOKEN.
type SessionsCommand struct {
	Env    []string
	Stdout io.Writer
	Stderr io.Writer
	// Now is the time UPDATED is relative to. Nil means time.Now.
	Now func() time.Time
}

// Run lists the sessions, or with "delete KEY" deletes one. It returns errUsage for bad flags
// (already reported on Stderr).
func (c *SessionsCommand) Run(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "delete" {
		return c.delete(ctx, args[1:])
	}
	fs := flag.NewFlagSet("heirloom sessions", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	tree := fs.Bool("tree", false, "show each top-level session with its sub-agents below it")
	asJSON := fs.Bool("json", false, "print the API's JSON reply as is (with --tree: an array of lineage replies)")
	harness := fs.String("harness", "", "only sessions of this harness (claude-code, opencode, openclaw, codex)")
	project := fs.String("project", "", "only sessions of this project directory")
	status := fs.String("status", "", "only sessions with this status: active or ended")
	limit := fs.Int("limit", 20, "at most this many sessions (with --tree: top-level sessions)")
	scope := fs.String("scope", "", "the memory scope to list (default: the configured one; OpenClaw sessions are filed under their agentId, e.g. main)")
	sidecarURL := urlFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: heirloom sessions [flags]\n       heirloom sessions delete [flags] KEY\n\nLists the sessions heirloom recorded, newest first; --tree shows each top-level session\nwith its sub-agents. KEY may be the short id this table shows.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, c.Stdout); err != nil {
		return err
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}}
	setIf(q, "harness", *harness)
	setIf(q, "project", *project)
	setIf(q, "status", *status)
	setIf(q, "scope", *scope)
	if *tree {
		q.Set("top_level", "true")
	}
	client := sidecar(c.Env, *sidecarURL)
	var list proxy.SessionsReply
	raw, err := client.Get(ctx, "/api/sessions", q, &list)
	if err != nil {
		return explain(err)
	}
	now := nowOr(c.Now)
	switch {
	case *tree:
		return c.tree(ctx, client, list.Sessions, *scope, *asJSON, *harness != "" || *project != "" || *status != "", now)
	case *asJSON:
		_, err := c.Stdout.Write(raw)
		return err
	case len(list.Sessions) == 0:
		_, err := fmt.Fprintln(c.Stdout, nothingIn("sessions", *harness != "" || *project != "" || *status != "", *scope))
		return err
	}
	tw := newTable(c.Stdout, "ID", "HARNESS", "STATUS", "TURNS", "UPDATED", "TITLE")
	for _, s := range list.Sessions {
		tw.row(shortID(s.ID), s.Harness, s.Status, strconv.FormatUint(s.TurnCount, 10), ago(s.UpdatedAt, now), oneLine(sessionTitle(s), titleWidth))
	}
	return tw.Flush()
}

// tree prints each top-level session with its descendants, fetched one lineage at a time.
func (c *SessionsCommand) tree(ctx context.Context, client *proxy.Client, tops []proxy.APISession, scope string, asJSON, filtered bool, now time.Time) error {
	lineages := make([]proxy.LineageReply, len(tops))
	raws := make([]string, len(tops))
	q := url.Values{}
	setIf(q, "scope", scope)
	for i, s := range tops {
		raw, err := client.Get(ctx, "/api/sessions/"+url.PathEscape(s.ID)+"/lineage", q, &lineages[i])
		if err != nil {
			return explain(err)
		}
		raws[i] = strings.TrimSpace(string(raw))
	}
	if asJSON {
		_, err := fmt.Fprintf(c.Stdout, "[%s]\n", strings.Join(raws, ",\n"))
		return err
	}
	if len(tops) == 0 {
		_, err := fmt.Fprintln(c.Stdout, nothingIn("sessions", filtered, scope))
		return err
	}
	tw := newTable(c.Stdout, "ID", "HARNESS/TYPE", "STATUS", "TURNS", "UPDATED", "TITLE")
	for _, l := range lineages {
		s := l.Session
		tw.row(shortID(s.ID), s.Harness, s.Status, strconv.FormatUint(s.TurnCount, 10), ago(s.UpdatedAt, now), oneLine(sessionTitle(s), titleWidth))
		treeRows(tw, l.Descendants, "", now)
		if l.Truncated {
			tw.row("…", "", "", "", "", "(tree cut short: see --json)")
		}
	}
	return tw.Flush()
}

// treeRows prints nodes below a line, indented by prefix: each sub-agent with its type and the
// status of the run that spawned it.
func treeRows(tw *table, nodes []proxy.LineageNode, prefix string, now time.Time) {
	for i, n := range nodes {
		branch, more := "├─ ", "│  "
		if i == len(nodes)-1 {
			branch, more = "└─ ", "   "
		}
		s := n.Session
		kind, status, title := s.AgentType, s.Status, sessionTitle(s)
		if kind == "" {
			kind = s.Harness
		}
		if n.Run != nil {
			status = n.Run.Status
			if title == "" {
				title = firstNonEmpty(n.Run.Description, n.Run.Prompt)
			}
		}
		tw.row(prefix+branch+leafID(s.ID), kind, status, strconv.FormatUint(s.TurnCount, 10), ago(s.UpdatedAt, now), oneLine(title, titleWidth))
		treeRows(tw, n.Children, prefix+more, now)
	}
}

// sessionTitle is what a session is about: its title, else its objective.
func sessionTitle(s proxy.APISession) string { return firstNonEmpty(s.Title, s.Objective) }

// The helpers below are shared with RunsCommand.

// titleWidth is how many characters of a title or description a table line shows.
const titleWidth = 60

// explain adds what to do to an API error the user can fix.
func explain(err error) error {
	var apiErr *proxy.Error
	if errors.As(err, &apiErr) && apiErr.Code == proxy.ECodeUnauthorized {
		return fmt.Errorf("%w: set HEIRLOOM_TOKEN to the sidecar's token", err)
	}
	return err
}

// setIf sets q's key to v when v is not empty.
func setIf(q url.Values, key, v string) {
	if v != "" {
		q.Set(key, v)
	}
}

// nothing is the line printed instead of an empty table.
func nothing(what string, filtered bool) string {
	if filtered {
		return "no " + what + " match"
	}
	return "no " + what + " yet"
}

// scopeHint follows an empty listing of the configured scope: OpenClaw's sessions and runs are
// filed under their agent's id, which users look for here first.
const scopeHint = "(OpenClaw sessions and runs are filed under their agent id: add --scope main, or the agent's id)"

// nothingIn is nothing plus scopeHint when no scope was given.
func nothingIn(what string, filtered bool, scope string) string {
	if scope != "" {
		return nothing(what, filtered) + " in scope " + scope
	}
	return nothing(what, filtered) + "\n" + scopeHint
}

func nowOr(now func() time.Time) time.Time {
	if now == nil {
		return time.Now()
	}
	return now()
}

// table is text with aligned columns, written to out by Flush.
type table struct {
	out io.Writer
	buf bytes.Buffer
	tw  *tabwriter.Writer
}

// newTable starts a table and writes its header.
func newTable(out io.Writer, header ...string) *table {
	t := &table{out: out}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t.tw, strings.Join(header, "\t"))
	return t
}

// row adds one line; cells are made printable first.
func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = printable(c)
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

// Flush aligns the lines and writes them, without the padding an empty last cell leaves.
func (t *table) Flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	var out strings.Builder
	for line := range strings.Lines(t.buf.String()) {
		out.WriteString(strings.TrimRight(line, " \n"))
		out.WriteByte('\n')
	}
	_, err := io.WriteString(t.out, out.String())
	return err
}

// printable replaces control characters (tabs, newlines, terminal escapes) with spaces, since
// cells hold what harnesses and users wrote.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// oneLine puts s on one line with single spaces, cut to at most width characters ("…" marks
// the cut).
func oneLine(s string, width int) string {
	s = strings.Join(strings.Fields(printable(s)), " ")
	if r := []rune(s); len(r) > width {
		return strings.TrimRight(string(r[:width-1]), " ") + "…"
	}
	return s
}

// shortID shortens an id for a table, like a short commit hash: each ':'-separated part longer
// than 12 characters keeps its first 8 (after a short "word_" prefix such as "toolu_", which is
// kept). Session ids stay recognisable: "49bc4f7b-89e8-…:a02df2ef9ee472336" → "49bc4f7b:a02df2ef".
func shortID(id string) string {
	parts := strings.Split(id, ":")
	for i, p := range parts {
		prefix := ""
		if j := strings.LastIndexByte(p, '_'); j > 0 && j < 8 {
			prefix, p = p[:j+1], p[j+1:]
		}
		if r := []rune(p); len(r) > 12 {
			p = string(r[:8])
		}
		parts[i] = prefix + p
	}
	return strings.Join(parts, ":")
}

// leafID is a sub-agent's own part of its id ("<session>:<agent>" → agent), shortened; in a tree
// its session is the line above.
func leafID(id string) string {
	if i := strings.LastIndexByte(id, ':'); i >= 0 && i < len(id)-1 {
		id = id[i+1:]
	}
	return shortID(id)
}

// ago says how long before now t was: "just now", "45s ago", "3m ago", "5h ago", "2d ago", or
// the date after 30 days; "-" when t is unknown.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	switch d := now.Sub(t); {
	case d < 5*time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 30*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	default:
		return t.Local().Format("2006-01-02")
	}
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// delete is `heirloom sessions delete KEY`: the session, its turns, their search postings and
// its checkpoints are removed for good (DELETE /api/sessions/{key}).
func (c *SessionsCommand) delete(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("heirloom sessions delete", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: heirloom sessions delete [--scope S] KEY\n\nRemoves the session KEY (its id, or the short id 'heirloom sessions' shows) with its turns,\nits search index entries and its checkpoints, for good (for a pasted secret). Its sub-agents\nand runs stay.\n\nFlags:")
		fs.PrintDefaults()
	}
	scope := fs.String("scope", "", "the memory scope of the session (default: the configured one)")
	sidecarURL := urlFlag(fs)
	if err := parseArgs(fs, args, c.Stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(c.Stderr, "heirloom sessions delete: exactly one session key is required")
		fs.Usage()
		return errUsage
	}
	client := sidecar(c.Env, *sidecarURL)
	key, err := resolveSession(ctx, client, fs.Arg(0), *scope)
	if err != nil {
		return err
	}
	q := url.Values{}
	setIf(q, "scope", *scope)
	var reply proxy.DeleteReply
	if _, err := client.Delete(ctx, "/api/sessions/"+url.PathEscape(key), q, &reply); err != nil {
		return explain(err)
	}
	_, err = fmt.Fprintf(c.Stdout, "deleted session %s: %d turns, %d checkpoints\n", reply.Session, reply.Turns, reply.Checkpoints)
	return err
}
