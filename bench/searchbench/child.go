package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
)

// Engines, as the child processes name them.
const (
	engHeirloom = "heirloom"         // kv.Store with search.Analyzer as its Indexer
	engNoIndex  = "heirloom-noindex" // kv.Store without an Indexer: turns only
	engFTS5     = "fts5"
)

// hitSummary is one hit as the report keeps it.
type hitSummary struct {
	Session string  `json:"session"`
	Seq     int64   `json:"seq"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet"`
}

// loadResult is what a load child reports.
type loadResult struct {
	Engine       string     `json:"engine"`
	CallSeconds  float64    `json:"call_seconds"` // time inside the store's calls
	WallSeconds  float64    `json:"wall_seconds"` // the whole load, reading the corpus file included
	Counts       loadCounts `json:"counts"`
	RSSOpen      int64      `json:"rss_open"` // VmRSS once the store is open, before the load
	HWM          int64      `json:"hwm"`      // VmHWM at the end of the load
	RSSEnd       int64      `json:"rss_end"`
	DiskAlloc    int64      `json:"disk_alloc"` // after the load and Close
	DiskApparent int64      `json:"disk_apparent"`
}

// compactResult is what a compact child reports.
type compactResult struct {
	Engine        string  `json:"engine"`
	Seconds       float64 `json:"seconds"`
	DiskAlloc     int64   `json:"disk_alloc"`
	DiskApparent  int64   `json:"disk_apparent"`
	TurnBytes     uint64  `json:"turn_bytes,omitempty"`    // heirloom: Pebble's estimate for the turn keys
	PostingsBytes uint64  `json:"posting_bytes,omitempty"` // heirloom: for the postings and figures
}

// queryResult is what a query child reports.
type queryResult struct {
	Engine  string         `json:"engine"`
	RSSOpen int64          `json:"rss_open"` // VmRSS once the store is open: the baseline
	HWMOpen int64          `json:"hwm_open"`
	HWM     int64          `json:"hwm"` // VmHWM after every query
	RSSEnd  int64          `json:"rss_end"`
	Queries []queryTimings `json:"queries"`
}

type queryTimings struct {
	Name  string       `json:"name"`
	Query string       `json:"query"`
	Nanos []int64      `json:"nanos"`
	Hits  int          `json:"hits"`
	Top   []hitSummary `json:"top,omitempty"` // the first 3 hits
}

// countResult is what a count child reports: the turns each query matches.
type countResult struct {
	Engine string         `json:"engine"`
	Counts map[string]int `json:"counts"`
}

