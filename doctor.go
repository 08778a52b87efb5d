package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/proxy"
)

// DoctorCommand is `heirloom doctor`: is the sidecar reachable and ready, is its store healthy,
// and for each harness, is its binary here and of a version heirloom was verified with, are
// heirloom's hooks, plugin and MCP entry installed and pointing at the running sidecar, and when
// did heirloom last hear from it. Each problem comes with its fix. The exit code is 1 when
// anything failed.
type DoctorCommand struct {
	Env    []string
	Stdout io.Writer
	Stderr io.Writer
	// Now is the time ages are relative to. Nil means time.Now.
	Now func() time.Time
}

// DoctorReport is `heirloom doctor --json`.
type DoctorReport struct {
	OK       bool            `json:"ok"` // no finding failed
	Sections []DoctorSection `json:"sections"`
}

// DoctorSection is the findings about heirloom itself, or about one harness.
type DoctorSection struct {
	Name     string             `json:"name"`
	Findings []adapters.Finding `json:"findings"`
}

// errProblems is the exit of a doctor that found something broken (already printed).
var errProblems = errors.New("problems found")

// Run checks and reports.
func (c *DoctorCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("heirloom doctor", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: heirloom doctor [--json] [--url URL]\n\nChecks that heirloom is wired right: the sidecar answers and is ready, its store is\nwritable, and for each harness its binary and version, heirloom's hooks, plugin and MCP entry\n(present, and pointing at the running sidecar), and when heirloom last heard from it. Each\nproblem comes with its fix; the exit code is 1 when anything failed.\n\nFlags:")
		fs.PrintDefaults()
	}
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	sidecarURL := urlFlag(fs)
	if err := parseFlags(fs, args, c.Stdout); err != nil {
		return err
	}
	report := c.check(ctx, *sidecarURL)
	if *asJSON {
		b, _ := json.MarshalIndent(report, "", "  ")
		fmt.Fprintf(c.Stdout, "%s\n", b)
	} else {
		printDoctor(c.Stdout, report)
	}
	if !report.OK {
		return errProblems
	}
	return nil
}

// check runs every check: heirloom's own first, then each harness's, in parallel.
func (c *DoctorCommand) check(ctx context.Context, flagURL string) DoctorReport {
	now := nowOr(c.Now)
	self := DoctorSection{Name: "heirloom"}
	add := func(f adapters.Finding) { self.Findings = append(self.Findings, f) }
	var status *proxy.StatusReply
	url := ""
	client := sidecar(c.Env, flagURL)
	loaded, cfgErr := loadClientConfig(c.Env)
	if cfgErr != nil {
		add(adapters.Finding{Check: "config", Status: adapters.StatusFail, Detail: cfgErr.Error() + " (the sidecar is looked for at " + client.URL + ")",
			Fix: "fix the file or variable it names (heirloom config show says where each value comes from)"})
	} else {
		add(adapters.Finding{Check: "config", Status: adapters.StatusOK, Detail: "the sidecar is looked for at " + client.URL})
	}
	if status = c.sidecarChecks(ctx, client, add, now); status != nil {
		url = client.URL
	}
	if cfgErr == nil {
		add(dataDirFinding(loaded.Config.DataDir, status))
	}

	report := DoctorReport{OK: true, Sections: []DoctorSection{self}}
	regs := harnesses().All()
	sections := make([]DoctorSection, len(regs))
	var wg sync.WaitGroup
	for i, h := range regs {
		insp, ok := h.Installer.(adapters.Inspector)
		if !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := adapters.InstallEnv{Getenv: getenvFrom(c.Env)}
			fs := insp.Inspect(ctx, env, url)
			fs = append(fs, heardFinding(h.Name, status, fs, now)...)
			sections[i] = DoctorSection{Name: h.Name, Findings: fs}
		}()
	}
	wg.Wait()
	for _, s := range sections {
		if s.Name != "" {
			report.Sections = append(report.Sections, s)
		}
	}
	for _, s := range report.Sections {
		for _, f := range s.Findings {
			if f.Status == adapters.StatusFail {
				report.OK = false
			}
		}
	}
	return report
}

