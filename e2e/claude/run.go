package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/e2e/internal/proc"
)

// DefaultTimeout bounds one Run when Options.Timeout is zero.
const DefaultTimeout = 3 * time.Minute

// Options configures one `claude -p` run.
type Options struct {
	// BaseURL is the Messages API stand-in, "http://127.0.0.1:PORT"
	// (messagesapi.Server.URL). Required. It is also set as the HTTP(S)
	// proxy for every non-loopback host, so any stray outbound request
	// reaches the stand-in as a CONNECT (see messagesapi.Server.Calls)
	// instead of the network.
	BaseURL string
	// Dir is the project directory claude runs in; "" makes a new temp dir.
	Dir string
	// Home is the private HOME; "" makes a new temp dir. Reuse a Result's
	// Home and Dir to --resume its session.
	Home string
	// Prompt is the prompt given to -p. It must not start with "-".
	Prompt string
	// Resume, when set, is a session id passed to --resume.
	Resume string
	// Args are extra flags, placed before the prompt.
	Args []string
	// Env adds to or overrides the environment built by Env; a key mapped to
	// "" is removed.
	Env map[string]string
	// Settings is marshalled to $HOME/.claude/settings.json. Nil keeps an
	// existing file and otherwise writes {}.
	Settings any
	// Timeout bounds the run; zero means DefaultTimeout. On timeout or when
	// ctx ends, the whole process group is killed and the test fails.
	Timeout time.Duration
}

// Result is what one run produced.
type Result struct {
	Stdout, Stderr string
	// ExitCode is the process's exit status.
	ExitCode int
	// Duration is the wall time of the run.
	Duration time.Duration
	// SessionID, Text (the final assistant text), IsError and NumTurns come
	// from the --output-format json result; zero when stdout was not that.
	SessionID string
	Text      string
	IsError   bool
	NumTurns  int
	// Home and Dir are the HOME and project directory used.
	Home, Dir string
	// Transcript is the session's transcript,
	// $HOME/.claude/projects/<munged Dir>/<SessionID>.jsonl; "" without a
	// session id. The file may be missing if the run failed early.
	Transcript string
}

// SubagentsDir returns the directory holding the session's sub-agent
// transcripts (agent-<id>.jsonl) and their .meta.json files.
func (r Result) SubagentsDir() string {
	if r.Transcript == "" {
		return ""
	}
	return filepath.Join(strings.TrimSuffix(r.Transcript, ".jsonl"), "subagents")
}

