package proxy_test

import (
	"io"
	"net/http"
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
	cookie := map[string]string{"Cookie": r.Cookies()[0].Name + "=" + r.Cookies()[0].Value}
	if r := do("GET", "/api/sessions", cookie); r.StatusCode != 200 {
		t.Errorf("a read with the viewer's cookie: %d, want 200", r.StatusCode)
	}
	if r := do("POST", "/api/sessions/x/checkpoints", cookie); r.StatusCode != 401 {
		t.Errorf("a change with the viewer's cookie: %d, want 401", r.StatusCode)
	}
	if r := do("GET", "/api/sessions", map[string]string{"Cookie": "heirloom_token=wrong"}); r.StatusCode != 401 {
		t.Errorf("a wrong cookie: %d", r.StatusCode)
	}
	if r := do("GET", "/api/sessions", map[string]string{"Sec-Fetch-Mode": "no-cors", "Authorization": "Bearer tok"}); r.StatusCode != 403 {
		t.Errorf("a no-cors read of data: %d, want 403 as before", r.StatusCode)
	}
}
