package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Config is what a soak runs. DefaultConfig fills every field; zero values are not defaults.
type Config struct {
	Bin  string `json:"bin,omitempty"`  // the heirloom binary; "" builds one from Repo
	Repo string `json:"repo,omitempty"` // the module's root (the recordings are read there); "" finds it above the working directory
	Dir  string `json:"dir,omitempty"`  // where the data dir and transcripts go, on disk; "" makes a temp dir (never on tmpfs)
	Keep bool   `json:"keep,omitempty"` // keep Dir's contents at the end

	Duration   time.Duration `json:"duration"`    // how long the load runs
	Interval   time.Duration `json:"interval"`    // between samples
	IdleBefore time.Duration `json:"idle_before"` // heirloom idle, following the stand-ins, before the load
	IdleAfter  time.Duration `json:"idle_after"`  // heirloom idle after the load, before the last sample

	Sessions  int           `json:"sessions"`   // Claude Code sessions running at once
	HookPause time.Duration `json:"hook_pause"` // a session's mean pause after each hook call
	SlowHook  time.Duration `json:"slow_hook"`  // a hook reply slower than this blocks the harness: counted as slow

	OpenCodeRate    float64 `json:"opencode_frames_per_s"`  // OpenCode frames offered per second, all conversations together
	OpenCodeStreams int     `json:"opencode_conversations"` // OpenCode conversations interleaved at once
	OpenClawRate    float64 `json:"openclaw_frames_per_s"`
	OpenClawStreams int     `json:"openclaw_conversations"`
	TextScale       float64 `json:"text_scale"` // streamed texts' size relative to the default (100–3,000 bytes)

	SearchPeriod time.Duration `json:"search_period"` // one POST /api/sessions/search per period
	MCPPeriod    time.Duration `json:"mcp_period"`    // one /mcp tool call per period
	InjectPeriod time.Duration `json:"inject_period"` // one POST /api/inject per period
	Feeds        int           `json:"feeds"`         // live feed consumers; one more reconnects every 15–25 s
	RestartEvery time.Duration `json:"restart_every"` // an upstream stand-in restarts every half of this, OpenCode and OpenClaw in turn; 0: never

	Limits Limits `json:"limits"`
	Seed   uint64 `json:"seed"`

	// Logf, when not nil, gets the running log: a line per sample, restarts, phases.
	Logf func(format string, args ...any) `json:"-"`
}

// DefaultConfig is a two-minute soak as CI runs it.
func DefaultConfig() Config {
	return Config{
		Duration:        2 * time.Minute,
		Interval:        10 * time.Second,
		IdleBefore:      10 * time.Second,
		IdleAfter:       30 * time.Second,
		Sessions:        8,
		HookPause:       50 * time.Millisecond,
		SlowHook:        2 * time.Second,
		OpenCodeRate:    300,
		OpenCodeStreams: 4,
		OpenClawRate:    100,
		OpenClawStreams: 2,
		TextScale:       1,
		SearchPeriod:    250 * time.Millisecond,
		MCPPeriod:       500 * time.Millisecond,
		InjectPeriod:    500 * time.Millisecond,
		Feeds:           2,
		RestartEvery:    60 * time.Second,
		Limits:          DefaultLimits(),
		Seed:            1,
	}
}

// soak is one run.
type soak struct {
	cfg         Config
	seed        uint64
	heirloom    *sidecar
	transcripts string
	start       time.Time // when the load began
	lat         *latencies

	hooks, ingested, feedEvents, feedConnects, feedDrops atomic.Int64
	searchHits, degraded, degradedInject                 atomic.Int64
	framesSent                                           map[string]*atomic.Int64

	recentClaude, recentOCChildren, recentClawChildren ring

	mu         sync.Mutex
	violations []string
	errs       map[string][]string
	restarts   []Restart
}

// maxErrorsKept is how many error messages of each path a report keeps.
const maxErrorsKept = 5

func (s *soak) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// fail records a violation: the run fails.
func (s *soak) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.violations = append(s.violations, msg)
	s.mu.Unlock()
	s.logf("FAIL: %s", msg)
}

// errorf keeps the first errors of a path for the report; the count is the latencies'.
func (s *soak) errorf(path, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs[path]) < maxErrorsKept {
		s.errs[path] = append(s.errs[path], fmt.Sprintf("%.1fs: ", time.Since(s.start).Seconds())+fmt.Sprintf(format, args...))
	}
}

