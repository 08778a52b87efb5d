//go:build unix

package main_test

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchRow is one process BenchmarkHook starts per hook.
type benchRow struct {
	name  string   // the metric's prefix
	argv  []string // the command
	want  string   // its stdout; "" for any
	goBin bool     // a Go binary, whose package initialisation is traced
}

// hookRows returns the processes compared: the light hook binary, the full heirloom binary's
// hook command, a minimal stdlib-only shim (testdata/minimalshim), and, when withNode is set,
// `node -e 0` with the node on PATH and with the Node 24 the e2e tests install
// (e2e/npm/node24), each when present.
func hookRows(b *testing.B, withNode bool) []benchRow {
	rows := []benchRow{
		{name: "heirloom-hook", argv: []string{hookBin(b), "claude-code"}, want: "{}\n", goBin: true},
		{name: "heirloom", argv: []string{binary(b, "heirloom", "github.com/heirloom-dev/heirloom"), "hook", "claude-code"}, want: "{}\n", goBin: true},
		{name: "minimal", argv: []string{binary(b, "minimalshim", "./testdata/minimalshim")}, want: "{}\n", goBin: true},
	}
	if node, err := exec.LookPath("node"); err == nil && withNode {
		rows = append(rows, benchRow{name: "node", argv: []string{node, "-e", "0"}})
	}
	if node24, err := filepath.Abs(filepath.Join("..", "..", "e2e", "npm", "node24", "node_modules", ".bin", "node")); err == nil && withNode {
		if _, err := os.Stat(node24); err == nil {
			rows = append(rows, benchRow{name: "node24", argv: []string{node24, "-e", "0"}})
		}
	}
	return rows
}

