package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// runOptions are `searchbench run`'s flags.
type runOptions struct {
	sizeMiB     int
	seed        uint64
	work        string
	fixtures    string
	loadRounds  int
	queryRounds int
	reps        int
	profile     bool
	keep        bool
	quiet       float64
	quietWait   time.Duration
	reuse       bool
}

// report is everything one run measured, written as JSON beside the stores.
type report struct {
	SizeMiB  int                     `json:"size_mib"`
	Seed     uint64                  `json:"seed"`
	Corpus   corpusHeader            `json:"corpus"`
	Started  time.Time               `json:"started"`
	Loads    []loadResult            `json:"loads"`
	Compacts []compactResult         `json:"compacts"`
	Counts   []countResult           `json:"counts"`
	Queries  []queryResult           `json:"queries"`
	Profile  string                  `json:"profile,omitempty"`
	Summary  map[string]queryFigures `json:"summary"`
	Load     []loadAverage           `json:"load_average"` // before each measurement
}

// loadAverage is the machine's 1-minute load average before a measurement, after waiting.
type loadAverage struct {
	Step   string  `json:"step"`
	Load   float64 `json:"load"`
	Waited float64 `json:"waited_seconds"`
}

func runBench(args []string) error {
	var o runOptions
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	fs.IntVar(&o.sizeMiB, "size", 64, "MiB of turn text in the corpus")
	fs.Uint64Var(&o.seed, "seed", 1, "the corpus's seed")
	fs.StringVar(&o.work, "work", filepath.Join(os.TempDir(), "searchbench"), "directory for the corpus, the stores and the results")
	fs.StringVar(&o.fixtures, "fixtures", "../../../shared/fixtures", "the recorded transcripts (heirloom's ../shared/fixtures)")
	fs.IntVar(&o.loadRounds, "load-rounds", 1, "loads of each engine, interleaved")
	fs.IntVar(&o.queryRounds, "query-rounds", 3, "query processes of each engine, interleaved")
	fs.IntVar(&o.reps, "reps", 20, "timed runs of each query in each query process")
	fs.BoolVar(&o.profile, "profile", false, "also run heirloom's queries once more under a CPU profile")
	fs.BoolVar(&o.keep, "keep", false, "keep the stores after the run")
	fs.Float64Var(&o.quiet, "quiet", 1.5, "before each measurement, wait until the 1-minute load average is below this")
	fs.DurationVar(&o.quietWait, "quiet-wait", 3*time.Minute, "but wait no longer than this")
	fs.BoolVar(&o.reuse, "reuse", false, "skip the loads: query the stores a previous run with -keep and the same -size and -load-rounds left")
	fs.Parse(args)

	if err := os.MkdirAll(o.work, 0o755); err != nil {
		return err
	}
	corpus := filepath.Join(o.work, fmt.Sprintf("corpus-%dMiB-seed%d.jsonl", o.sizeMiB, o.seed))
	if _, err := os.Stat(corpus); err != nil {
		logf("generating %s", corpus)
		if err := writeCorpus(corpus, int64(o.sizeMiB)<<20, o.seed, o.fixtures); err != nil {
			return err
		}
	}
	rep := report{SizeMiB: o.sizeMiB, Seed: o.seed, Started: time.Now().UTC()}
	hdr, err := readCorpus(corpus, func(corpusRecord) error { return io.EOF })
	if err != nil && err != io.EOF {
		return err
	}
	rep.Corpus = hdr

	base := filepath.Join(o.work, fmt.Sprintf("%dMiB", o.sizeMiB))
	dirOf := func(eng string, round int) string { return filepath.Join(base, fmt.Sprintf("%s-%d", eng, round)) }
	engines := []string{engHeirloom, engFTS5, engNoIndex}
	if !o.reuse {
		os.RemoveAll(base)
	}
	for r := 1; r <= o.loadRounds && !o.reuse; r++ {
		// Rotate the order, so that no engine always loads first (cold page cache, idle disk).
		order := append(slices.Clone(engines[(r-1)%3:]), engines[:(r-1)%3]...)
		for _, eng := range order {
			dir := dirOf(eng, r)
			var res loadResult
			o.settle(&rep, fmt.Sprintf("load %s %d", eng, r))
			if err := child(&res, "load", "-engine", eng, "-dir", dir, "-corpus", corpus); err != nil {
				return fmt.Errorf("load %s: %w", eng, err)
			}
			logf("load %-16s round %d: %.1f s in calls (%.1f s wall), peak RSS %s, disk %s (load average %.2f before)", eng, r, res.CallSeconds, res.WallSeconds, mib(res.HWM), mib(res.DiskAlloc), rep.Load[len(rep.Load)-1].Load)
			rep.Loads = append(rep.Loads, res)
			if r > 1 {
				os.RemoveAll(dirOf(eng, r-1))
			}
		}
	}
	last := o.loadRounds
	for _, eng := range engines {
		if o.reuse {
			break
		}
		var res compactResult
		o.settle(&rep, "compact "+eng)
		if err := child(&res, "compact", "-engine", eng, "-dir", dirOf(eng, last)); err != nil {
			return fmt.Errorf("compact %s: %w", eng, err)
		}
		logf("compact %-16s: %.1f s, disk %s", eng, res.Seconds, mib(res.DiskAlloc))
		rep.Compacts = append(rep.Compacts, res)
	}
	for _, eng := range []string{engHeirloom, engFTS5} {
		var res countResult
		if err := child(&res, "count", "-engine", eng, "-dir", dirOf(eng, last)); err != nil {
			return fmt.Errorf("count %s: %w", eng, err)
		}
		rep.Counts = append(rep.Counts, res)
	}
	for r := 1; r <= o.queryRounds; r++ {
		order := []string{engHeirloom, engFTS5}
		if r%2 == 0 {
			order = []string{engFTS5, engHeirloom}
		}
		for _, eng := range order {
			var res queryResult
			o.settle(&rep, fmt.Sprintf("query %s %d", eng, r))
			if err := child(&res, "query", "-engine", eng, "-dir", dirOf(eng, last), "-reps", fmt.Sprint(o.reps)); err != nil {
				return fmt.Errorf("query %s: %w", eng, err)
			}
			f := figuresOf([]queryResult{res})
			logf("query %-8s round %d: p50 %s p95 %s, RSS %s → peak %s (load average %.2f before)", eng, r, ms(f.P50), ms(f.P95), mib(res.RSSOpen), mib(res.HWM), rep.Load[len(rep.Load)-1].Load)
			rep.Queries = append(rep.Queries, res)
		}
	}
	if o.profile {
		rep.Profile = filepath.Join(o.work, fmt.Sprintf("heirloom-%dMiB.pprof", o.sizeMiB))
		var res queryResult
		if err := child(&res, "query", "-engine", engHeirloom, "-dir", dirOf(engHeirloom, last), "-reps", fmt.Sprint(o.reps), "-cpuprofile", rep.Profile); err != nil {
			return fmt.Errorf("profile: %w", err)
		}
		logf("CPU profile of heirloom's queries: %s", rep.Profile)
	}
	rep.Summary = summarize(rep)
	out := filepath.Join(o.work, fmt.Sprintf("results-%dMiB.json", o.sizeMiB))
	if o.reuse {
		out = filepath.Join(o.work, fmt.Sprintf("results-%dMiB-%s.json", o.sizeMiB, rep.Started.Format("150405")))
	}
	b, _ := json.MarshalIndent(rep, "", " ")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return err
	}
	printReport(os.Stdout, rep)
	logf("results: %s", out)
	if !o.keep && !o.reuse {
		os.RemoveAll(base)
	}
	return nil
}