// Run runs a soak as cfg says and returns its report. It returns an error only when the soak
// could not run (no binary, no stand-in, heirloom would not start); what went wrong under load
// is in the report's Violations.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	s := &soak{cfg: cfg, seed: cfg.Seed, lat: newLatencies(), errs: map[string][]string{},
		framesSent: map[string]*atomic.Int64{"opencode": {}, "openclaw": {}}}
	rep := &Report{Started: time.Now().UTC(), Config: cfg}

	repo, err := findRepo(cfg.Repo)
	if err != nil {
		return nil, err
	}
	dir, cleanup, err := workDir(cfg.Dir, cfg.Keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	bin := cfg.Bin
	if bin == "" {
		s.logf("building heirloom")
		bin = filepath.Join(dir, "heirloom")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build heirloom: %v\n%s", err, out)
		}
	}
	rep.Binary = bin

	oc, err := newOpenCode(filepath.Join(repo, "adapters/opencode/testdata/parent-child-compact.sse"))
	if err != nil {
		return nil, err
	}
	defer oc.close()
	claw, err := newOpenClaw(filepath.Join(repo, "adapters/openclaw/testdata/live/spawn.all-frames.json"))
	if err != nil {
		return nil, err
	}
	defer claw.close()

	s.transcripts = filepath.Join(dir, "home", ".claude", "projects")
	if err := os.MkdirAll(s.transcripts, 0o755); err != nil {
		return nil, err
	}
	rep.DataDir = filepath.Join(dir, "data")
	s.heirloom, err = startSidecar(ctx, sidecarOptions{Bin: bin, DataDir: rep.DataDir, Home: filepath.Join(dir, "home"), Env: []string{
		"HEIRLOOM_ADAPTERS__CLAUDE_CODE__TRANSCRIPT_ROOTS=" + s.transcripts,
		"HEIRLOOM_ADAPTERS__OPENCODE__SERVERS=" + oc.URL(),
		"HEIRLOOM_ADAPTERS__OPENCLAW__URL=" + claw.gw.URL(),
		"HEIRLOOM_ADAPTERS__OPENCLAW__TOKEN=" + clawToken,
	}})
	if err != nil {
		return nil, err
	}
	defer s.heirloom.stop()
	s.logf("heirloom %s (pid %d), data in %s; OpenCode stand-in %s, Gateway stand-in %s",
		s.heirloom.URL, s.heirloom.pid, rep.DataDir, oc.URL(), claw.gw.URL())

	// Idle: heirloom follows both stand-ins, nothing happens.
	s.start = time.Now().Add(cfg.IdleBefore)
	var samples []Sample
	prev := s.sample(ctx, PhaseIdle, nil)
	samples = append(samples, prev)
	for end := s.start; time.Now().Before(end) && ctx.Err() == nil; {
		sleep(ctx, min(cfg.Interval, time.Until(end)))
		prev = s.sample(ctx, PhaseIdle, &prev)
		samples = append(samples, prev)
	}
	s.logf("%s", sampleLine(prev))
	storedBefore, runsBefore := map[string]float64{}, map[string]float64{}
	if m, err := s.heirloom.scrape(ctx); err == nil {
		for _, h := range harnesses {
			storedBefore[h], runsBefore[h] = streamStored(m, h), runsCompleted(m, h)
		}
	}

	// Load.
	s.start = time.Now()
	s.lat.takeInterval("")
	load, stopLoad := context.WithTimeout(ctx, cfg.Duration)
	var wg sync.WaitGroup
	spawn := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	rnd := func(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(s.seed, stream)) }
	for i := range cfg.Sessions {
		spawn(func() { s.claudeWorker(load, i) })
	}
	if cfg.OpenCodeRate > 0 {
		pace := time.Duration(float64(time.Second) * float64(cfg.OpenCodeStreams) / cfg.OpenCodeRate)
		for i := range cfg.OpenCodeStreams {
			spawn(func() { oc.generate(load, s, rnd(100+uint64(i)), pace) })
		}
	}
	if cfg.OpenClawRate > 0 {
		pace := time.Duration(float64(time.Second) * float64(cfg.OpenClawStreams) / cfg.OpenClawRate)
		var conv atomic.Int64
		for i := range cfg.OpenClawStreams {
			spawn(func() { claw.generate(load, s, rnd(200+uint64(i)), pace, func() int64 { return conv.Add(1) }) })
		}
	}
	if cfg.SearchPeriod > 0 {
		spawn(func() { s.searcher(load, rnd(300), cfg.SearchPeriod) })
	}
	if cfg.MCPPeriod > 0 {
		spawn(func() { s.mcpCaller(load, rnd(301), cfg.MCPPeriod) })
	}
	if cfg.InjectPeriod > 0 {
		spawn(func() { s.injector(load, rnd(302), cfg.InjectPeriod) })
	}
	for i := range cfg.Feeds + 1 {
		spawn(func() { s.feedConsumer(load, rnd(400+uint64(i)), i == cfg.Feeds) })
	}
	if cfg.RestartEvery > 0 {
		spawn(func() { s.restarter(load, rnd(500), oc, claw) })
	}
	for load.Err() == nil {
		sleep(load, cfg.Interval)
		prev = s.sample(ctx, PhaseLoad, &prev)
		samples = append(samples, prev)
		s.logf("%s", sampleLine(prev))
		if s.heirloom.exited() {
			s.fail("heirloom exited under load (%v):\n%s", s.heirloom.waitErr, s.heirloom.Logs())
			break
		}
	}
	stopLoad()
	wg.Wait()
	rep.Duration = time.Since(s.start).Seconds()
	rep.Stored, rep.Runs = map[string]int64{}, map[string]int64{}
	if m, err := s.heirloom.scrape(ctx); err == nil {
		for _, h := range harnesses {
			if _, ok := s.framesSent[h]; ok {
				rep.Stored[h] = int64(streamStored(m, h) - storedBefore[h])
			}
			rep.Runs[h] = int64(runsCompleted(m, h) - runsBefore[h])
		}
	}

	// After: the load's keep-alive connections go, heirloom sits idle.
	s.heirloom.http.CloseIdleConnections()
	afterEnd := time.Now().Add(cfg.IdleAfter)
	for time.Now().Before(afterEnd) && ctx.Err() == nil && !s.heirloom.exited() {
		sleep(ctx, min(cfg.Interval, time.Until(afterEnd)))
		prev = s.sample(ctx, PhaseAfter, &prev)
		samples = append(samples, prev)
	}
	s.logf("%s", sampleLine(prev))
	_, hwm, _ := s.heirloom.memory()
	if err := s.heirloom.stop(); err != nil {
		s.fail("heirloom did not stop cleanly: %v\n%s", err, s.heirloom.Logs())
	}

	s.report(rep, samples, hwm)
	for _, e := range claw.tb.errors() {
		rep.Notes = append(rep.Notes, "gateway stand-in: "+e)
	}
	return rep, ctx.Err()
}