// sidecarChecks asks the sidecar whether it is ready and for its status; the status is nil when
// it does not answer, or refuses the token.
func (c *DoctorCommand) sidecarChecks(ctx context.Context, client *proxy.Client, add func(adapters.Finding), now time.Time) *proxy.StatusReply {
	var status proxy.StatusReply
	_, err := client.Get(ctx, "/api/status", nil, &status)
	var absent *proxy.NotRunningError
	var apiErr *proxy.Error
	switch {
	case errors.As(err, &absent):
		add(adapters.Finding{Check: "sidecar", Status: adapters.StatusFail, Detail: "nothing answers at " + client.URL,
			Fix: "start it: heirloom serve (hooks and plugins fail open meanwhile: sub-agents start cold)"})
		return nil
	case errors.As(err, &apiErr) && apiErr.Code == proxy.ECodeUnauthorized:
		add(adapters.Finding{Check: "sidecar", Status: adapters.StatusOK, Detail: "heirloom answers at " + client.URL})
		add(adapters.Finding{Check: "token", Status: adapters.StatusFail, Detail: "the sidecar requires a token, and the one given (HEIRLOOM_TOKEN, or the config's token) is not it",
			Fix: "set HEIRLOOM_TOKEN to the sidecar's token (its config's token or HEIRLOOM_TOKEN), in this shell and in the harnesses' environment"})
		return nil
	case err != nil:
		add(adapters.Finding{Check: "sidecar", Status: adapters.StatusFail, Detail: err.Error(), Fix: "is something else listening there? heirloom config show says where heirloom listens"})
		return nil
	}
	add(adapters.Finding{Check: "sidecar", Status: adapters.StatusOK, Detail: fmt.Sprintf("heirloom %s answers at %s (scope %s)", status.Version, client.URL, status.Scope)})
	if status.Token {
		add(adapters.Finding{Check: "token", Status: adapters.StatusOK, Detail: "the sidecar requires a token, and this one is it; the hook shim and plugins read HEIRLOOM_TOKEN from the harness's environment"})
	}
	if ready, why := readyz(ctx, client); !ready {
		add(adapters.Finding{Check: "ready", Status: adapters.StatusFail, Detail: "not ready: " + why, Fix: "see the sidecar's log; a full disk, or a data dir it cannot write"})
	}
	st := status.Store
	detail := fmt.Sprintf("%s: %s on disk, %d compactions since it started", st.Dir, sizeOf(st.Bytes), st.Compactions)
	if st.TotalBytes > 0 {
		detail += fmt.Sprintf(", %s free of %s (it keeps %s)", sizeOf(st.FreeBytes), sizeOf(st.TotalBytes), sizeOf(uint64(max(st.Reserve, 0))))
	}
	if !st.LastCompaction.IsZero() {
		detail += ", the last " + ago(st.LastCompaction, now)
	}
	switch {
	case !st.Writable:
		add(adapters.Finding{Check: "store", Status: adapters.StatusFail, Detail: detail + "; not writable: " + st.Error, Fix: "free disk space, or fix the data dir's permissions; heirloom resumes by itself"})
	default:
		add(adapters.Finding{Check: "store", Status: adapters.StatusOK, Detail: detail + "; writable"})
	}
	ix := status.Index
	switch {
	case !ix.Enabled:
		add(adapters.Finding{Check: "index", Status: adapters.StatusWarn, Detail: "the sidecar runs without a search index"})
	case ix.Building:
		add(adapters.Finding{Check: "index", Status: adapters.StatusOK, Detail: fmt.Sprintf("search index v%d rebuilding: %d of %d turns (searches see those so far)", ix.Version, ix.Done, ix.Total)})
	default:
		add(adapters.Finding{Check: "index", Status: adapters.StatusOK, Detail: fmt.Sprintf("search index v%d ready", ix.Version)})
	}
	for _, s := range status.Streams {
		f := adapters.Finding{Check: "follows " + s.Harness, Status: adapters.StatusOK, Detail: "connected to " + s.Target}
		if !s.Connected {
			f.Status, f.Detail, f.Fix = adapters.StatusFail, "not connected to "+s.Target+" (retrying)", "is "+s.Harness+" running there? heirloom reconnects by itself"
		}
		add(f)
	}
	return &status
}