// runChild runs one measurement in this process and prints its result as JSON.
func runChild(args []string) error {
	fs := flag.NewFlagSet("child", flag.ExitOnError)
	eng := fs.String("engine", engHeirloom, "heirloom, heirloom-noindex or fts5")
	dir := fs.String("dir", "", "the store's directory")
	corpus := fs.String("corpus", "", "load: the corpus file")
	reps := fs.Int("reps", 20, "query: timed runs of each query")
	profile := fs.String("cpuprofile", "", "load, query: write a CPU profile of the load, or of the timed runs")
	only := fs.String("only", "", "query: run only the query of this name (see queries.go)")
	query := fs.String("q", "", "count: count this query (in the engine's syntax) instead of the set")
	if len(args) == 0 {
		return fmt.Errorf("child: want load, compact, count or query")
	}
	mode := args[0]
	fs.Parse(args[1:])
	ctx := context.Background()
	var out any
	var err error
	switch mode {
	case "load":
		if *profile != "" {
			f, err := os.Create(*profile)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		out, err = childLoad(ctx, *eng, *dir, *corpus)
	case "compact":
		out, err = childCompact(*eng, *dir)
	case "count":
		out, err = childCount(ctx, *eng, *dir, *query)
	case "query":
		out, err = childQuery(ctx, *eng, *dir, *reps, *profile, *only)
	default:
		return fmt.Errorf("child: unknown mode %q", mode)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

func childLoad(ctx context.Context, eng, dir, corpus string) (loadResult, error) {
	res := loadResult{Engine: eng}
	start := time.Now()
	var spent time.Duration
	var err error
	switch eng {
	case engHeirloom, engNoIndex:
		var s *kv.Store
		if s, err = openHeirloom(dir, eng == engHeirloom); err != nil {
			return res, err
		}
		res.RSSOpen, _ = memStatus()
		spent, res.Counts, err = loadHeirloom(ctx, s, corpus)
		res.RSSEnd, res.HWM = memStatus()
		if cerr := s.Close(); err == nil {
			err = cerr
		}
	case engFTS5:
		var db *sql.DB
		if db, err = openFTS5(dir, true); err != nil {
			return res, err
		}
		res.RSSOpen, _ = memStatus()
		spent, res.Counts, err = loadFTS5(ctx, db, corpus)
		res.RSSEnd, res.HWM = memStatus()
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	default:
		return res, fmt.Errorf("unknown engine %q", eng)
	}
	res.CallSeconds = spent.Seconds()
	res.WallSeconds = time.Since(start).Seconds()
	res.DiskAlloc, res.DiskApparent = diskUsage(dir)
	return res, err
}

func childCompact(eng, dir string) (compactResult, error) {
	res := compactResult{Engine: eng}
	start := time.Now()
	switch eng {
	case engHeirloom, engNoIndex:
		t, p, err := compactHeirloom(dir)
		if err != nil {
			return res, err
		}
		res.TurnBytes, res.PostingsBytes = t, p
	case engFTS5:
		db, err := openFTS5(dir, false)
		if err != nil {
			return res, err
		}
		err = compactFTS5(db)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return res, err
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.DiskAlloc, res.DiskApparent = diskUsage(dir)
	return res, nil
}

func childCount(ctx context.Context, eng, dir, query string) (countResult, error) {
	res := countResult{Engine: eng, Counts: map[string]int{}}
	set := queries
	if query != "" {
		set = []benchQuery{{Name: query, Heirloom: query, FTS5: query}}
	}
	switch eng {
	case engHeirloom:
		s, err := openHeirloom(dir, true)
		if err != nil {
			return res, err
		}
		defer s.Close()
		for _, q := range set {
			n, err := heirloomCount(ctx, s, q.Heirloom)
			if err != nil {
				return res, fmt.Errorf("%s: %w", q.Heirloom, err)
			}
			res.Counts[q.Name] = n
		}
	case engFTS5:
		db, err := openFTS5(dir, false)
		if err != nil {
			return res, err
		}
		defer db.Close()
		for _, q := range set {
			n, err := fts5Count(ctx, db, q.FTS5)
			if err != nil {
				return res, fmt.Errorf("%s: %w", q.FTS5, err)
			}
			res.Counts[q.Name] = n
		}
	}
	return res, nil
}

// childQuery opens the store, notes its resident set (the baseline), then runs each query of
// the set once untimed (warming caches) and reps times timed, query by query.
func childQuery(ctx context.Context, eng, dir string, reps int, profile, only string) (queryResult, error) {
	res := queryResult{Engine: eng}
	var run func(q benchQuery) ([]hitSummary, error)
	switch eng {
	case engHeirloom:
		s, err := openHeirloom(dir, true)
		if err != nil {
			return res, err
		}
		defer s.Close()
		e := engine.New(s, scope)
		run = func(q benchQuery) ([]hitSummary, error) { return heirloomSearch(ctx, e, q.Heirloom) }
	case engFTS5:
		db, err := openFTS5(dir, false)
		if err != nil {
			return res, err
		}
		defer db.Close()
		stmt, err := db.PrepareContext(ctx, fts5Query)
		if err != nil {
			return res, err
		}
		defer stmt.Close()
		run = func(q benchQuery) ([]hitSummary, error) { return fts5Search(ctx, stmt, q.FTS5) }
	default:
		return res, fmt.Errorf("unknown engine %q", eng)
	}
	res.RSSOpen, res.HWMOpen = memStatus()
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return res, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return res, err
		}
		defer pprof.StopCPUProfile()
	}
	for _, q := range queries {
		if only != "" && q.Name != only {
			continue
		}
		qt := queryTimings{Name: q.Name, Query: q.Heirloom}
		if eng == engFTS5 {
			qt.Query = q.FTS5
		}
		hits, err := run(q)
		if err != nil {
			return res, fmt.Errorf("%s: %w", qt.Query, err)
		}
		qt.Hits = len(hits)
		qt.Top = hits[:min(3, len(hits))]
		for range reps {
			start := time.Now()
			if _, err := run(q); err != nil {
				return res, fmt.Errorf("%s: %w", qt.Query, err)
			}
			qt.Nanos = append(qt.Nanos, time.Since(start).Nanoseconds())
		}
		res.Queries = append(res.Queries, qt)
	}
	res.RSSEnd, res.HWM = memStatus()
	return res, nil
}
