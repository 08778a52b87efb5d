package proxy_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/proxy"
)

func TestClient(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		s := mustOpenSeeded(t, func(s *proxy.Server) { s.Token = "sekret" })
		c := &proxy.Client{URL: s.URL() + "/", Token: "sekret"}
		var got proxy.SessionsReply
		raw, err := c.Get(t.Context(), "/api/sessions", url.Values{"parent": {"r:a"}}, &got)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Sessions) != 1 || got.Sessions[0].ID != "r:a:b" || !strings.HasPrefix(string(raw), `{"sessions":[{`) {
			t.Fatalf("got %+v from %s", got, raw)
		}
	})
	t.Run("ErrorReply", func(t *testing.T) {
		s := mustOpenSeeded(t, func(s *proxy.Server) { s.Token = "sekret" })
		c := &proxy.Client{URL: s.URL()}
		_, err := c.Get(t.Context(), "/api/sessions", nil, nil)
		var apiErr *proxy.Error
		if !errors.As(err, &apiErr) || apiErr.Code != proxy.ECodeUnauthorized {
			t.Fatalf("no token: got %v, want *Error unauthorized", err)
		}
		c.Token = "sekret"
		_, err = c.Get(t.Context(), "/api/sessions/nope", nil, nil)
		if !errors.As(err, &apiErr) || apiErr.Code != proxy.ECodeNotFound || !strings.Contains(apiErr.Message, "nope") {
			t.Fatalf("missing session: got %v, want *Error not_found naming it", err)
		}
	})
	t.Run("ErrNotRunning", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		c := &proxy.Client{URL: "http://" + addr}
		_, err = c.Get(t.Context(), "/api/sessions", nil, nil)
		var notRunning *proxy.NotRunningError
		if !errors.As(err, &notRunning) || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("got %v, want *NotRunningError wrapping connection refused", err)
		}
		if want := "no heirloom at http://" + addr + ": start it with `heirloom serve`"; err.Error() != want {
			t.Fatalf("message: got %q, want %q", err, want)
		}
	})
	t.Run("ErrSlow", func(t *testing.T) {
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(func() { close(release); slow.Close() })
		c := &proxy.Client{URL: slow.URL, Timeout: 100 * time.Millisecond}
		start := time.Now()
		_, err := c.Get(t.Context(), "/api/sessions", nil, nil)
		if err == nil || !strings.Contains(err.Error(), "did not answer within 100ms") {
			t.Fatalf("got %v, want a timeout naming 100ms", err)
		}
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Fatalf("took %s", elapsed)
		}
	})
	t.Run("ErrNotHeirloom", func(t *testing.T) {
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/bad-status" {
				http.Error(w, "<html>gateway</html>", http.StatusBadGateway)
				return
			}
			w.Write([]byte("<html>hello</html>"))
		}))
		t.Cleanup(other.Close)
		c := &proxy.Client{URL: other.URL}
		if _, err := c.Get(t.Context(), "/bad-status", nil, nil); err == nil || !strings.Contains(err.Error(), "502") {
			t.Fatalf("non-JSON error: got %v, want one naming 502", err)
		}
		var v proxy.SessionsReply
		if _, err := c.Get(t.Context(), "/api/sessions", nil, &v); err == nil || !strings.Contains(err.Error(), "decode reply") {
			t.Fatalf("non-JSON 200: got %v, want a decode error", err)
		}
	})
}