// readyz asks GET /readyz; why is its body when it is not ready.
func readyz(ctx context.Context, client *proxy.Client) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(client.URL, "/")+"/readyz", nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return resp.StatusCode == http.StatusOK, strings.TrimSpace(string(body))
}

// dataDirFinding checks the configured data dir: writable here, and the one the running sidecar
// uses.
func dataDirFinding(dir string, status *proxy.StatusReply) adapters.Finding {
	f := adapters.Finding{Check: "data dir"}
	if status != nil && status.Store.Dir != "" && filepath.Clean(status.Store.Dir) != filepath.Clean(dir) {
		f.Status, f.Detail = adapters.StatusWarn, "the configuration here names "+dir+", the running sidecar uses "+status.Store.Dir
		f.Fix = "run the commands with the sidecar's configuration (HEIRLOOM_CONFIG, HEIRLOOM_DATA_DIR)"
		return f
	}
	probe, err := os.CreateTemp(dir, ".doctor-*")
	switch {
	case errors.Is(err, os.ErrNotExist):
		f.Status, f.Detail = adapters.StatusOK, dir+" does not exist yet; heirloom serve creates it"
	case err != nil:
		f.Status, f.Detail, f.Fix = adapters.StatusFail, dir+" is not writable: "+err.Error(), "fix its permissions, or set data_dir"
	default:
		probe.Close()
		os.Remove(probe.Name())
		f.Status, f.Detail = adapters.StatusOK, dir+" is writable"
	}
	return f
}

// heardFinding says when the sidecar last heard from harness; nothing when the sidecar did not
// answer. Never heard from is a warning when heirloom's entries for it are installed.
func heardFinding(harness string, status *proxy.StatusReply, found []adapters.Finding, now time.Time) []adapters.Finding {
	if status == nil {
		return nil
	}
	if t, ok := status.Harnesses[harness]; ok {
		return []adapters.Finding{{Check: "last heard", Status: adapters.StatusOK, Detail: ago(t, now)}}
	}
	installed := false
	for _, f := range found {
		if f.Check != "binary" && f.Status != adapters.StatusWarn {
			installed = true
		}
	}
	if !installed {
		return nil
	}
	return []adapters.Finding{{Check: "last heard", Status: adapters.StatusWarn, Detail: "not since the sidecar started",
		Fix: "fine if you have not used " + harness + " since; else its hooks or plugin do not reach this sidecar (restart the harness after an install)"}}
}

// printDoctor prints the report: one line per finding, its fix below it, and a summary.
func printDoctor(out io.Writer, r DoctorReport) {
	fails, warns := 0, 0
	for _, s := range r.Sections {
		fmt.Fprintln(out, s.Name)
		for _, f := range s.Findings {
			fmt.Fprintf(out, "  %-4s  %-12s %s\n", f.Status, f.Check, f.Detail)
			if f.Fix != "" && f.Status != adapters.StatusOK {
				fmt.Fprintf(out, "        %-12s fix: %s\n", "", f.Fix)
			}
			switch f.Status {
			case adapters.StatusFail:
				fails++
			case adapters.StatusWarn:
				warns++
			}
		}
	}
	switch {
	case fails > 0:
		fmt.Fprintf(out, "\n%d problem(s), %d warning(s)\n", fails, warns)
	case warns > 0:
		fmt.Fprintf(out, "\nno problems; %d warning(s)\n", warns)
	default:
		fmt.Fprintln(out, "\nall good")
	}
}

// sizeOf says n bytes in KiB, MiB or GiB.
func sizeOf(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
}

// getenvFrom reads env ("KEY=VALUE" pairs) as os.Getenv reads the process's.
func getenvFrom(env []string) func(string) string {
	return func(key string) string { return lookup(env, key, "") }
}
