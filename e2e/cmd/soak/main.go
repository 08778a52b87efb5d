// Command soak runs heirloom under a mixed load for a while and reports how it held up:
// throughput and latency per path, RSS and goroutines over time, and whether either grew
// without bound. See package e2e/soak for what the load is.
//
//	go run ./e2e/cmd/soak -duration 30m -out soak.json
//
// It exits 1 when the run found a problem (the report says which), 2 when it could not run.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/heirloom-dev/heirloom/e2e/soak"
)

func main() {
	cfg := soak.DefaultConfig()
	flag.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long the load runs")
	flag.DurationVar(&cfg.Interval, "report", cfg.Interval, "interval between samples (RSS, goroutines, rates, latencies)")
	flag.DurationVar(&cfg.IdleBefore, "idle-before", cfg.IdleBefore, "heirloom idle before the load (idle RSS)")
	flag.DurationVar(&cfg.IdleAfter, "idle-after", cfg.IdleAfter, "heirloom idle after the load, before the last sample")
	flag.IntVar(&cfg.Sessions, "sessions", cfg.Sessions, "Claude Code sessions at once")
	flag.DurationVar(&cfg.HookPause, "hook-pause", cfg.HookPause, "mean pause of a Claude Code session after each hook call")
	flag.Float64Var(&cfg.OpenCodeRate, "opencode-rate", cfg.OpenCodeRate, "OpenCode frames per second offered (0: no OpenCode stream)")
	flag.Float64Var(&cfg.OpenClawRate, "openclaw-rate", cfg.OpenClawRate, "OpenClaw Gateway frames per second offered (0: none)")
	flag.Float64Var(&cfg.TextScale, "text-scale", cfg.TextScale, "size of streamed texts relative to the default")
	flag.IntVar(&cfg.Feeds, "feeds", cfg.Feeds, "live feed consumers (one more reconnects every 15-25 s)")
	flag.DurationVar(&cfg.RestartEvery, "restart-every", cfg.RestartEvery, "each upstream stand-in restarts once per this, in turn (0: never)")
	flag.DurationVar(&cfg.Limits.Warmup, "warmup", cfg.Limits.Warmup, "samples under load before this are not judged for growth")
	maxRSS := flag.Int64("max-rss-mib", cfg.Limits.MaxRSS>>20, "RSS cap in MiB (0: none)")
	flag.IntVar(&cfg.Limits.MaxGoroutines, "max-goroutines", cfg.Limits.MaxGoroutines, "goroutine cap (0: none)")
	flag.StringVar(&cfg.Bin, "bin", "", "the heirloom binary (default: build it from the module)")
	flag.StringVar(&cfg.Repo, "repo", "", "the module's root (default: found above the working directory)")
	flag.StringVar(&cfg.Dir, "dir", "", "where the data dir and transcripts go, on disk (default: a temp dir, never tmpfs)")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the data dir and transcripts")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the generated sessions")
	out := flag.String("out", "", "also write the report here: .json for JSON, else text")
	flag.Parse()
	cfg.Limits.MaxRSS = *maxRSS << 20
	cfg.Logf = log.Printf

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := soak.Run(ctx, cfg)
	if rep == nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	_ = rep.WriteText(os.Stdout)
	if *out != "" {
		if err := write(*out, rep); err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(2)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak: interrupted:", err)
		os.Exit(2)
	}
	if rep.Failed() {
		os.Exit(1)
	}
}

func write(path string, rep *soak.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if strings.HasSuffix(path, ".json") {
		err = rep.WriteJSON(f)
	} else {
		err = rep.WriteText(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
