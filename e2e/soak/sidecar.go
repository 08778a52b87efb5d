package soak

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// sidecar is the heirloom process under load: `heirloom serve` on a loopback port, its data dir
// on disk, its output read line by line (the last lines kept, warnings and errors counted).
type sidecar struct {
	URL   string
	Token string
	pid   int

	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited and its output is read
	waitErr error
	http    *http.Client

	mu      sync.Mutex
	tail    []string         // the last tailLines lines of output
	levels  map[string]int64 // lines by level (warn, error)
	msgs    map[string]int64 // warn and error lines by level and message
	msgKeys []string         // msgs' keys in the order first seen
}

const tailLines = 200

// sidecarOptions say how to start heirloom.
type sidecarOptions struct {
	Bin     string   // the heirloom binary
	DataDir string   // --data-dir
	Home    string   // HOME: no config file there, so defaults apply
	Env     []string // more KEY=VALUE pairs: the followed servers, the transcript roots
}

// startSidecar starts heirloom serve on a free loopback port with a new token and waits until
// /readyz answers, at most 30 s. A port taken between the look and the listen is tried again
// on another.
func startSidecar(ctx context.Context, o sidecarOptions) (*sidecar, error) {
	var lastErr error
	for range 3 {
		s, err := tryStartSidecar(ctx, o)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return nil, lastErr
}

func tryStartSidecar(ctx context.Context, o sidecarOptions) (*sidecar, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	token := "soak-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	s := &sidecar{
		URL:    "http://" + addr,
		Token:  token,
		done:   make(chan struct{}),
		http:   &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64, Proxy: nil}},
		levels: map[string]int64{},
		msgs:   map[string]int64{},
	}
	s.cmd = exec.Command(o.Bin, "serve", "--listen", addr, "--data-dir", o.DataDir)
	s.cmd.Env = append([]string{
		"HOME=" + o.Home,
		"PATH=" + os.Getenv("PATH"),
		"HEIRLOOM_TOKEN=" + token,
		"HEIRLOOM_LOG__FORMAT=json",
	}, o.Env...)
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stderr = s.cmd.Stdout
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start heirloom: %w", err)
	}
	s.pid = s.cmd.Process.Pid
	go func() {
		s.read(out)
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/readyz", nil)
		if resp, err := s.http.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("heirloom serve exited while starting (%v):\n%s", s.waitErr, s.Logs())
		case <-ctx.Done():
			s.kill()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return nil, fmt.Errorf("heirloom serve not ready within 30s:\n%s", s.Logs())
		}
	}
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// read reads heirloom's output until it ends: every line goes to the tail, warnings and errors
// are counted by message.
func (s *sidecar) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		level := jsonField(line, "@level")
		s.mu.Lock()
		if len(s.tail) == tailLines {
			s.tail = s.tail[1:]
		}
		s.tail = append(s.tail, line)
		if level == "warn" || level == "error" {
			s.levels[level]++
			key := level + ": " + jsonField(line, "@message")
			if _, ok := s.msgs[key]; !ok {
				s.msgKeys = append(s.msgKeys, key)
			}
			s.msgs[key]++
		}
		s.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
}

// jsonField returns the string value of a top-level field of a JSON log line, found by its
// text ("name":"value"), or "" when it is absent. Good enough for hclog's lines.
func jsonField(line, name string) string {
	key := `"` + name + `":"`
	i := strings.Index(line, key)
	if i < 0 {
		return ""
	}
	rest := line[i+len(key):]
	if j := strings.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return ""
}

// Logs returns the last lines of heirloom's output.
func (s *sidecar) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.tail, "\n")
}

// logCounts returns the warn and error lines by "level: message", in the order first seen.
func (s *sidecar) logCounts() []LogCount {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]LogCount, 0, len(s.msgKeys))
	for _, k := range s.msgKeys {
		out = append(out, LogCount{Line: k, Count: s.msgs[k]})
	}
	return out
}

// LogCount is how often heirloom logged one warning or error message.
type LogCount struct {
	Line  string `json:"line"`
	Count int64  `json:"count"`
}

// exited reports whether the process has ended.
func (s *sidecar) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// stop ends heirloom with SIGTERM and waits for it, at most 15 s, then kills it. It returns
// the exit error of a process that did not exit cleanly.
func (s *sidecar) stop() error {
	if s.exited() {
		return s.waitErr
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return s.waitErr
	case <-time.After(15 * time.Second):
		s.kill()
		return errors.New("heirloom serve did not stop within 15s of SIGTERM")
	}
}

func (s *sidecar) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// memory returns the process's resident set now (VmRSS) and at its peak (VmHWM), in bytes,
// from /proc/<pid>/status.
func (s *sidecar) memory() (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			rss = n << 10
		case "VmHWM":
			hwm = n << 10
		}
	}
	return rss, hwm, nil
}

// do sends a request to heirloom with the token and returns the status and body.
func (s *sidecar) do(ctx context.Context, method, path, contentType string, body []byte, header ...string) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, b, err
}

// metrics is one scrape of /metrics: each series, written as the exposition format writes it
// (name{label="value",…}, labels sorted), to its value.
type metrics map[string]float64

// scrape reads /metrics.
func (s *sidecar) scrape(ctx context.Context) (metrics, error) {
	status, body, err := s.do(ctx, http.MethodGet, "/metrics", "", nil)
	if err != nil {
		return nil, fmt.Errorf("scrape /metrics: %w", err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("scrape /metrics: status %d", status)
	}
	return parseMetrics(body), nil
}

// parseMetrics reads the Prometheus text format: comments are skipped, each other line is a
// series and its value.
func parseMetrics(b []byte) metrics {
	m := metrics{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		m[line[:i]] = v
	}
	return m
}

// sum adds up the series of metric name whose labels include every one of labels
// (`harness="opencode"`, …).
func (m metrics) sum(name string, labels ...string) float64 {
	var total float64
	for series, v := range m {
		if series != name && !strings.HasPrefix(series, name+"{") {
			continue
		}
		if slices.ContainsFunc(labels, func(l string) bool { return !strings.Contains(series, l) }) {
			continue
		}
		total += v
	}
	return total
}