// Env returns the environment a run starts from: nothing is inherited from
// the test process except PATH, so a developer's own API key, config dir or
// proxy never leaks in. It keeps Claude Code offline and non-interactive:
//
//	ANTHROPIC_BASE_URL=baseURL                 model requests go to the stand-in
//	ANTHROPIC_API_KEY=x                        any key: no login, no keychain
//	DISABLE_AUTOUPDATER=1                      no update check
//	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 no telemetry, error reports, title calls
//	HTTPS_PROXY, HTTP_PROXY (and lower case)=baseURL, NO_PROXY=loopback
//	                                           anything else lands in the stand-in's log
//
// -p mode shows no onboarding, theme or folder-trust prompt, so no other
// setting is needed. Run adds TMPDIR and CLAUDE_CODE_TMPDIR (see tempDir).
func Env(home, baseURL string) map[string]string {
	env := map[string]string{
		"HOME":                home,
		"PATH":                os.Getenv("PATH"),
		"LANG":                "C.UTF-8",
		"TERM":                "dumb",
		"ANTHROPIC_BASE_URL":  baseURL,
		"ANTHROPIC_API_KEY":   "x",
		"DISABLE_AUTOUPDATER": "1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	}
	proc.SetProxy(env, baseURL)
	return env
}

// Run runs `claude -p --output-format json [--resume ID] ARGS PROMPT` with
// opts and returns what it produced. A non-zero exit is reported in
// Result.ExitCode, not as a failure; Run fails tb when the binary cannot be
// started, when opts is invalid, and on timeout or ctx cancellation (after
// killing the process group). It skips tb when the binary is absent (Bin).
func Run(tb testing.TB, ctx context.Context, opts Options) Result {
	tb.Helper()
	return RunConcurrently(tb, ctx, opts)[0]
}

// RunConcurrently starts one run per element of opts, all at once, waits
// for every one to exit and returns their results in the order of opts. Each
// run behaves as Run; tb is failed or skipped only from the calling
// goroutine, after all runs have ended. Runs that share a Home share its
// settings.json: give them the same Settings (or nil after the first).
func RunConcurrently(tb testing.TB, ctx context.Context, opts ...Options) []Result {
	tb.Helper()
	runs := make([]*run, len(opts))
	for i, o := range opts {
		runs[i] = prepare(tb, ctx, o)
		defer runs[i].cancel()
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(r.exec)
	}
	wg.Wait()
	out := make([]Result, len(runs))
	for i, r := range runs {
		out[i] = r.finish(tb)
	}
	return out
}

// run is one prepared `claude -p` process.
type run struct {
	bin    string
	prompt string
	cmd    *exec.Cmd
	ctx    context.Context // bounded by the run's timeout
	cancel context.CancelFunc
	stdout bytes.Buffer
	stderr bytes.Buffer
	res    Result
	err    error // from cmd.Run
}

// prepare checks opts, writes the settings and builds the command. It calls
// tb only from the calling goroutine.
func prepare(tb testing.TB, ctx context.Context, opts Options) *run {
	tb.Helper()
	bin := Bin(tb)
	if opts.BaseURL == "" {
		tb.Fatal("claude.Run: Options.BaseURL is required")
	}
	if strings.HasPrefix(opts.Prompt, "-") {
		tb.Fatalf("claude.Run: prompt %q starts with '-'", opts.Prompt)
	}
	r := &run{bin: bin, prompt: opts.Prompt, res: Result{Home: opts.Home, Dir: opts.Dir}}
	if r.res.Home == "" {
		r.res.Home = tb.TempDir()
	}
	if r.res.Dir == "" {
		r.res.Dir = tb.TempDir()
	}
	if err := writeSettings(r.res.Home, opts.Settings); err != nil {
		tb.Fatal(err)
	}
	tmp := tempDir(tb)

	args := []string{"-p", "--output-format", "json"}
	if opts.Resume != "" {
		args = append(args, "--resume", opts.Resume)
	}
	args = append(args, opts.Args...)
	args = append(args, opts.Prompt)

	env := Env(r.res.Home, opts.BaseURL)
	env["TMPDIR"], env["CLAUDE_CODE_TMPDIR"] = tmp, tmp
	proc.Override(env, opts.Env)

	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	r.ctx, r.cancel = context.WithTimeout(ctx, timeout)

	r.cmd = exec.CommandContext(r.ctx, bin, args...)
	r.cmd.Dir = r.res.Dir
	r.cmd.Env = proc.Environ(env)
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	proc.StartGroup(r.cmd)
	return r
}

// exec runs the process to its end. It touches no testing.TB, so it may run
// on any goroutine.
func (r *run) exec() {
	start := time.Now()
	r.err = r.cmd.Run()
	r.res.Duration = time.Since(start)
	proc.KillGroup(r.cmd) // hooks may leave children behind
}

// finish turns the ended process into a Result, failing tb as Run documents.
func (r *run) finish(tb testing.TB) Result {
	tb.Helper()
	defer r.cancel()
	res := r.res
	res.Stdout, res.Stderr = r.stdout.String(), r.stderr.String()

	if r.ctx.Err() != nil {
		tb.Fatalf("claude -p %q: %v after %v (process group killed)\nstderr:\n%s", r.prompt, context.Cause(r.ctx), res.Duration.Round(time.Millisecond), tail(res.Stderr))
	}
	var exitErr *exec.ExitError
	switch {
	case errors.As(r.err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	case r.err != nil:
		tb.Fatalf("run %s: %v", r.bin, r.err)
	}
	cpu := r.cmd.ProcessState.UserTime() + r.cmd.ProcessState.SystemTime()
	tb.Logf("claude -p %q: exit %d in %v (cpu %v)", r.prompt, res.ExitCode, res.Duration.Round(time.Millisecond), cpu.Round(time.Millisecond))

	var out struct {
		SessionID string `json:"session_id"`
		Result    string `json:"result"`
		IsError   bool   `json:"is_error"`
		NumTurns  int    `json:"num_turns"`
	}
	if json.Unmarshal(bytes.TrimSpace(r.stdout.Bytes()), &out) == nil {
		res.SessionID, res.Text, res.IsError, res.NumTurns = out.SessionID, out.Result, out.IsError, out.NumTurns
	}
	if res.SessionID != "" {
		res.Transcript = transcriptPath(res.Home, res.Dir, res.SessionID)
	}
	return res
}

// tempDir returns a private temp dir for one run, removed when tb ends.
// Claude Code keeps sub-agent task output in <tmp>/claude-<uid>/, but only
// when that path is at most 44 bytes long: past that it falls back to
// /tmp/claude-<uid>/, outside the test's directories. t.TempDir() names
// are too long for that, so this is a short directory of its own.
func tempDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "cc")
	if err != nil {
		tb.Fatalf("create temp dir: %v", err)
	}
	tb.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			tb.Errorf("remove temp dir: %v", err)
		}
	})
	return dir
}

// writeSettings writes $HOME/.claude/settings.json (see Options.Settings).
func writeSettings(home string, settings any) error {
	dir := filepath.Join(home, ".claude")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create claude config dir: %w", err)
	}
	path := filepath.Join(dir, "settings.json")
	data := []byte("{}\n")
	if settings == nil {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
	} else {
		b, err := json.MarshalIndent(settings, "", "  ")
		if err != nil {
			return fmt.Errorf("marshal settings: %w", err)
		}
		data = append(b, '\n')
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write settings %s: %w", path, err)
	}
	return nil
}

// transcriptPath returns where Claude Code keeps the transcript of session
// id run in dir, preferring a file that exists (the project folder name is
// shortened and hashed for very long paths, so it is looked up when the
// plain name is absent).
func transcriptPath(home, dir, id string) string {
	projects := filepath.Join(home, ".claude", "projects")
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	want := filepath.Join(projects, ProjectFolder(dir), id+".jsonl")
	if _, err := os.Stat(want); err == nil {
		return want
	}
	if found, _ := filepath.Glob(filepath.Join(projects, "*", id+".jsonl")); len(found) == 1 {
		return found[0]
	}
	return want
}

var nonAlnum = regexp.MustCompile(`[^a-zA-Z0-9]`)

// ProjectFolder returns the folder name Claude Code gives the project at
// absolute path dir under $HOME/.claude/projects: every character other
// than an ASCII letter or digit becomes '-' ("/home/dev/src/parser" →
// "-home-dev-src-parser"). Names over 200 characters, which Claude Code
// cuts and suffixes with a hash, are returned uncut.
func ProjectFolder(dir string) string {
	return nonAlnum.ReplaceAllString(dir, "-")
}

// tail returns the last few KiB of s, for failure messages.
func tail(s string) string {
	const n = 4 << 10
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
