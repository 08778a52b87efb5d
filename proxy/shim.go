package proxy

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
type Shim struct {
	// URL is the sidecar's base URL, e.g. "http://127.0.0.1:7433".
	URL string
	// Timeout bounds the whole call, reading stdin included. Zero means 1500ms.
	Timeout time.Duration
	// Token is sent as a bearer token when non-empty.
	Token string
	// Client sends the request. Nil means a client with no proxy from the environment, since
	// the sidecar is local.
	Client *http.Client

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// emptyReply is what a hook prints when heirloom has nothing to add.
const emptyReply = "{}"

// Run relays one hook call for harness (e.g. "claude-code") and always returns nil: every failure
// ends in the empty reply and a warning, because a hook error would reach the harness's user.
func (s *Shim) Run(ctx context.Context, harness string) error {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 1500 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	reply, err := s.relay(ctx, harness)
	if err != nil {
		fmt.Fprintf(s.Stderr, "heirloom: %v; replying %s\n", err, emptyReply)
		reply = []byte(emptyReply)
	}
	_, _ = s.Stdout.Write(reply)
	if !bytes.HasSuffix(reply, []byte("\n")) {
		_, _ = io.WriteString(s.Stdout, "\n")
	}
	return nil
}

// relay reads stdin and posts it, returning the sidecar's reply only if it is a JSON object.
func (s *Shim) relay(ctx context.Context, harness string) ([]byte, error) {
	body, err := readAllCtx(ctx, s.Stdin)
	if err != nil {
		return nil, fmt.Errorf("read hook input: %w", err)
	}
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
