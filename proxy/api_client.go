package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client reads heirloom's API, for the command line. The zero value is not usable: set URL.
type Client struct {
	// URL is the sidecar's base URL, e.g. "http://127.0.0.1:7433".
	URL string
	// Token is sent as a bearer token when non-empty.
	Token string
	// Timeout bounds each call. Zero means 5s.
	Timeout time.Duration
	// HTTP sends the requests. Nil means a client that ignores proxy settings, since the sidecar
	// is local.
	HTTP *http.Client
}

// localHTTP is the HTTP client of Clients that set none: one, so that its connections are
// reused across calls (`heirloom mcp` makes many), ignoring proxy settings since the sidecar is
// local, and following no redirect (the API answers none; a path a key made the router clean
// must not be sent elsewhere).
var localHTTP = &http.Client{
	Transport:     &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// NotRunningError is returned by Client calls when nothing answers at URL.
type NotRunningError struct {
	URL string
	Err error // the connection error
}

// Error says what to do about it.
func (e *NotRunningError) Error() string {
	return "no heirloom at " + e.URL + ": start it with `heirloom serve`"
}

// Unwrap returns the connection error.
func (e *NotRunningError) Unwrap() error { return e.Err }

// maxReplyBytes caps a reply the client reads.
const maxReplyBytes = 64 << 20

// Get sends GET URL+path with query and returns the body of a 200 reply, decoded into v as well
// when v is non-nil. An API error reply comes back as an *Error with the reply's code and
// message; nothing listening at URL as a *NotRunningError; a sidecar slower than Timeout as an
// error saying so.
func (c *Client) Get(ctx context.Context, path string, query url.Values, v any) ([]byte, error) {
	return c.send(ctx, http.MethodGet, path, query, nil, v)
}

// Post sends POST URL+path with query and body (JSON; nil for none) and handles the reply as
// Get does.
func (c *Client) Post(ctx context.Context, path string, query url.Values, body []byte, v any) ([]byte, error) {
	return c.send(ctx, http.MethodPost, path, query, body, v)
}

// Delete sends DELETE URL+path with query and handles the reply as Get does.
func (c *Client) Delete(ctx context.Context, path string, query url.Values, v any) ([]byte, error) {
	return c.send(ctx, http.MethodDelete, path, query, nil, v)
}

// send does the work of Get, Post and Delete.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, reqBody []byte, v any) ([]byte, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := strings.TrimRight(c.URL, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if reqBody != nil {
		rd = bytes.NewReader(reqBody)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("build request to %s: %w", u, err)
	}
	if reqBody != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	client := c.HTTP
	if client == nil {
		client = localHTTP
	}
	resp, err := client.Do(req)
	if err != nil {
		var opErr *net.OpError
		switch {
		case errors.As(err, &opErr) && opErr.Op == "dial":
			return nil, &NotRunningError{URL: c.URL, Err: err}
		case ctx.Err() == context.DeadlineExceeded:
			return nil, fmt.Errorf("heirloom at %s did not answer within %s", c.URL, timeout)
		}
		return nil, fmt.Errorf("ask heirloom at %s: %w", c.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	if err != nil {
		return nil, fmt.Errorf("read reply from %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error, Code string }
		if json.Unmarshal(body, &e) == nil && e.Code != "" {
			return nil, &Error{Code: e.Code, Message: e.Error}
		}
		return nil, fmt.Errorf("heirloom at %s answered %s: %s", c.URL, resp.Status, firstLine(body))
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			return nil, fmt.Errorf("decode reply from %s: %w", u, err)
		}
	}
	return body, nil
}

// firstLine returns b's first line, at most 200 bytes, for a one-line error.
func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if len(line) > 200 {
		line = line[:200]
	}
	return strings.ToValidUTF8(string(line), "?")
}
