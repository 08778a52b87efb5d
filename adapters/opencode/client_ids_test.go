package opencode_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
)

// TestClientDropsJunkIDs (issue 16, item 7): a frame naming a session id no record may have
// (bytes that are not UTF-8, a control character, over adapters.MaxIDBytes) reaches no sink:
// the stream is no request to answer 400, so the frame is logged, counted as malformed and
// dropped, and the stream goes on.
func TestClientDropsJunkIDs(t *testing.T) {
	streamtest.CheckGoroutines(t)
	srv := newFakeServer(t)
	junk := []string{"ses_\xffbad", `ses_\u0007bell`, "ses_" + strings.Repeat("x", adapters.MaxIDBytes)}
	srv.stream = func(w *sseWriter, r *http.Request, n int) {
		w.send(frameConnected)
		if n == 1 {
			for _, id := range junk {
				w.send(`{"id":"evt_j","type":"session.created","properties":{"info":{"id":"` + id + `","time":{"created":1}}}}`)
			}
			w.send(`{"id":"evt_k","type":"session.created","properties":{"info":{"id":"ses_child","parentID":"ses_\u0000","time":{"created":1}}}}`)
			w.send(frameSessionCreated("ses_ok"))
		}
		w.hold(r)
	}
	sink := &streamtest.Sink{}
	c := newTestClient(t, srv.start().URL, sink)
	logs := &streamtest.Logger{}
	c.Logger = logs
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	streamtest.WaitFor(t, streamtest.Patience, "the frame after the junk ones", func() bool {
		return sink.Index(forSession("ses_ok")) >= 0
	})
	if i := sink.Index(func(ev adapters.Event) bool { return ev.SessionID != "ses_ok" }); i >= 0 {
		t.Errorf("an event with a junk id reached the sink: %+v", sink.All()[i])
	}
	if st := c.Stats(); st.Malformed != 4 {
		t.Errorf("stats: got %+v, want the 4 junk frames counted malformed", st)
	}
	if !logs.Contains("not valid UTF-8") {
		t.Errorf("logs: got %q, want the first junk frame logged", logs.Lines())
	}
}
