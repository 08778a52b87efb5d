package proxy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/proxy"
)

// TestUI_Token: with a token set, the viewer's static files answer without it (they hold no
// data; its own script and style sheet load as no-cors), the data does not; POST /ui/session
// with the bearer token sets the cookie, which then opens reads, never a change.
func TestUI_Token(t *testing.T) {
	s := MustOpenServer(t, func(s *proxy.Server) { s.Token = "tok" })
	do := func(method, path string, header map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL()+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, p := range []string{"/ui/", "/ui/app.js", "/ui/app.css"} {
		if r := do("GET", p, map[string]string{"Sec-Fetch-Mode": "no-cors"}); r.StatusCode != 200 {
			t.Errorf("GET %s without the token: %d, want 200", p, r.StatusCode)
		}
	}
	if r := do("GET", "/api/sessions", nil); r.StatusCode != 401 {
		t.Errorf("the API without the token: %d", r.StatusCode)
	}
	if r := do("POST", "/ui/session", nil); r.StatusCode != 401 || len(r.Cookies()) != 0 {
		t.Errorf("POST /ui/session without the token: %d, cookies %v", r.StatusCode, r.Cookies())
	}
	r := do("POST", "/ui/session", map[string]string{"Authorization": "Bearer tok"})
	if r.StatusCode != 200 || len(r.Cookies()) != 1 || !r.Cookies()[0].HttpOnly || r.Cookies()[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("POST /ui/session with the token: %d, cookies %+v", r.StatusCode, r.Cookies())
	}
	c := r.Cookies()[0]
	if c.Value == "tok" || !strings.HasPrefix(c.Name, "heirloom_ui_") {
		t.Errorf("the cookie %s=%s: want a value derived from the token, named by the port", c.Name, c.Value)
	}
	viewer := map[string]string{"Cookie": c.Name + "=" + c.Value, "Sec-Fetch-Site": "same-origin"}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range viewer {
			h[k] = v
		}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	for _, p := range []string{"/api/sessions", "/api/status", "/api/runs"} {
		if r := do("GET", p, viewer); r.StatusCode != 200 {
			t.Errorf("the viewer's read %s: %d, want 200", p, r.StatusCode)
		}
	}
	for what, req := range map[string]struct {
		method, path string
		header       map[string]string
	}{
		"a change":                               {"POST", "/api/sessions/x/checkpoints", viewer},
		"GET /api/inject (it writes)":            {"GET", "/api/inject?harness=opencode&session=s-1&purpose=compacting", viewer},
		"the metrics":                            {"GET", "/metrics", viewer},
		"a page on another port of the host":     {"GET", "/api/sessions", with(map[string]string{"Sec-Fetch-Site": "same-site"})},
		"no Sec-Fetch-Site (not a browser page)": {"GET", "/api/sessions", map[string]string{"Cookie": c.Name + "=" + c.Value}},
		"a wrong cookie":                         {"GET", "/api/sessions", with(map[string]string{"Cookie": c.Name + "=wrong"})},
		"the token itself as the cookie":         {"GET", "/api/sessions", with(map[string]string{"Cookie": c.Name + "=tok"})},
	} {
		if r := do(req.method, req.path, req.header); r.StatusCode != 401 {
			t.Errorf("%s with the viewer's cookie: %d, want 401", what, r.StatusCode)
		}
	}
	// A WebSocket names its Origin rather than Sec-Fetch-Site: this host and port is the page's.
	if r := do("GET", "/api/sessions", map[string]string{"Cookie": c.Name + "=" + c.Value, "Origin": s.URL()}); r.StatusCode != 200 {
		t.Errorf("the viewer's read naming its own Origin: %d, want 200", r.StatusCode)
	}
	if r := do("GET", "/api/sessions", map[string]string{"Cookie": c.Name + "=" + c.Value, "Origin": "http://127.0.0.1:1"}); r.StatusCode != 403 {
		t.Errorf("a read naming another port's Origin: %d, want 403", r.StatusCode)
	}
	req, _ := http.NewRequest("POST", s.URL()+"/api/sessions/search", strings.NewReader(`{"query":"x"}`))
	for k, v := range viewer {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("the viewer's search: %v %v, want 200", resp.StatusCode, err)
	}
	if r := do("GET", "/api/sessions", map[string]string{"Sec-Fetch-Mode": "no-cors", "Authorization": "Bearer tok"}); r.StatusCode != 403 {
		t.Errorf("a no-cors read of data: %d, want 403 as before", r.StatusCode)
	}
}
