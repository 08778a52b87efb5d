package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/adapters/codex"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
	"github.com/heirloom-dev/heirloom/search"
)

// scope is the memory scope heirloom uses for Claude Code when none is configured.
const scope = "default"

// hookTimeout is given to the server and the hook shim in these tests. The tests are about what
// heirloom decides, not how fast: on a loaded two-core CI machine the 1s default could turn a
// slow but correct reply into "{}".
const hookTimeout = 10 * time.Second

// binDir holds the heirloom binary built for this test binary; set by TestMain.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "heirloom-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var heirloomBuild struct {
	once sync.Once
	path string
	err  error
}

// heirloomBin builds the heirloom binary once per test binary (only tests that need it pay for
// the build) and returns its path.
func heirloomBin(tb testing.TB) string {
	tb.Helper()
	heirloomBuild.once.Do(func() {
		start := time.Now()
		path := filepath.Join(binDir, "heirloom")
		out, err := exec.Command("go", "build", "-o", path, "github.com/heirloom-dev/heirloom").CombinedOutput()
		if err != nil {
			heirloomBuild.err = fmt.Errorf("build heirloom: %v\n%s", err, out)
			return
		}
		heirloomBuild.path = path
		tb.Logf("built heirloom in %v", time.Since(start).Round(time.Millisecond))
	})
	if heirloomBuild.err != nil {
		tb.Fatal(heirloomBuild.err)
	}
	return heirloomBuild.path
}

var hookBuild struct {
	once sync.Once
	path string
	err  error
}

// hookBin builds the light heirloom-hook binary once per test binary and returns its path.
func hookBin(tb testing.TB) string {
	tb.Helper()
	hookBuild.once.Do(func() {
		path := filepath.Join(binDir, "heirloom-hook")
		out, err := exec.Command("go", "build", "-o", path, "github.com/heirloom-dev/heirloom/cmd/heirloom-hook").CombinedOutput()
		if err != nil {
			hookBuild.err = fmt.Errorf("build heirloom-hook: %v\n%s", err, out)
			return
		}
		hookBuild.path = path
	})
	if hookBuild.err != nil {
		tb.Fatal(hookBuild.err)
	}
	return hookBuild.path
}

// serveProc is a running `heirloom serve`.
type serveProc struct {
	URL     string
	DataDir string

	cmd     *exec.Cmd
	logs    *syncBuffer
	done    chan struct{}
	waitErr error
}

// serveOptions configures startServe.
type serveOptions struct {
	// Home is the HOME serve runs with: no config file is there, so defaults apply.
	Home string
	// TranscriptRoots, when set, is passed as adapters.claude_code.transcript_roots.
	TranscriptRoots []string
	// Addr is the loopback address to listen on; "" picks a free one.
	Addr string
	// Env adds KEY=VALUE pairs to serve's environment.
	Env []string
}

// startServe starts `heirloom serve` on a free loopback port with a new data dir and waits until
// /readyz answers. It is killed at the end of the test unless Stop ran.
func startServe(tb testing.TB, opts serveOptions) *serveProc {
	tb.Helper()
	bin := heirloomBin(tb)
	addr := opts.Addr
	if addr == "" {
		addr = freeAddr(tb)
	}
	p := &serveProc{URL: "http://" + addr, DataDir: filepath.Join(tb.TempDir(), "data"), logs: &syncBuffer{}, done: make(chan struct{})}
	env := []string{
		"HOME=" + opts.Home,
		"PATH=" + os.Getenv("PATH"),
		"HEIRLOOM_SERVER__HOOK_TIMEOUT=" + hookTimeout.String(),
		"HEIRLOOM_LOG__FORMAT=text",
	}
	if len(opts.TranscriptRoots) > 0 {
		env = append(env, "HEIRLOOM_ADAPTERS__CLAUDE_CODE__TRANSCRIPT_ROOTS="+strings.Join(opts.TranscriptRoots, ","))
	}
	env = append(env, opts.Env...)
	p.cmd = exec.Command(bin, "serve", "--listen", addr, "--data-dir", p.DataDir)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	tb.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(p.URL + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.done:
			tb.Fatalf("heirloom serve exited early: %v\n%s", p.waitErr, p.logs)
		case <-time.After(20 * time.Millisecond):
		}
	}
	tb.Fatalf("heirloom serve not ready in 15s\n%s", p.logs)
	return nil
}