// settle waits until the machine is quiet (see runOptions.quiet) and notes the load average.
func (o runOptions) settle(rep *report, step string) {
	start := time.Now()
	l := loadAvg()
	for l >= o.quiet && time.Since(start) < o.quietWait {
		time.Sleep(5 * time.Second)
		l = loadAvg()
	}
	rep.Load = append(rep.Load, loadAverage{Step: step, Load: l, Waited: time.Since(start).Seconds()})
	if l >= o.quiet {
		logf("%s: load average still %.2f after %s; measuring anyway", step, l, o.quietWait)
	}
}

func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	fmt.Sscan(string(b), &l)
	return l
}

func writeCorpus(file string, target int64, seed uint64, fixtures string) error {
	tmp := file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	st, err := generateCorpus(f, target, seed, fixtures)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	printCorpusStats(os.Stderr, st)
	return os.Rename(tmp, file)
}

// child runs this program as `searchbench child ARGS…` and decodes its JSON answer into v.
func child(v any, args ...string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, append([]string{"child"}, args...)...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return err
	}
	return json.Unmarshal(stdout.Bytes(), v)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func ms(ns float64) string {
	switch {
	case ns >= 100e6:
		return fmt.Sprintf("%.0f ms", ns/1e6)
	case ns >= 10e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	default:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	}
}

// percentile is the nearest-rank percentile of sorted xs.
func percentile(xs []int64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p/100*float64(len(xs)))) - 1
	return float64(xs[max(0, min(i, len(xs)-1))])
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// queryFigures are one engine's query latencies: over the whole set (every timed run of every
// query pooled, per process), and per query; each the median over the query processes.
type queryFigures struct {
	P50, P95 float64
	PerQuery map[string][2]float64
	RSSOpen  float64 // median baseline
	HWM      float64 // median peak
}

func figuresOf(rs []queryResult) queryFigures {
	f := queryFigures{PerQuery: map[string][2]float64{}}
	var p50s, p95s, open, hwm []float64
	per := map[string][2][]float64{}
	for _, r := range rs {
		var all []int64
		for _, q := range r.Queries {
			ns := slices.Clone(q.Nanos)
			slices.Sort(ns)
			all = append(all, ns...)
			x := per[q.Name]
			x[0] = append(x[0], percentile(ns, 50))
			x[1] = append(x[1], percentile(ns, 95))
			per[q.Name] = x
		}
		slices.Sort(all)
		p50s = append(p50s, percentile(all, 50))
		p95s = append(p95s, percentile(all, 95))
		open = append(open, float64(r.RSSOpen))
		hwm = append(hwm, float64(r.HWM))
	}
	f.P50, f.P95 = median(p50s), median(p95s)
	f.RSSOpen, f.HWM = median(open), median(hwm)
	for name, x := range per {
		f.PerQuery[name] = [2]float64{median(x[0]), median(x[1])}
	}
	return f
}

