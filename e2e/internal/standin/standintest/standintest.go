// Package standintest holds the helpers the tests of the model-API
// stand-ins (packages standin, chatapi and messagesapi) share: starting a
// stand-in for one test, sending it a request, decoding a request body and
// reading a stream of server-sent events.
package standintest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Start starts s and closes it when the test ends; a start error fails tb.
func Start[S interface {
	Start() error
	Close()
}](tb testing.TB, s S) S {
	tb.Helper()
	if err := s.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Do sends a request with body and the given headers (nil for none) and
// returns the response with its body read. A transport error fails tb.
func Do(tb testing.TB, method, url, body string, header map[string]string) (*http.Response, string) {
	tb.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, string(b)
}

// Post is Do for a POST of a JSON body.
func Post(tb testing.TB, url, body string) (*http.Response, string) {
	tb.Helper()
	return Do(tb, http.MethodPost, url, body, map[string]string{"Content-Type": "application/json"})
}

// Decode decodes the JSON body into an R; an error fails tb.
func Decode[R any](tb testing.TB, body string) R {
	tb.Helper()
	var r R
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		tb.Fatal(err)
	}
	return r
}

// Event is one server-sent event: its name ("" when it has no event line)
// and its data.
type Event struct {
	Name, Data string
}

// Events splits a stream of server-sent events into events, failing tb on
// any line that is not "event: ", "data: " or blank.
func Events(tb testing.TB, body string) []Event {
	tb.Helper()
	var out []Event
	var cur Event
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur != (Event{}) {
				out = append(out, cur)
			}
			cur = Event{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data = strings.TrimPrefix(line, "data: ")
		default:
			tb.Fatalf("unexpected SSE line %q", line)
		}
	}
	if cur != (Event{}) {
		out = append(out, cur)
	}
	return out
}

// Texts is what the text methods of a stand-in's Request return.
type Texts struct {
	System, FirstUser, LastUser, All string
}

// CheckTexts fails tb for each text method of r that does not return what
// want says.
func CheckTexts(tb testing.TB, r interface {
	SystemText() string
	FirstUserText() string
	LastUserText() string
	AllText() string
}, want Texts) {
	tb.Helper()
	for _, tt := range []struct{ method, got, want string }{
		{"SystemText", r.SystemText(), want.System},
		{"FirstUserText", r.FirstUserText(), want.FirstUser},
		{"LastUserText", r.LastUserText(), want.LastUser},
		{"AllText", r.AllText(), want.All},
	} {
		if tt.got != tt.want {
			tb.Errorf("%s: got %q, want %q", tt.method, tt.got, tt.want)
		}
	}
}
