package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/heirloom-dev/heirloom/proxy"
)

// ReindexCommand is `heirloom reindex`: the running sidecar rebuilds its search index from every
// stored turn, and the command shows its progress until it is done (POST /api/index/rebuild,
// then GET /api/index). Hooks and searches go on meanwhile.
type ReindexCommand struct {
	Env    []string
	Stdout io.Writer
	Stderr io.Writer
	// Poll is how often progress is read; zero means 250ms.
	Poll time.Duration
}

// Run starts the rebuild and follows it.
func (c *ReindexCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("heirloom reindex", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: heirloom reindex [--detach]\n\nRebuilds the running sidecar's search index from every stored turn, with a progress bar.\nThe sidecar does it by itself after an upgrade that changes the index; this is for doing it now.\n\nFlags:")
		fs.PrintDefaults()
	}
	detach := fs.Bool("detach", false, "start the rebuild and return at once")
	sidecarURL := urlFlag(fs)
	if err := parseFlags(fs, args, c.Stdout); err != nil {
		return err
	}
	client := sidecar(c.Env, *sidecarURL)
	var st proxy.IndexReply
	if _, err := client.Post(ctx, "/api/index/rebuild", nil, nil, &st); err != nil {
		return explain(err)
	}
	if !st.Started {
		fmt.Fprintln(c.Stderr, "a rebuild is already running; following it")
	}
	if *detach {
		_, err := fmt.Fprintln(c.Stdout, "rebuilding the search index; 'heirloom reindex' again follows it")
		return err
	}
	poll := c.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	bar := progressBar{out: c.Stderr, live: isTerminal(c.Stderr)}
	for {
		select {
		case <-ctx.Done():
			bar.end()
			return fmt.Errorf("stopped following; the sidecar goes on rebuilding: %w", ctx.Err())
		case <-time.After(poll):
		}
		if _, err := client.Get(ctx, "/api/index", nil, &st); err != nil {
			bar.end()
			return explain(err)
		}
		bar.show(st.Done, st.Total)
		switch {
		case st.Running:
		case st.Building:
			bar.end()
			return fmt.Errorf("the rebuild stopped at %d of %d turns; see the sidecar's log", st.Done, st.Total)
		default:
			bar.end()
			_, err := fmt.Fprintf(c.Stdout, "search index rebuilt: %d turns\n", st.Done)
			return err
		}
	}
}

// progressBar draws done/total on one line redrawn in place on a terminal, or a line per tenth
// elsewhere (a log, a pipe).
type progressBar struct {
	out      io.Writer
	live     bool
	lastTens int
	drawn    bool
}

const barWidth = 30

func (b *progressBar) show(done, total uint64) {
	if total == 0 {
		total = max(done, 1)
	}
	done = min(done, total)
	pct := int(done * 100 / total)
	if !b.live {
		if tens := pct / 10; tens > b.lastTens || !b.drawn {
			b.lastTens, b.drawn = tens, true
			fmt.Fprintf(b.out, "%3d%%  %d of %d turns\n", pct, done, total)
		}
		return
	}
	fill := int(done * barWidth / total)
	fmt.Fprintf(b.out, "\r[%s%s] %3d%%  %d of %d turns", strings.Repeat("#", fill), strings.Repeat("-", barWidth-fill), pct, done, total)
	b.drawn = true
}

func (b *progressBar) end() {
	if b.live && b.drawn {
		fmt.Fprintln(b.out)
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}
