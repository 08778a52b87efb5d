package opencode_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/streamtest"
)

// Describe reads a session the stream has not reported, and its parent with the parent's
// messages, parent first; a session the server does not know is an error.
func TestClient_Describe(t *testing.T) {
	srv := newFakeServer(t).start()
	child := strings.Replace(sessionInfo("ses_c", 2), `"projectID"`, `"parentID":"ses_p","projectID"`, 1)
	srv.setSessions(sessionInfo("ses_p", 1), child)
	srv.setMessages("ses_p", messagesReply("ses_p", "prt_1", "the parent's finding"))
	c := newTestClient(t, srv.URL, &streamtest.Sink{})
	if _, err := c.Describe(t.Context(), "ses_c"); err == nil {
		t.Error("a client never opened described a session")
	}
	if err := c.Open(t.Context()); err != nil {
		t.Fatal(err)
	}

	evs, err := c.Describe(t.Context(), "ses_c")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		s := fmt.Sprintf("%s %s", ev.Kind, ev.SessionID)
		if ev.ParentSessionID != "" {
			s += " parent " + ev.ParentSessionID
		}
		for _, turn := range ev.Turns {
			s += " " + turn.Text
		}
		got = append(got, s)
	}
	want := []string{
		fmt.Sprintf("%s ses_p", adapters.KindSessionStart),
		fmt.Sprintf("%s ses_p the parent's finding", adapters.KindTurns),
		fmt.Sprintf("%s ses_c parent ses_p", adapters.KindSessionStart),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
	if _, err := c.Describe(t.Context(), "ses_gone"); err == nil {
		t.Error("a session the server does not know was described")
	}
}