// report fills rep from the run and judges it.
func (s *soak) report(rep *Report, samples []Sample, hwm int64) {
	cfg := s.cfg
	rep.Samples = samples
	rep.PeakRSS = hwm
	for _, sm := range samples {
		switch sm.Phase {
		case PhaseIdle:
			rep.IdleRSSBefore, rep.GoroutinesIdleBefore = sm.RSS, sm.Goroutines
		case PhaseAfter:
			rep.IdleRSSAfter, rep.GoroutinesIdleAfter = sm.RSS, sm.Goroutines
		}
		rep.PeakRSSLoad = max(rep.PeakRSSLoad, sm.RSS)
		rep.GoroutinesPeak = max(rep.GoroutinesPeak, sm.Goroutines)
		rep.StoreBytes = sm.StoreBytes
	}
	rep.Ingested = s.ingested.Load()
	rep.Hooks = s.hooks.Load()
	rep.Sent = map[string]int64{}
	for h, n := range s.framesSent {
		rep.Sent[h] = n.Load()
	}
	rep.FeedEvents, rep.FeedConns, rep.FeedDrops = s.feedEvents.Load(), s.feedConnects.Load(), s.feedDrops.Load()
	rep.SearchHits, rep.Degraded, rep.DegradedIn = s.searchHits.Load(), s.degraded.Load(), s.degradedInject.Load()
	rep.Paths = s.lat.totals()
	rep.HookAll = s.lat.group("hook:")
	rep.Logs = s.heirloom.logCounts()

	s.mu.Lock()
	rep.Errors = s.errs
	rep.Restarts = s.restarts
	rep.Violations = append(rep.Violations, s.violations...)
	s.mu.Unlock()

	v, notes := CheckGrowth(samples, cfg.Limits)
	rep.Violations = append(rep.Violations, v...)
	rep.Notes = append(rep.Notes, notes...)
	for name, l := range rep.Paths {
		if l.Errors > 0 {
			rep.Violations = append(rep.Violations, fmt.Sprintf("%s: %d of %d calls failed", name, l.Errors, l.Calls+l.Errors))
		}
	}
	if h := rep.HookAll; h.Slow*100 > h.Calls {
		rep.Violations = append(rep.Violations, fmt.Sprintf("%d of %d hook replies took over %s: the harness waits", h.Slow, h.Calls, cfg.SlowHook))
	}
	if rep.HookAll.Calls == 0 && cfg.Sessions > 0 {
		rep.Violations = append(rep.Violations, "no hook call was answered")
	}
	for h, on := range map[string]bool{"claude-code": cfg.Sessions > 0, "opencode": cfg.OpenCodeRate > 0, "openclaw": cfg.OpenClawRate > 0} {
		switch {
		case !on:
		case h != "claude-code" && rep.Stored[h] == 0:
			rep.Violations = append(rep.Violations, fmt.Sprintf("nothing from the %s stream was stored under load", h))
		case rep.Runs[h] == 0:
			rep.Violations = append(rep.Violations, fmt.Sprintf("no %s sub-agent run completed under load", h))
		}
	}
}

