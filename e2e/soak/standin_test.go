package soak

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

const (
	ocRecording   = "../../adapters/opencode/testdata/parent-child-compact.sse"
	clawRecording = "../../adapters/openclaw/testdata/live/spawn.all-frames.json"
)

// TestOpenCodeConversation: a replayed conversation still decodes, through heirloom's own
// decoder, into a new parent and its task child, with new ids and new text; two conversations
// share no id; and the stand-in's REST replies decode as a resync reads them.
func TestOpenCodeConversation(t *testing.T) {
	oc, err := newOpenCode(ocRecording)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.close()
	r := rand.New(rand.NewPCG(1, 1))
	frames, child := oc.tmpl.conversation(7, r, 1)
	other, _ := oc.tmpl.conversation(8, r, 1)
	var parent string
	var turns int
	for i, f := range frames {
		if f.raw == oc.tmpl.frames[i].raw {
			t.Errorf("frame %d (%s) unchanged", i, f.typ)
		}
		if f.raw == other[i].raw {
			t.Errorf("frame %d (%s) the same in two conversations", i, f.typ)
		}
		evs, err := opencode.DecodeFrame([]byte(f.raw))
		if err != nil {
			t.Fatalf("frame %d (%s): %v", i, f.typ, err)
		}
		for _, ev := range evs {
			switch {
			case ev.Kind == adapters.KindSessionStart && ev.ParentSessionID == "":
				parent = ev.SessionID
			case ev.Kind == adapters.KindSessionStart && ev.SessionID == child && ev.ParentSessionID != parent:
				t.Errorf("child %s has parent %q, want %q", child, ev.ParentSessionID, parent)
			case ev.Kind == adapters.KindTurns:
				turns += len(ev.Turns)
			}
		}
		oc.publish(context.Background(), f)
	}
	if parent == "" || parent == oc.tmpl.parent || child == oc.tmpl.child || len(parent) != len(oc.tmpl.parent) {
		t.Errorf("parent %q, child %q: want new ids of the recorded length (recorded %q, %q)", parent, child, oc.tmpl.parent, oc.tmpl.child)
	}
	if turns == 0 {
		t.Error("no turns decoded")
	}

	list := get(t, oc.URL()+"/session")
	evs, err := opencode.DecodeSessionList(list)
	if err != nil || len(evs) != 2 {
		t.Fatalf("GET /session: %d sessions, %v; want 2\n%s", len(evs), err, list)
	}
	msgs := get(t, oc.URL()+"/session/"+child+"/message")
	evs, err = opencode.DecodeMessages(child, msgs)
	if err != nil || len(evs) == 0 || len(evs[0].Turns) == 0 {
		t.Fatalf("GET /session/%s/message: %v, %v\n%.500s", child, evs, err, msgs)
	}
	if strings.Contains(string(msgs), "the answer is 42") {
		t.Error("the recorded text is still there")
	}
}

// TestOpenClawConversation: a replayed Gateway conversation still decodes, through heirloom's own
// decoder, into two new parents and a sub-agent spawned by the second.
func TestOpenClawConversation(t *testing.T) {
	tmpl, err := loadClawTemplate(clawRecording)
	if err != nil {
		t.Fatal(err)
	}
	frames, child := tmpl.conversation(7, rand.New(rand.NewPCG(1, 1)), 1)
	if !strings.HasPrefix(child, "agent:main:subagent:") || child == tmpl.child || len(child) != len(tmpl.child) {
		t.Errorf("child %q: want a new sub-agent key of the recorded length (recorded %q)", child, tmpl.child)
	}
	var parentOfChild string
	sessions := map[string]bool{}
	for i, f := range frames {
		if strings.Contains(string(f.payload), "parentb") || strings.Contains(string(f.payload), "the answer is 42") {
			t.Errorf("frame %d (%s) still holds the recording's keys or text", i, f.event)
		}
		evs, err := openclaw.DecodeEvent(f.event, f.payload)
		if err != nil {
			t.Fatalf("frame %d (%s): %v", i, f.event, err)
		}
		for _, ev := range evs {
			sessions[ev.SessionID] = true
			if ev.SessionID == child && ev.ParentSessionID != "" {
				parentOfChild = ev.ParentSessionID
			}
		}
	}
	if parentOfChild != "agent:main:soak7b" {
		t.Errorf("the sub-agent's parent is %q, want agent:main:soak7b (sessions seen: %v)", parentOfChild, sessions)
	}
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if !json.Valid(b) {
		t.Fatalf("GET %s: not JSON: %.300s", url, b)
	}
	return b
}
