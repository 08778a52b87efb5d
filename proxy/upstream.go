package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/inject/heading"
)

// DefaultUpstreamTimeout bounds a forwarded hook call when Upstream.Timeout is zero.
const DefaultUpstreamTimeout = 5 * time.Second

// Upstream is an existing http hook target heirloom sits in front of (proxy mode). Each hook call
// is forwarded to it unchanged, in parallel with heirloom's own work, and the harness gets the
// upstream's reply with heirloom's context placed first (see claudecode.Merge); the added
// latency is the longer of the two, not their sum. When the upstream fails (unreachable, slower than Timeout,
// a non-2xx status, an unusable or oversized reply) the harness gets heirloom's reply alone: the
// failure is logged as a warning and counted in heirloom_upstream_requests_total, never shown
// to the harness. The zero value is no upstream.
type Upstream struct {
	// URL receives each hook call as a POST of the harness's body, unchanged. Empty means no
	// upstream; otherwise it must be an http or https URL with a host.
	URL string
	// Timeout bounds one forwarded call, its reply read in full. Zero means
	// DefaultUpstreamTimeout.
	Timeout time.Duration
	// Header holds extra headers sent with every call. The harness's own headers are not
	// forwarded: they may carry heirloom's token.
	Header http.Header
	// Token, when non-empty, is sent as "Authorization: Bearer <Token>", over any Authorization
	// in Header.
	Token string
	// Transport sends the calls. Nil means one of the server's own, which keeps enough idle
	// connections for many concurrent hooks and is released by Close.
	Transport http.RoundTripper
}

// upstream is an opened Upstream.
type upstream struct {
	Upstream
	url      *url.URL
	own      *http.Transport // the transport made for it, when Transport was nil
	errorLog *log.Logger     // the server's logger, for httputil.ReverseProxy
}

// openUpstream checks u and prepares it, logging to logger; nil when u has no URL.
func openUpstream(u Upstream, logger hclog.Logger) (*upstream, error) {
	if u.URL == "" {
		return nil, nil
	}
	parsed, err := url.Parse(u.URL)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return nil, fmt.Errorf("upstream %q: not an http(s) URL with a host", u.URL)
	}
	up := &upstream{Upstream: u, url: parsed,
		errorLog: logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})}
	if up.Timeout <= 0 {
		up.Timeout = DefaultUpstreamTimeout
	}
	if up.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64 // hooks of parallel sub-agents arrive together
		up.own, up.Transport = t, t
	}
	return up, nil
}

// close releases the idle connections of the upstream's own transport.
func (u *upstream) close() {
	if u != nil && u.own != nil {
		u.own.CloseIdleConnections()
	}
}

// rewrite turns the harness's request into the call to the upstream: the same body, POSTed to
// URL with Content-Type, the configured headers and the token; nothing else of the inbound
// request is kept.
func (u *upstream) rewrite(pr *httputil.ProxyRequest, body []byte) {
	out := pr.Out
	target := *u.url
	out.Method = http.MethodPost
	out.URL = &target
	out.Host = ""
	out.Header = u.Header.Clone()
	if out.Header == nil {
		out.Header = make(http.Header)
	}
	out.Header.Set("Content-Type", "application/json")
	if ua := pr.In.Header.Get("User-Agent"); ua != "" && out.Header.Get("User-Agent") == "" {
		out.Header.Set("User-Agent", ua)
	}
	if u.Token != "" {
		out.Header.Set("Authorization", "Bearer "+u.Token)
	}
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	out.TransferEncoding = nil
	out.Trailer = nil
}

// upstreamError is a forwarded call that gave no usable reply, with its outcome label.
type upstreamError struct {
	outcome string
	err     error
}

func (e *upstreamError) Error() string { return e.outcome + ": " + e.err.Error() }
func (e *upstreamError) Unwrap() error { return e.err }

