package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/proxy"
)

// Reconnect backoff of `heirloom watch`: the first wait, doubled after each failed attempt up
// to the last, each with ±20% jitter.
const (
	watchBackoffMin = 250 * time.Millisecond
	watchBackoffMax = 5 * time.Second
)

// WatchCommand is `heirloom watch`: the sidecar's live event feed (GET /api/events) in the
// terminal, one readable line per event, or the feed's JSON messages one per line (--json),
// until Ctrl-C. It reads HEIRLOOM_URL and HEIRLOOM_TOKEN like SessionsCommand. Events go to
// Stdout, what happens to the connection to Stderr: when the sidecar goes away watch says so,
// reconnects with backoff, and says so again once it is back.
type WatchCommand struct {
	Env    []string
	Stdout io.Writer
	Stderr io.Writer
	// Location is the time zone event times are shown in. Nil means time.Local.
	Location *time.Location
}

// Run follows the feed until ctx ends, then returns nil. It returns errUsage for bad flags
// (already reported on Stderr), at once an error when no sidecar answers at the start, and an
// error when the sidecar refuses the feed (a missing token) or Stdout fails.
func (c *WatchCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("heirloom watch", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: heirloom watch [--session KEY] [--type T,…] [--json]\n\nFollows heirloom's live event feed: one line per event, as it happens, until Ctrl-C.\nEvent types: "+strings.Join(engine.EventTypes, ", ")+".\n\nFlags:")
		fs.PrintDefaults()
	}
	var opts proxy.WatchOptions
	fs.StringVar(&opts.Session, "session", "", "only events about this session (its full id), and the runs it spawned or runs as")
	fs.Func("type", "only events of these types (comma-separated, or the flag repeated)", func(v string) error {
		for t := range strings.SplitSeq(v, ",") {
			switch t = strings.TrimSpace(t); {
			case t == "":
			case !slices.Contains(engine.EventTypes, t):
				return fmt.Errorf("unknown event type %q: want any of %s", t, strings.Join(engine.EventTypes, ", "))
			default:
				opts.Types = append(opts.Types, t)
			}
		}
		return nil
	})
	fs.StringVar(&opts.Scope, "scope", "", "only events of this memory scope (default: every scope)")
	asJSON := fs.Bool("json", false, "print each event as the feed's JSON message, one per line")
	sidecarURL := urlFlag(fs)
	if err := parseFlags(fs, args, c.Stdout); err != nil {
		return err
	}
	client := sidecar(c.Env, *sidecarURL)
	if opts.Session != "" {
		if err := resolveSessionFlag(ctx, client, &opts.Session, opts.Scope); err != nil {
			return err
		}
	}
	loc := c.Location
	if loc == nil {
		loc = time.Local
	}
	show := func(ev engine.Event, raw []byte) error {
		line := string(raw)
		if !*asJSON {
			line = formatEvent(ev, loc)
		}
		if _, err := fmt.Fprintln(c.Stdout, line); err != nil {
			return &outputError{err}
		}
		return nil
	}

	var (
		connected bool // once, ever
		down      bool // lost, and not back yet
		wait      = watchBackoffMin
	)
	opts.Connected = func() {
		switch {
		case !connected:
			fmt.Fprintf(c.Stderr, "heirloom watch: following %s (Ctrl-C to stop)\n", client.URL)
		case down:
			fmt.Fprintf(c.Stderr, "heirloom watch: reconnected to %s; events while it was away are not replayed\n", client.URL)
		}
		connected, down, wait = true, false, watchBackoffMin
	}
	for {
		err := client.Watch(ctx, opts, show)
		var (
			out    *outputError
			apiErr *proxy.Error
			absent *proxy.NotRunningError
		)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &out):
			return out.err
		case errors.As(err, &apiErr):
			return explain(err)
		case !connected && errors.As(err, &absent):
			return err
		}
		if !down {
			fmt.Fprintf(c.Stderr, "heirloom watch: %s; reconnecting…\n", lost(err, client.URL))
			down = true
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(jitter(wait)):
		}
		wait = min(2*wait, watchBackoffMax)
	}
}

// outputError is a failed write to Stdout: watching goes no further.
type outputError struct{ err error }

func (e *outputError) Error() string { return "write: " + e.err.Error() }

// lost says why the feed ended, for the line announcing a reconnect.
func lost(err error, url string) string {
	var closed *proxy.FeedClosedError
	var absent *proxy.NotRunningError
	switch {
	case errors.As(err, &closed) && closed.ShuttingDown():
		return "heirloom at " + url + " is shutting down"
	case errors.As(err, &absent):
		return "no heirloom at " + url
	}
	return err.Error()
}

// jitter returns d ± 20%.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// eventFieldOrder is the order of the data fields a line shows first, most telling first; any
// other field follows, by name.
var eventFieldOrder = []string{"reason", "end_reason", "status", "enforced", "block", "chars", "via",
	"child", "parent", "type", "depth", "harness", "project", "trigger", "id", "compactions"}

// formatEvent is ev on one line: its time (in loc, to the second), type, session (shortened
// as in tables), run, then its data as key=value, most telling first. A run's status is left
// out when its end reason says the same; its scope is shown unless it is the default one.
func formatEvent(ev engine.Event, loc *time.Location) string {
	when := "--:--:--"
	if !ev.Time.IsZero() {
		when = ev.Time.In(loc).Format("15:04:05")
	}
	var fields []string
	if ev.Run != "" {
		fields = append(fields, "run="+shortID(ev.Run))
	}
	keys := make([]string, 0, len(ev.Data))
	for k := range ev.Data {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		ia, ib := slices.Index(eventFieldOrder, a), slices.Index(eventFieldOrder, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		if k == "status" && ev.Data["end_reason"] == ev.Data["status"] {
			continue
		}
		if v, ok := fieldValue(k, ev.Data[k]); ok {
			fields = append(fields, k+"="+v)
		}
	}
	if ev.Scope != "" && ev.Scope != "default" {
		fields = append(fields, "scope="+fieldText(ev.Scope))
	}
	line := fmt.Sprintf("%s  %-18s  %-17s  %s", when, ev.Type, shortID(ev.Session), strings.Join(fields, " "))
	return strings.TrimRight(printable(line), " ")
}

// fieldValue is one data value as a line shows it; false for an empty one. Session ids are
// shortened, a block's heading shown without its markup, text quoted when it has spaces.
func fieldValue(key string, v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		switch key {
		case "child", "parent":
			v = shortID(v)
		case "block":
			v = strings.Trim(strings.TrimLeft(v, "# "), "[]")
		}
		if v == "" {
			return "", false
		}
		return fieldText(v), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(v), true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// fieldText quotes s when it holds spaces, quotes, '=' or control characters.
func fieldText(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '"' || r == '=' || r == 0x7f }) {
		return strconv.Quote(s)
	}
	return s
}