// startSidecar runs `heirloom serve` on a free port over a temp data dir, as a user would, and
// returns its URL once /readyz answers; it is stopped in b.Cleanup.
func startSidecar(b *testing.B, env []string) string {
	b.Helper()
	url := freeURL(b)
	cmd := exec.Command(binary(b, "heirloom", "github.com/heirloom-dev/heirloom"),
		"serve", "--listen", strings.TrimPrefix(url, "http://"), "--data-dir", b.TempDir())
	cmd.Env = env
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if resp, err := http.Get(url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		select {
		case err := <-done:
			b.Fatalf("heirloom serve exited: %v\n%s", err, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	b.Fatalf("heirloom serve not ready in 30s\n%s", logs.String())
	return ""
}

// runRow starts row once with a SessionStart payload on stdin, for the session label names
// (see benchSessionID), and returns how long the process took and its stderr.
func runRow(b *testing.B, row benchRow, env []string, label string) (time.Duration, string) {
	id := benchSessionID(label)
	payload := fmt.Sprintf(`{"session_id":%q,"transcript_path":"/nonexistent/%s.jsonl","cwd":"/tmp","hook_event_name":"SessionStart","source":"startup"}`, id, id)
	cmd := exec.Command(row.argv[0], row.argv[1:]...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", row.name, err, stderr.String())
	}
	if row.want != "" && stdout.String() != row.want {
		b.Fatalf("%s: stdout %q, want %q", row.name, stdout.String(), row.want)
	}
	return elapsed, stderr.String()
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// BenchmarkHook measures the whole process of one command hook, exec'd with a SessionStart
// payload on stdin, for every row of hookRows side by side: each iteration starts every row
// once, in an order that rotates, so the machine's load drifts over all rows alike. Compare the
// ratios; the absolute times depend on the machine and its load.
//
// sidecar runs against `heirloom serve` (a subprocess over a temp data dir: one synced write per
// new session), nothing-listening against a closed port (the warning path). Each reports the
// median time per hook of each row, "<row>-ms", and the ratios "hook/minimal" and
// "heirloom/minimal"; ns/op is suppressed, since one op is a hook of every row.
//
// inittrace runs the Go rows with GODEBUG=inittrace=1 against a closed port and reports, per
// row, the packages that did init work ("<row>-inits") and the median of their summed init
// clock time ("<row>-init-ms").
func BenchmarkHook(b *testing.B) {
	env := []string{"HOME=" + b.TempDir(), "PATH=" + os.Getenv("PATH")}
	b.Run("sidecar", func(b *testing.B) {
		benchRows(b, hookRows(b, true), append(env, "HEIRLOOM_URL="+startSidecar(b, env)))
	})
	b.Run("nothing-listening", func(b *testing.B) {
		benchRows(b, hookRows(b, false), append(env, "HEIRLOOM_URL="+freeURL(b)))
	})
	// wrap is proxy mode in front of an existing command hook: the shim runs `echo {}` beside
	// its sidecar call (heirloom adds nothing to a new session's SessionStart, so echo's reply
	// passes through byte for byte), beside echo alone.
	b.Run("wrap", func(b *testing.B) {
		echo, err := exec.LookPath("echo")
		if err != nil {
			b.Skip("echo not found")
		}
		rows := []benchRow{
			{name: "echo", argv: []string{echo, "{}"}, want: "{}\n"},
			{name: "heirloom-hook-wrap", argv: []string{hookBin(b), "claude-code", "--", echo, "{}"}, want: "{}\n"},
			{name: "heirloom-wrap", argv: []string{binary(b, "heirloom", "github.com/heirloom-dev/heirloom"), "hook", "claude-code", "--", echo, "{}"}, want: "{}\n"},
		}
		benchRows(b, rows, append(env, "HEIRLOOM_URL="+startSidecar(b, env)))
	})
	b.Run("inittrace", func(b *testing.B) {
		var rows []benchRow
		for _, r := range hookRows(b, false) {
			if r.goBin {
				r.want = ""
				rows = append(rows, r)
			}
		}
		traceEnv := append(env, "HEIRLOOM_URL="+freeURL(b), "GODEBUG=inittrace=1")
		inits := make([][]float64, len(rows))
		initMS := make([][]float64, len(rows))
		i := 0
		for b.Loop() {
			for k := range rows {
				j := (i + k) % len(rows)
				_, stderr := runRow(b, rows[j], traceEnv, fmt.Sprintf("trace-%d-%d", i, j))
				n, ms := sumInitTrace(stderr)
				inits[j] = append(inits[j], float64(n))
				initMS[j] = append(initMS[j], ms)
			}
			i++
		}
		for j, r := range rows {
			b.ReportMetric(median(inits[j]), r.name+"-inits")
			b.ReportMetric(median(initMS[j]), r.name+"-init-ms")
		}
		b.ReportMetric(0, "ns/op")
	})
}

// benchRows runs every row once per iteration in a rotating order and reports their medians.
func benchRows(b *testing.B, rows []benchRow, env []string) {
	times := make([][]float64, len(rows))
	i := 0
	for b.Loop() {
		for k := range rows {
			j := (i + k) % len(rows)
			d, _ := runRow(b, rows[j], env, fmt.Sprintf("%s-%d-%d", b.Name(), i, j))
			times[j] = append(times[j], float64(d)/float64(time.Millisecond))
		}
		i++
	}
	med := make(map[string]float64)
	for j, r := range rows {
		med[r.name] = median(times[j])
		b.ReportMetric(med[r.name], r.name+"-ms")
	}
	if med["minimal"] > 0 {
		b.ReportMetric(med["heirloom-hook"]/med["minimal"], "hook/minimal")
		b.ReportMetric(med["heirloom"]/med["minimal"], "heirloom/minimal")
	}
	b.ReportMetric(0, "ns/op")
}

// sumInitTrace counts the "init PKG @… ms, N ms clock, …" lines GODEBUG=inittrace=1 writes to
// stderr and sums their clock times, in milliseconds.
func sumInitTrace(stderr string) (n int, ms float64) {
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// init PKG @0.036 ms, 0.054 ms clock, 0 bytes, 0 allocs
		if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		v, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			continue
		}
		n++
		ms += v
	}
	return n, ms
}

// benchSessionID is a Claude Code session id (a UUID, the only shape heirloom takes) made from
// label, the same for the same label.
func benchSessionID(label string) string {
	h := fnv.New64a()
	h.Write([]byte(label))
	return fmt.Sprintf("5e550000-0000-4000-8000-%012x", h.Sum64()&(1<<48-1))
}
