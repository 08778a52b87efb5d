// Package codex runs the real Codex CLI binary (`codex exec`) offline in
// tests: a private HOME and CODEX_HOME whose config.toml points the model
// provider at a loopback Responses-API stand-in (package responsesapi), and
// any other outbound HTTP(S) request sent to that stand-in as a proxy, where
// it is logged and refused.
//
// The binary is the one e2e/npm/install.sh installs at the version pinned in
// e2e/npm/package-lock.json. Tests that need it call Bin, which skips them
// when it is absent, unless HEIRLOOM_E2E_REQUIRE is set (CI sets it after
// running install.sh): then a missing binary fails the test instead.
package codex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/internal/proc"
	"github.com/heirloom-dev/heirloom/e2e/npmbin"
)

// BinEnv names a codex binary to use instead of the npm-installed one.
const BinEnv = "HEIRLOOM_CODEX_BIN"

// Model is the model name the provider config asks for; the stand-in
// answers whatever a request names.
const Model = "test-model"

// DefaultTimeout bounds one run.
const DefaultTimeout = 3 * time.Minute

// Bin returns the path of the Codex CLI binary: $HEIRLOOM_CODEX_BIN when
// set, else e2e/npm/node_modules/.bin/codex under the module root. When it
// is absent or `codex --version` fails it skips tb (fails it under
// HEIRLOOM_E2E_REQUIRE).
func Bin(tb testing.TB) string {
	tb.Helper()
	return npmbin.Bin(tb, BinEnv, "codex", func(dir string) []string {
		return []string{"HOME=" + dir, "CODEX_HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	})
}

// ProviderConfig returns the config.toml that sends every model request to
// the Responses-API stand-in at baseURL ("http://127.0.0.1:PORT/v1") and lets
// Codex run tools without asking, with extra (more TOML: top-level keys
// first, then tables, such as "[agents]\nmax_depth = 2") before the
// provider's table. Codex accepts only wire_api "responses" for a custom
// provider.
func ProviderConfig(baseURL, extra string) string {
	return fmt.Sprintf(`model = %q
model_provider = "standin"
approval_policy = "never"
sandbox_mode = "danger-full-access"
%s
[model_providers.standin]
name = "standin"
base_url = %q
wire_api = "responses"
env_key = "STANDIN_API_KEY"
request_max_retries = 0
stream_max_retries = 0
`, Model, extra, baseURL)
}

// WriteConfig writes config (see ProviderConfig) as codexHome/config.toml,
// creating codexHome.
func WriteConfig(codexHome, config string) error {
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644)
}

// Options configures one run of `codex exec`.
type Options struct {
	// Home is HOME, CodexHome is CODEX_HOME (default Home/.codex) and Dir
	// the working directory (default a new temp dir). config.toml must
	// already be in CodexHome (WriteConfig).
	Home, CodexHome, Dir string
	// BaseURL is the stand-in's base URL: the proxy for any other request.
	BaseURL string
	// Prompt is the user prompt; it must not start with '-'.
	Prompt string
	// Resume, when set, resumes that session (`codex exec resume ID`).
	Resume string
	// Args are more flags for `codex exec`, before the prompt.
	Args []string
	// Env overrides or adds environment variables ("" removes one).
	Env map[string]string
	// Timeout bounds the run; zero means DefaultTimeout.
	Timeout time.Duration
}

// Result is what one run produced.
type Result struct {
	ExitCode       int
	Stdout, Stderr string
	Duration       time.Duration
	// SessionID is the root thread's id, from the "session id:" line Codex
	// prints; "" when it printed none.
	SessionID string
	// Home, CodexHome and Dir are the directories used.
	Home, CodexHome, Dir string
}

var sessionLine = regexp.MustCompile(`(?m)^session id: ([0-9a-f-]+)\s*$`)

// Env returns the environment a run starts from: nothing is inherited from
// the test process except PATH, so a developer's own key or config never
// leaks in; HTTPS and HTTP requests other than to loopback go to baseURL as
// a proxy (logged, refused by the stand-in).
func Env(home, codexHome, baseURL string) map[string]string {
	env := map[string]string{
		"HOME":            home,
		"CODEX_HOME":      codexHome,
		"PATH":            os.Getenv("PATH"),
		"LANG":            "C.UTF-8",
		"TERM":            "dumb",
		"STANDIN_API_KEY": "x",
		"NO_COLOR":        "1",
	}
	proc.SetProxy(env, baseURL)
	return env
}

// Run runs `codex exec --skip-git-repo-check [resume ID] PROMPT` with opts
// and returns what it produced. A non-zero exit is reported in
// Result.ExitCode; Run fails tb when the binary cannot start, on a bad
// Options, and on timeout (after killing the process group).
func Run(tb testing.TB, ctx context.Context, opts Options) Result {
	tb.Helper()
	bin := Bin(tb)
	if opts.BaseURL == "" {
		tb.Fatal("codex.Run: Options.BaseURL is required")
	}
	if strings.HasPrefix(opts.Prompt, "-") {
		tb.Fatalf("codex.Run: prompt %q starts with '-'", opts.Prompt)
	}
	res := Result{Home: opts.Home, CodexHome: opts.CodexHome, Dir: opts.Dir}
	if res.Home == "" {
		res.Home = tb.TempDir()
	}
	if res.CodexHome == "" {
		res.CodexHome = filepath.Join(res.Home, ".codex")
	}
	if res.Dir == "" {
		res.Dir = tb.TempDir()
	}
	args := []string{"exec", "--skip-git-repo-check"}
	args = append(args, opts.Args...)
	if opts.Resume != "" {
		args = append(args, "resume", opts.Resume)
	}
	args = append(args, opts.Prompt)
	env := Env(res.Home, res.CodexHome, opts.BaseURL)
	proc.Override(env, opts.Env)
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = res.Dir, proc.Environ(env)
	cmd.Stdin = strings.NewReader("")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	proc.StartGroup(cmd)
	start := time.Now()
	err := cmd.Run()
	res.Duration = time.Since(start)
	proc.KillGroup(cmd)
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	if ctx.Err() != nil {
		tb.Fatalf("codex exec %q: %v after %v (process group killed)\nstderr:\n%s", opts.Prompt, context.Cause(ctx), res.Duration.Round(time.Millisecond), tail(res.Stderr))
	}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	case err != nil:
		tb.Fatalf("run %s: %v", bin, err)
	}
	if m := sessionLine.FindStringSubmatch(res.Stderr + "\n" + res.Stdout); m != nil {
		res.SessionID = m[1]
	}
	tb.Logf("codex exec %q: exit %d in %v, session %s", opts.Prompt, res.ExitCode, res.Duration.Round(time.Millisecond), res.SessionID)
	return res
}

// Rollouts returns every rollout file under codexHome/sessions, by path.
func Rollouts(codexHome string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(filepath.Join(codexHome, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ".jsonl") {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// tail returns the last 4 KiB of s.
func tail(s string) string {
	if len(s) > 4096 {
		return "…" + s[len(s)-4096:]
	}
	return s
}