// forward answers one hook call in proxy mode. body is the harness's request body and ev its
// event (only Harness and Name are needed); mine delivers heirloom's own reply, computed in
// parallel by the caller within HookTimeout. The harness always gets 200 and JSON: the upstream's
// reply merged with heirloom's context, or heirloom's reply alone when the upstream failed.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, up *upstream, body []byte, ev adapters.Event, mine <-chan []byte) {
	ours := sync.OnceValue(func() []byte { return <-mine })
	rp := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { up.rewrite(pr, body) },
		Transport: up.Transport,
		ModifyResponse: func(resp *http.Response) error {
			merged, err := s.mergeUpstream(resp, ev, ours)
			if err != nil {
				return err
			}
			resp.StatusCode, resp.Status = http.StatusOK, ""
			resp.Header = http.Header{"Content-Type": {"application/json"}}
			resp.Header.Set("Content-Length", strconv.Itoa(len(merged)))
			resp.Body = io.NopCloser(bytes.NewReader(merged))
			resp.ContentLength = int64(len(merged))
			resp.Trailer = nil
			s.metrics.upstream.WithLabelValues(ev.Harness, OutcomeOK).Inc()
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			reply := ours()
			s.upstreamFailed(r, ev, err)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(reply)
		},
		ErrorLog: up.errorLog,
	}
	ctx, cancel := context.WithTimeout(r.Context(), up.Timeout)
	defer cancel()
	rp.ServeHTTP(w, r.WithContext(ctx))
}

// mergeUpstream reads the upstream's reply and merges heirloom's reply into it: its context,
// and its refusal, which wins over the upstream's decision. A failure is an
// *upstreamError naming its outcome.
func (s *Server) mergeUpstream(resp *http.Response, ev adapters.Event, ours func() []byte) ([]byte, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &upstreamError{OutcomeStatus, fmt.Errorf("status %s", resp.Status)}
	}
	if resp.ContentLength > claudecode.MaxUpstreamBytes {
		return nil, &upstreamError{OutcomeOversized, fmt.Errorf("reply of %d bytes, over %d", resp.ContentLength, claudecode.MaxUpstreamBytes)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, claudecode.MaxUpstreamBytes+1))
	if err != nil {
		outcome := OutcomeUnreachable
		if isTimeout(err) {
			outcome = OutcomeTimeout
		}
		return nil, &upstreamError{outcome, fmt.Errorf("read reply: %w", err)}
	}
	if len(body) > claudecode.MaxUpstreamBytes {
		return nil, &upstreamError{OutcomeOversized, fmt.Errorf("reply over %d bytes", claudecode.MaxUpstreamBytes)}
	}
	mine := ours()
	merged, err := claudecode.Merge(ev.Name, claudecode.ReplyAnswer(mine), body, s.Engine.Config.MaxContextChars, heading.Priority())
	if err != nil {
		return nil, &upstreamError{OutcomeInvalid, err}
	}
	if len(bytes.TrimSpace(merged)) == 0 {
		return mine, nil // an empty reply is no reply: answer JSON all the same
	}
	return merged, nil
}

// upstreamFailed logs and counts a forwarded call that gave no usable reply. A call cut short
// because the harness hung up is neither: nobody reads the reply.
func (s *Server) upstreamFailed(r *http.Request, ev adapters.Event, err error) {
	outcome := OutcomeUnreachable
	var ue *upstreamError
	switch {
	case errors.As(err, &ue):
		outcome = ue.outcome
	case r.Context().Err() != nil:
		s.Logger.Debug("harness hung up during an upstream call", "harness", ev.Harness, "event", ev.Name)
		return
	case isTimeout(err):
		outcome = OutcomeTimeout
	}
	s.Logger.Warn("upstream hook target failed; replied with heirloom's context alone",
		"harness", ev.Harness, "event", ev.Name, "reason", outcome, "error", err)
	s.metrics.upstream.WithLabelValues(ev.Harness, outcome).Inc()
}

// isTimeout reports whether err is a deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
