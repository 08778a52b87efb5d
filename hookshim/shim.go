package hookshim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Shim is the command-hook side of heirloom: it reads one hook call on stdin, asks the sidecar,
// and prints the reply. It never blocks the harness: if the sidecar is down, slow or answers
// garbage, it prints the empty reply "{}" within Timeout and warns on one stderr line.
//
// With Command set it also wraps an existing hook command (proxy mode): the command gets the same
// stdin bytes and runs in parallel with the sidecar call, and its reply is merged with heirloom's
// context (see Run).
type Shim struct {
	// URL is the sidecar's base URL, e.g. "http://127.0.0.1:7433".
	URL string
	// Timeout bounds the sidecar call, counted from the start of Run, so reading stdin is
	// included. Zero means DefaultTimeout.
	Timeout time.Duration
	// Token is sent as a bearer token when non-empty.
	Token string
	// Client sends the request. Nil means a client with no proxy from the environment, since
	// the sidecar is local.
	Client *http.Client

	// Command is the hook command to wrap, name then arguments; a name without a slash is looked
	// up in PATH. Empty means none: the shim only relays.
	Command []string
	// Env is the wrapped command's environment, "KEY=VALUE" pairs. Nil means the shim's own.
	Env []string
	// CommandTimeout bounds the wrapped command, reading stdin included; past it the command's
	// whole process group is killed. Zero means DefaultCommandTimeout.
	CommandTimeout time.Duration
	// MaxContextChars caps the merged additionalContext, in UTF-16 code units (see
	// claudecode.Merge). Zero means claudecode.DefaultMaxContextChars.
	MaxContextChars int

	// Stdin is the hook call, read to EOF; Stdout gets the reply and Stderr the warnings.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Default bounds of a hook (HEIRLOOM_HOOK_TIMEOUT and HEIRLOOM_UPSTREAM_TIMEOUT when unset).
const (
	DefaultTimeout        = 1500 * time.Millisecond // the sidecar call, stdin included
	DefaultCommandTimeout = 30 * time.Second        // a wrapped command
)

// emptyReply is what a hook prints when heirloom has nothing to add.
const emptyReply = "{}"

// Run relays one hook call for harness (e.g. "claude-code") to the sidecar's /hooks/<harness>
// and returns the exit code for the shim's process. Without Command it is always 0: every
// failure ends in the empty reply and a warning, because a hook error would reach the harness's
// user. A sidecar without that endpoint (404) is such a failure, and its warning names the
// harness.
//
// With Command, Run feeds the same stdin bytes to the command and to the sidecar, in parallel,
// and waits for both (at most CommandTimeout and Timeout, plus a short grace for pipes a
// command's leftover children hold open). The command's stderr is passed through as written.
// Then, by the command's outcome:
//   - exit 0: prints claudecode.Merge of heirloom's answer and the command's stdout, with
//     heirloom's sections (inject/heading) cut last and heirloom's refusal of a spawn kept
//     over the command's decision, which is the stdout byte for byte when heirloom adds
//     nothing (the sidecar failing included); returns 0.
//   - exit 2 (the command blocks): prints its stdout as it was (its first
//     claudecode.MaxUpstreamBytes), adds nothing to stderr, and returns 2, whatever the
//     sidecar did.
//   - anything else (cannot start, killed, timed out, another exit code, stdout over
//     claudecode.MaxUpstreamBytes, a reply Merge rejects): prints heirloom's reply alone, warns
//     on one line naming the reason, and returns 0.
func (s *Shim) Run(ctx context.Context, harness string) int {
	if len(s.Command) > 0 {
		return s.runWrapped(ctx, harness)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()

	reply, err := s.relay(ctx, harness)
	if err != nil {
		s.warnf("%v; replying %s", err, emptyReply)
		reply = []byte(emptyReply)
	}
	s.writeReply(reply)
	return 0
}

// timeout returns the bound of the sidecar call.
func (s *Shim) timeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultTimeout
	}
	return s.Timeout
}

// writeReply prints one of heirloom's own replies, newline-terminated.
func (s *Shim) writeReply(reply []byte) {
	_, _ = s.Stdout.Write(reply)
	if !bytes.HasSuffix(reply, []byte("\n")) {
		_, _ = io.WriteString(s.Stdout, "\n")
	}
}

// warnf writes one warning line to stderr.
func (s *Shim) warnf(format string, args ...any) {
	fmt.Fprintf(s.Stderr, "heirloom: "+format+"\n", args...)
}

// relay reads stdin and posts it, returning the sidecar's reply only if it is a JSON object.
func (s *Shim) relay(ctx context.Context, harness string) ([]byte, error) {
	body, err := readAllCtx(ctx, s.Stdin)
	if err != nil {
		return nil, fmt.Errorf("read hook input: %w", err)
	}
	return s.post(ctx, harness, body)
}

// post sends one hook call to the sidecar, returning its reply only if it is a JSON object.
func (s *Shim) post(ctx context.Context, harness string, body []byte) ([]byte, error) {
	url := strings.TrimRight(s.URL, "/") + "/hooks/" + harness
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request to %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if s.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	client := s.Client
	if client == nil {
		client = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sidecar at %s unreachable: %w", s.URL, err)
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read sidecar reply: %w", err)
	}
	if resp.StatusCode == http.StatusNotFound {
		// The light binary accepts any harness name; the sidecar knows which it serves.
		return nil, fmt.Errorf("the sidecar at %s takes no hooks of harness %q (%s from /hooks/%s)", s.URL, harness, resp.Status, harness)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("sidecar answered %s: %s", resp.Status, firstLine(reply))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(reply, &obj); err != nil {
		return nil, fmt.Errorf("sidecar reply is not a JSON object: %s", firstLine(reply))
	}
	return reply, nil
}

// readAllCtx reads r to EOF, giving up when ctx ends (a harness that never closes stdin must not
// hang the hook).
func readAllCtx(ctx context.Context, r io.Reader) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(r)
		done <- result{b, err}
	}()
	select {
	case res := <-done:
		return res.b, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// firstLine returns b's first line, at most 200 bytes, for a one-line warning.
func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if len(line) > 200 {
		line = line[:200]
	}
	return strings.ToValidUTF8(string(line), "?")
}