// Stop ends serve with SIGTERM and fails tb unless it exits cleanly within 10s. Safe twice.
func (p *serveProc) Stop(tb testing.TB) {
	tb.Helper()
	select {
	case <-p.done:
	default:
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			tb.Fatalf("signal heirloom serve: %v", err)
		}
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			tb.Fatalf("heirloom serve did not stop within 10s of SIGTERM\n%s", p.logs)
		}
	}
	if p.waitErr != nil {
		tb.Fatalf("heirloom serve: %v\n%s", p.waitErr, p.logs)
	}
}

// Store stops serve and opens its data dir, closed at the end of the test.
func (p *serveProc) Store(tb testing.TB) *kv.Store {
	tb.Helper()
	p.Stop(tb)
	return mustOpenStore(tb, p.DataDir)
}

// Logs returns what serve wrote so far.
func (p *serveProc) Logs() string { return p.logs.String() }

// runShim runs `heirloom hook claude-code` with payload on stdin against the sidecar at url and
// returns its stdout (see runShimAs).
func runShim(tb testing.TB, url string, payload []byte) []byte {
	tb.Helper()
	return runShimAs(tb, url, "claude-code", payload)
}

// runShimAs runs `heirloom hook HARNESS` with payload on stdin against the sidecar at url and
// returns its stdout. The shim always exits 0 and prints "{}" on any failure, so a warning on
// stderr fails the test: it means the reply did not come from heirloom's decision.
func runShimAs(tb testing.TB, url, harness string, payload []byte) []byte {
	tb.Helper()
	cmd := exec.Command(heirloomBin(tb), "hook", harness)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HEIRLOOM_URL=" + url, "HEIRLOOM_HOOK_TIMEOUT=" + hookTimeout.String()}
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("heirloom hook %s: %v\nstderr: %s", harness, err, stderr.String())
	}
	if stderr.Len() > 0 {
		tb.Fatalf("heirloom hook %s warned: %s", harness, stderr.String())
	}
	return stdout.Bytes()
}

// shimCommand is the command line of a Claude Code command hook that runs the heirloom shim as
// `heirloom install claude-code` writes it: the light heirloom-hook binary. (The replays run
// `heirloom hook claude-code`, the same shim inside the full binary.)
func shimCommand(tb testing.TB) string {
	tb.Helper()
	return "'" + strings.ReplaceAll(hookBin(tb), "'", `'\''`) + "' claude-code"
}

// mustOpenServer opens an in-process proxy.Server on 127.0.0.1:0 with its engine, as serve
// builds them (every harness registered), over a real store in a temp dir. All close at the end
// of the test. configure runs before Open; the engine is s.Engine.
func mustOpenServer(tb testing.TB, configure func(*proxy.Server)) *proxy.Server {
	tb.Helper()
	store := mustOpenStore(tb, tb.TempDir())
	reg, err := adapters.NewRegistry(claudecode.Registration(), opencode.Registration(), openclaw.Registration(), codex.Registration())
	if err != nil {
		tb.Fatal(err)
	}
	eng := engine.New(store, scope)
	eng.Harnesses = reg
	s := proxy.NewServer()
	s.Addr = "127.0.0.1:0"
	s.Engine = eng
	s.Harnesses = reg
	s.HookTimeout = hookTimeout
	if configure != nil {
		configure(s)
	}
	if err := eng.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	if err := s.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			tb.Error(err)
		}
		if err := eng.Close(ctx); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// mustOpenStore opens the store in dir, closed at the end of the test, with the search index
// on as serve opens it: every stored turn gets its postings in the batch that stores it.
func mustOpenStore(tb testing.TB, dir string) *kv.Store {
	tb.Helper()
	store := kv.NewStore(dir)
	store.Index = search.Analyzer{}
	store.Ledger = inject.Ledger{}
	if err := store.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := store.Close(); err != nil {
			tb.Error(err)
		}
	})
	return store
}

// freeAddr returns a loopback address nobody listens on right now.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// syncBuffer is a bytes.Buffer safe for a process's writer and the test's reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