// sample reads heirloom's memory and metrics and the soak's counters; prev, when not nil, is
// the sample before, for the rates.
func (s *soak) sample(ctx context.Context, phase string, prev *Sample) Sample {
	now := time.Now()
	sm := Sample{T: now.Sub(s.start).Seconds(), Phase: phase, Ingested: s.ingested.Load(),
		Stored: map[string]float64{}, Sent: map[string]float64{}, Connected: map[string]bool{}}
	sm.RSS, _, _ = s.heirloom.memory()
	m, err := s.heirloom.scrape(ctx)
	if err != nil && ctx.Err() == nil && !s.heirloom.exited() {
		s.errorf("metrics", "%v", err)
		s.lat.record("metrics", 0, true, false)
	}
	sm.Goroutines = int(m.sum("go_goroutines"))
	sm.HeapInuse = int64(m.sum("go_memstats_heap_inuse_bytes"))
	sm.OpenFDs = int(m.sum("process_open_fds"))
	sm.StoreBytes = int64(m.sum("heirloom_store_bytes"))
	counts := map[string]float64{"hooks": float64(s.hooks.Load()), "feed": float64(s.feedEvents.Load()), "ingested": float64(sm.Ingested)}
	for h, n := range s.framesSent {
		counts["stored:"+h] = streamStored(m, h)
		counts["sent:"+h] = float64(n.Load())
		sm.Connected[h] = m.sum("heirloom_stream_connected", `harness="`+h+`"`) > 0
	}
	sm.counts = counts
	if phase == PhaseLoad {
		var hook Latency
		sm.Paths, hook = s.lat.takeInterval("hook:")
		sm.Hook = &hook
		sm.Degraded = s.degraded.Load()
	}
	if prev != nil && prev.counts != nil {
		dt := sm.T - prev.T
		rate := func(k string) float64 {
			if dt <= 0 {
				return 0
			}
			return (counts[k] - prev.counts[k]) / dt
		}
		sm.Hooks, sm.Feed, sm.IngestRate = rate("hooks"), rate("feed"), rate("ingested")
		for h := range s.framesSent {
			sm.Stored[h], sm.Sent[h] = rate("stored:"+h), rate("sent:"+h)
		}
	}
	return sm
}

// harnesses are the harnesses the soak drives.
var harnesses = []string{"claude-code", "opencode", "openclaw"}

// runsCompleted is how many sub-agent runs of harness h heirloom has seen complete.
func runsCompleted(m metrics, h string) float64 {
	return m.sum("heirloom_runs_ended_total", `harness="`+h+`"`, `end_reason="completed"`)
}