func summarize(rep report) map[string]queryFigures {
	out := map[string]queryFigures{}
	for _, eng := range []string{engHeirloom, engFTS5} {
		var rs []queryResult
		for _, r := range rep.Queries {
			if r.Engine == eng {
				rs = append(rs, r)
			}
		}
		out[eng] = figuresOf(rs)
	}
	return out
}

// printReport writes the run's tables in Markdown.
func printReport(w io.Writer, rep report) {
	h, f := rep.Summary[engHeirloom], rep.Summary[engFTS5]
	fmt.Fprintf(w, "\n## %d MiB of turn text (seed %d, %s)\n\n", rep.SizeMiB, rep.Seed, rep.Corpus.GoVersion)
	loads := map[string][]loadResult{}
	for _, l := range rep.Loads {
		loads[l.Engine] = append(loads[l.Engine], l)
	}
	comp := map[string]compactResult{}
	for _, c := range rep.Compacts {
		comp[c.Engine] = c
	}
	med := func(ls []loadResult, get func(loadResult) float64) float64 {
		var xs []float64
		for _, l := range ls {
			xs = append(xs, get(l))
		}
		return median(xs)
	}
	fmt.Fprintln(w, "| engine | load (in calls) | load (wall) | peak RSS, load | disk after load | compaction | disk after compaction |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, eng := range []string{engHeirloom, engNoIndex, engFTS5} {
		ls := loads[eng]
		if len(ls) == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %.1f s | %.1f s | %s | %s | %.1f s | %s |\n", eng,
			med(ls, func(l loadResult) float64 { return l.CallSeconds }),
			med(ls, func(l loadResult) float64 { return l.WallSeconds }),
			mib(int64(med(ls, func(l loadResult) float64 { return float64(l.HWM) }))),
			mib(int64(med(ls, func(l loadResult) float64 { return float64(l.DiskAlloc) }))),
			comp[eng].Seconds, mib(comp[eng].DiskAlloc))
	}
	if c := comp[engHeirloom]; c.PostingsBytes > 0 {
		fmt.Fprintf(w, "\nheirloom after compaction: turns %s, postings %s (Pebble's estimates)\n", mib(int64(c.TurnBytes)), mib(int64(c.PostingsBytes)))
	}
	counts := map[string]map[string]int{}
	for _, c := range rep.Counts {
		counts[c.Engine] = c.Counts
	}
	fmt.Fprintln(w, "\n| query | heirloom | FTS5 | matches (heirloom / FTS5) | p50 ratio | p95 ratio |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for _, q := range queries {
		hq, fq := h.PerQuery[q.Name], f.PerQuery[q.Name]
		fmt.Fprintf(w, "| %s: `%s` / `%s` | %s / %s | %s / %s | %d / %d | %.2f× | %.2f× |\n", q.Name, q.Heirloom, q.FTS5,
			ms(hq[0]), ms(hq[1]), ms(fq[0]), ms(fq[1]), counts[engHeirloom][q.Name], counts[engFTS5][q.Name], hq[0]/fq[0], hq[1]/fq[1])
	}
	fmt.Fprintf(w, "| **the set** | **%s / %s** | **%s / %s** | | **%.2f×** | **%.2f×** |\n", ms(h.P50), ms(h.P95), ms(f.P50), ms(f.P95), h.P50/f.P50, h.P95/f.P95)
	fmt.Fprintf(w, "\nquery processes: heirloom RSS %s at open → peak %s (+%s); FTS5 %s → %s (+%s)\n",
		mib(int64(h.RSSOpen)), mib(int64(h.HWM)), mib(int64(h.HWM-h.RSSOpen)), mib(int64(f.RSSOpen)), mib(int64(f.HWM)), mib(int64(f.HWM-f.RSSOpen)))
}

func printCorpusStats(w io.Writer, st corpusStats) {
	s := slices.Clone(st.Sizes)
	slices.Sort(s)
	q := func(p float64) int { return s[min(len(s)-1, int(p*float64(len(s))))] }
	var roles []string
	for r, n := range st.ByRole {
		roles = append(roles, fmt.Sprintf("%s %d", r, n))
	}
	slices.Sort(roles)
	fmt.Fprintf(w, "corpus: %d sessions + %d sub-agents, %d turns (%s), %s of text, %d turns from the recordings\n",
		st.Sessions, st.SubAgents, st.Turns, strings.Join(roles, ", "), mib(st.TextBytes), st.RealTurns)
	fmt.Fprintf(w, "turn sizes: p10 %d, p50 %d, p90 %d, p99 %d, max %d bytes; mean %d\n", q(.1), q(.5), q(.9), q(.99), s[len(s)-1], st.TextBytes/max(1, st.Turns))
}
