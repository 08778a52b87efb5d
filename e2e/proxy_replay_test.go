package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/heirloom-dev/heirloom/proxy"
)

// recordingUpstream is an existing http hook target: it answers every hook call with a
// distinctive reply of its own (its own additionalContext, other fields, unknown ones, its own
// spacing) and records what it was sent and what it answered.
type recordingUpstream struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	auth    []string
	replies []string
}

func startRecordingUpstream(tb testing.TB) *recordingUpstream {
	tb.Helper()
	u := &recordingUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var in struct {
			Event string `json:"hook_event_name"`
		}
		_ = json.Unmarshal(body, &in)
		u.mu.Lock()
		n := len(u.bodies)
		reply := fmt.Sprintf(`{"continue":true, "systemMessage":"upstream #%d saw %s",`+
			`"hookSpecificOutput":{"hookEventName":%q,"additionalContext":"upstream memory #%d for %s","x-upstream":{"n":%d,"tags":["a","b"]}},`+
			"\n \"suppressOutput\":false,\"x-trace\":\"t-%03d\"}\n", n, in.Event, in.Event, n, in.Event, n, n)
		u.bodies = append(u.bodies, body)
		u.auth = append(u.auth, r.Header.Get("Authorization"))
		u.replies = append(u.replies, reply)
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, reply)
	}))
	tb.Cleanup(u.Close)
	return u
}

// calls returns what the upstream was sent and what it answered, in order.
func (u *recordingUpstream) calls() (bodies [][]byte, auth, replies []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([][]byte(nil), u.bodies...), append([]string(nil), u.auth...), append([]string(nil), u.replies...)
}

// proxiedTransport posts each payload to an in-process heirloom configured with up as its Claude
// Code upstream; configure adjusts the server further.
func proxiedTransport(up *recordingUpstream, configure func(*proxy.Server)) transport {
	return transport{name: "Proxied", open: func(tb testing.TB, roots []string, root *replayRoot) (func(testing.TB, []byte) []byte, func(testing.TB) storeState) {
		srv := mustOpenServer(tb, func(s *proxy.Server) {
			s.Engine.Config.TranscriptRoots = roots
			s.Upstreams = map[string]*proxy.Upstream{"claude-code": {URL: up.URL + "/memory/hook", Token: "up-token"}}
			if configure != nil {
				configure(s)
			}
		})
		send := func(tb testing.TB, payload []byte) []byte {
			tb.Helper()
			resp, err := http.Post(srv.URL()+"/hooks/claude-code", "application/json", bytes.NewReader(payload))
			if err != nil {
				tb.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				tb.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				tb.Fatalf("hook endpoint: %s: %s", resp.Status, body)
			}
			return body
		}
		return send, func(tb testing.TB) storeState { return readState(tb, srv.Engine.Store, root) }
	}}
}

// TestProxyReplay replays every recorded Claude Code hook stream twice: through heirloom alone,
// and through heirloom in front of an upstream hook target. Each proxied reply must be exactly
// the upstream's reply with heirloom's sections (as heirloom alone answered) placed first in its
// additionalContext, every other byte unchanged; the upstream must receive every payload as the
// harness sent it; and heirloom must store exactly what it stores without an upstream.
func TestProxyReplay(t *testing.T) {
	for _, name := range recordingNames(t) {
		t.Run(name, func(t *testing.T) {
			rec := loadRecording(t, name)

			aloneRoot := newReplayRoot(t)
			sendAlone, stateAlone := httpTransport.open(t, []string{aloneRoot.TranscriptRoot()}, aloneRoot)
			alone := deliver(t, rec, aloneRoot, transcriptLines{}, sendAlone)

			up := startRecordingUpstream(t)
			root := newReplayRoot(t)
			send, state := proxiedTransport(up, nil).open(t, []string{root.TranscriptRoot()}, root)
			proxied := deliver(t, rec, root, transcriptLines{}, send)

			bodies, auth, upReplies := up.calls()
			if len(upReplies) != len(rec.Calls) {
				t.Fatalf("upstream got %d calls, want %d", len(upReplies), len(rec.Calls))
			}
			var merged int
			for i, c := range rec.Calls {
				if !bytes.Equal(bodies[i], root.Payload(c)) {
					t.Errorf("seq %d %s: upstream got\n%s\nwant the harness's payload\n%s", c.Seq, c.Event, bodies[i], root.Payload(c))
				}
				if auth[i] != "Bearer up-token" {
					t.Errorf("seq %d: upstream Authorization %q", c.Seq, auth[i])
				}
				theirs := string(root.Unroot([]byte(upReplies[i])))
				want := theirs
				if ours := additionalContext(t, alone[i].body); ours != "" {
					own := fmt.Sprintf("upstream memory #%d for %s", i, c.Event)
					want = strings.Replace(theirs, jsonString(own), jsonString(ours+"\n\n"+own), 1)
					merged++
				}
				if got := string(proxied[i].body); got != want {
					t.Errorf("seq %d %s: got\n%s\nwant\n%s", c.Seq, c.Event, got, want)
				}
			}
			if strings.HasPrefix(name, "spawn") && merged == 0 {
				t.Errorf("no reply carried heirloom's sections: nothing was merged")
			}
			if d := diffState("alone", stateAlone(t), "proxied", state(t)); d != "" {
				t.Errorf("in front of an upstream heirloom stored something else:\n%s", d)
			}
		})
	}
}

// TestProxyReplayPassive replays every recording through heirloom in passive mode (inheritance
// and continuity blocks off, so no blocks) in front of the upstream: every reply is the upstream's, byte for byte,
// and heirloom still records the sessions and their lineage.
func TestProxyReplayPassive(t *testing.T) {
	for _, name := range recordingNames(t) {
		t.Run(name, func(t *testing.T) {
			rec := loadRecording(t, name)
			up := startRecordingUpstream(t)
			root := newReplayRoot(t)
			passive := func(s *proxy.Server) { s.Engine.Config.Passive = true }
			send, state := proxiedTransport(up, passive).open(t, []string{root.TranscriptRoot()}, root)
			replies := deliver(t, rec, root, transcriptLines{}, send)
			_, _, upReplies := up.calls()
			if len(upReplies) != len(rec.Calls) {
				t.Fatalf("upstream got %d calls, want %d", len(upReplies), len(rec.Calls))
			}
			for i, c := range rec.Calls {
				if want := root.Unroot([]byte(upReplies[i])); !bytes.Equal(replies[i].body, want) {
					t.Errorf("seq %d %s: got\n%s\nwant the upstream's reply byte for byte\n%s", c.Seq, c.Event, replies[i].body, want)
				}
			}
			st := state(t)
			checkKnown(t, rec.Name, st)
			checkAgainstHooks(t, rec.Calls, st)
		})
	}
}

// jsonString encodes s as a JSON string, without HTML escaping, as heirloom writes it.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