// streamStored is how many events heirloom's client for harness h has handed to the engine
// and the engine accepted.
func streamStored(m metrics, h string) float64 {
	return m.sum("heirloom_adapter_events_total", `harness="`+h+`"`, `source="stream"`, `outcome="accepted"`)
}

// restarter restarts the stand-ins in turn, OpenCode first, one every half of RestartEvery,
// until ctx ends: each is down for 0.5–3 s; OpenCode's stream ends cleanly every other time.
// After each, heirloom must reconnect within a minute.
func (s *soak) restarter(ctx context.Context, r *rand.Rand, oc *openCode, claw *openClaw) {
	for k := 0; sleep(ctx, s.cfg.RestartEvery/2); k++ {
		down := 500*time.Millisecond + time.Duration(r.IntN(2500))*time.Millisecond
		h, clean := "opencode", k%4 == 0
		do := func() error { return oc.restart(ctx, down, clean) }
		if k%2 == 1 {
			h, clean = "openclaw", true // gatewaytest closes with 1012 "service restart", as OpenClaw does
			do = func() error { return claw.restart(ctx, down) }
		}
		before, _ := s.heirloom.scrape(ctx)
		connects := before.sum("heirloom_stream_connects_total", `harness="`+h+`"`)
		rs := Restart{Harness: h, At: time.Since(s.start).Seconds(), DownMs: down.Milliseconds(), Clean: clean, ReconnectMs: -1}
		if err := do(); err != nil {
			if ctx.Err() == nil {
				s.fail("restart the %s stand-in: %v", h, err)
			}
			return
		}
		up := time.Now()
		for deadline := up.Add(time.Minute); time.Now().Before(deadline); {
			m, err := s.heirloom.scrape(ctx)
			if err == nil && m.sum("heirloom_stream_connects_total", `harness="`+h+`"`) > connects && m.sum("heirloom_stream_connected", `harness="`+h+`"`) > 0 {
				rs.ReconnectMs, rs.StoredAfter = time.Since(up).Milliseconds(), -1
				stored := streamStored(m, h)
				if sleep(ctx, 5*time.Second) {
					if m2, err := s.heirloom.scrape(ctx); err == nil {
						rs.StoredAfter = streamStored(m2, h) - stored
					}
				}
				break
			}
			if !sleep(ctx, 100*time.Millisecond) {
				return // the load ended while waiting: not judged
			}
		}
		s.logf("restarted the %s stand-in at %.0fs: down %v, clean %v, heirloom reconnected after %d ms", h, rs.At, down, clean, rs.ReconnectMs)
		if rs.ReconnectMs < 0 {
			s.fail("heirloom did not reconnect to the %s stand-in within a minute of its restart at %.0fs", h, rs.At)
		}
		s.mu.Lock()
		s.restarts = append(s.restarts, rs)
		s.mu.Unlock()
	}
}

// findRepo returns dir, or the nearest directory at or above the working directory whose go.mod
// is heirloom's.
func findRepo(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/heirloom-dev/heirloom\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("heirloom's module not found above the working directory: give -repo")
		}
	}
}

// tmpfsMagic is tmpfs's f_type in statfs(2).
const tmpfsMagic = 0x01021994

// workDir returns the directory a run works in, on disk, and a function that removes what the
// run put there unless keep. Without dir, it is a new temp dir; when TMPDIR is a tmpfs (where
// an fsync costs nothing, so the figures would lie), it goes under the user's cache dir.
func workDir(dir string, keep bool) (string, func(), error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, err
		}
		if onTmpfs(dir) {
			return "", nil, fmt.Errorf("%s is on tmpfs: the soak needs a disk", dir)
		}
		d, err := os.MkdirTemp(dir, "soak-")
		return d, removeUnless(d, keep), err
	}
	parent := os.TempDir()
	if onTmpfs(parent) {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", nil, fmt.Errorf("%s is on tmpfs and there is no cache dir: give -dir", parent)
		}
		parent = filepath.Join(cache, "heirloom-soak")
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return "", nil, err
		}
	}
	d, err := os.MkdirTemp(parent, "heirloom-soak-")
	return d, removeUnless(d, keep), err
}

func removeUnless(dir string, keep bool) func() {
	return func() {
		if !keep {
			os.RemoveAll(dir)
		}
	}
}

func onTmpfs(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == tmpfsMagic
}
