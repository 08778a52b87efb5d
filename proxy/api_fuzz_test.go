package proxy_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzAPIQuery drives every API route with arbitrary path keys and query strings through the
// server's handler: each answer is a JSON object, 200 or an error with a code (400, 404), never
// a 500 and never a panic.
func FuzzAPIQuery(f *testing.F) {
	for _, seed := range []struct{ key, query string }{
		{"r", ""},
		{"r:a", "limit=2&from=1"},
		{"r%3Aa%3Ab", "scope=default&top_level=true&status=active"},
		{"x", "limit=1001&limit=2"},
		{"%00", "harness=%zz;project=/src/app"},
		{"a%2Fb", "from=18446744073709551616&root=r&child=r:a"},
		{"%ff", "status=%ff&parent=%00"},
	} {
		f.Add(seed.key, seed.query)
	}
	h := mustOpenSeeded(f, nil).Handler()
	if h == nil {
		f.Fatal("Handler: got nil after Open")
	}
	f.Fuzz(func(t *testing.T, key, query string) {
		for _, path := range []string{
			"/api/sessions",
			"/api/sessions/" + key,
			"/api/sessions/" + key + "/transcript",
			"/api/sessions/" + key + "/lineage",
			"/api/runs",
		} {
			u, err := url.ParseRequestURI(path + "?" + query)
			if err != nil {
				continue // not a request line a client could send
			}
			req := (&http.Request{Method: http.MethodGet, URL: u, Host: "127.0.0.1", Header: http.Header{}}).WithContext(t.Context())
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			switch rec.Code {
			case 200, 400, 404:
			case 301, 307, 308:
				continue // the mux cleaning the path ("..", "//"): no handler ran
			default:
				t.Fatalf("GET %s: status %d: %s", u, rec.Code, rec.Body)
			}
			var reply map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &reply); err != nil {
				t.Fatalf("GET %s: reply is not a JSON object: %q", u, rec.Body)
			}
			if rec.Code != 200 && (reply["code"] == nil || reply["error"] == nil) {
				t.Fatalf("GET %s: error reply without a code: %q", u, rec.Body)
			}
		}
	})
}

// FuzzCheckpointPost drives POST /api/sessions/{key}/checkpoints with arbitrary keys, queries and
// bodies: each answer is a JSON object, 200 or an error with a code, never a 500 or a panic.
func FuzzCheckpointPost(f *testing.F) {
	for _, seed := range []struct{ key, query, body string }{
		{"r", "", ""},
		{"r", "trigger=explicit", `{"decisions":["a"],"constraints":["b"],"objective":"c"}`},
		{"r:a", "trigger=periodic", `{"decisions":"a"}`},
		{"%00", "scope=%ff", `{`},
		{"nope", "scope=other", `{"bogus":1}`},
	} {
		f.Add(seed.key, seed.query, seed.body)
	}
	h := mustOpenSeeded(f, nil).Handler()
	f.Fuzz(func(t *testing.T, key, query, body string) {
		if strings.ContainsAny(key, "/?#") {
			return // another route, or none
		}
		u, err := url.ParseRequestURI("/api/sessions/" + key + "/checkpoints?" + query)
		if err != nil {
			return
		}
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "http://127.0.0.1/", strings.NewReader(body))
		req.URL, req.RequestURI = u, ""
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 400, 404:
		case 301, 307, 308:
			return
		default:
			t.Fatalf("POST %s %q: status %d: %s", u, body, rec.Code, rec.Body)
		}
		var reply map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &reply); err != nil {
			t.Fatalf("POST %s: reply is not a JSON object: %q", u, rec.Body)
		}
	})
}
