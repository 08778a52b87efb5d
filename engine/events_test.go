package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// drain returns what sub has received so far, without waiting past a short quiet spell.
func drain(sub *engine.Subscription) []engine.Event {
	var out []engine.Event
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-time.After(50 * time.Millisecond):
			return out
		}
	}
}

func types(evs []engine.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

// TestEvents_SpawnLifecycle drives a sub-agent's whole life through Claude Code's hooks and
// reads the feed: the sessions starting, the run starting with its child, the inherited block
// handed to the child, the run ending with its end reason, the child ending; a subscriber for
// one type sees only that type, one for the child's session only what concerns the child.
func TestEvents_SpawnLifecycle(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	all := e.Feed.Subscribe(engine.EventFilter{}, 0)
	defer all.Close()
	runs := e.Feed.Subscribe(engine.EventFilter{Types: []string{engine.EventRunStarted, engine.EventRunEnded}}, 0)
	defer runs.Close()
	child := e.Feed.Subscribe(engine.EventFilter{Session: S + ":agent1"}, 0)
	defer child.Close()

	mustHook(t, e, cct.Event(tr, S, "SessionStart", map[string]any{"source": "startup"}))
	cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "Port the parser."), cct.AssistantLine("a1", "Reading."))
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Port the parser."}))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_1", "Explore", "Find every caller", ""))
	block := mustHook(t, e, cct.Start(tr, S, "agent1", "Explore"))
	sub := filepath.Join(filepath.Dir(tr.Transcript), "S", "subagents", "agent-agent1.jsonl")
	cct.AppendLines(t, sub, cct.UserLine("c1", "Find every caller"), cct.AssistantLine("c2", "Three."))
	mustHook(t, e, cct.Event(tr, S, "SubagentStop", map[string]any{"agent_id": "agent1", "agent_type": "Explore", "agent_transcript_path": sub, "last_assistant_message": "Three."}))
	mustHook(t, e, cct.Result(tr, S, "toolu_1", "agent1", "Three callers."))

	got := drain(all)
	find := func(typ, session string) *engine.Event {
		for i := range got {
			if got[i].Type == typ && got[i].Session == session {
				return &got[i]
			}
		}
		return nil
	}
	if ev := find(engine.EventSessionStarted, S); ev == nil || ev.Scope != "default" || ev.Data["harness"] != "claude-code" {
		t.Errorf("session.started for S: %+v", ev)
	}
	if ev := find(engine.EventSessionStarted, S+":agent1"); ev == nil || ev.Data["parent"] != S || ev.Data["depth"] != 1 {
		t.Errorf("session.started for the child: %+v", ev)
	}
	if ev := find(engine.EventRunStarted, S); ev == nil || ev.Run != "toolu_1" || ev.Data["child"] != S+":agent1" {
		t.Errorf("run.started: %+v", ev)
	}
	if ev := find(engine.EventBlockInjected, S+":agent1"); ev == nil || ev.Data["block"] != inject.InheritedHeading || ev.Data["chars"] != inject.Len(block) || ev.Data["via"] != "subagent_start" {
		t.Errorf("block.injected for the child: %+v (the block is %d units)", ev, inject.Len(block))
	}
	if ev := find(engine.EventRunEnded, S); ev == nil || ev.Run != "toolu_1" || ev.Data["status"] != "completed" {
		t.Errorf("run.ended: %+v", ev)
	}
	if ev := find(engine.EventSessionEnded, S+":agent1"); ev == nil {
		t.Errorf("no session.ended for the child in %v", types(got))
	}
	if ev := find(engine.EventCheckpointWritten, S); ev == nil || ev.Data["trigger"] != "spawn" {
		t.Errorf("checkpoint.written for the spawn checkpoint: %+v", ev)
	}
	if got := types(drain(runs)); !slices.Equal(got, []string{engine.EventRunStarted, engine.EventRunEnded}) {
		t.Errorf("the run-only subscriber saw %v", got)
	}
	for _, ev := range drain(child) {
		if ev.Session != S+":agent1" && ev.Data["child"] != S+":agent1" {
			t.Errorf("the child's subscriber saw %+v", ev)
		}
	}
}

// TestEvents_BlockNotDelivered: a block is reported injected only when the hook's answer was
// returned in time; past the deadline the harness got nothing, so nothing is reported, though
// the work behind it (the child's pairing) is finished in the background.
func TestEvents_BlockNotDelivered(t *testing.T) {
	tr := cct.NewTree(t, "S")
	e := openEngine(t, tr, nil)
	sub := e.Feed.Subscribe(engine.EventFilter{Types: []string{engine.EventBlockInjected}}, 0)
	defer sub.Close()
	cct.AppendLines(t, tr.Transcript, cct.UserLine("u1", "Port the parser."), cct.AssistantLine("a1", "Reading."))
	mustHook(t, e, cct.Event(tr, S, "UserPromptSubmit", map[string]any{"prompt": "Port the parser."}))
	mustHook(t, e, cct.Spawn(tr, S, "toolu_1", "Explore", "Find every caller", ""))

	late, cancel := context.WithCancel(t.Context())
	cancel() // the hook's deadline passed before heirloom answered
	body, _ := json.Marshal(cct.Start(tr, S, "agent1", "Explore"))
	ev, err := claudecode.Adapter{}.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := e.Hook(late, ev); err == nil || a.Context != "" {
		t.Fatalf("hook past its deadline: got %+v, %v; want no answer and the context's error", a, err)
	}
	waitRun(t, e, "toolu_1", "paired in the background", func(r kv.Run) bool { return r.ChildID == S+":agent1" })
	if evs := drain(sub); len(evs) != 0 {
		t.Errorf("block.injected for an answer never delivered: %+v", evs)
	}

	// In time: reported.
	if block := mustHook(t, e, cct.Start(tr, S, "agent1", "Explore")); block == "" {
		t.Fatal("no inherited block on the repeated SubagentStart")
	}
	if evs := drain(sub); len(evs) != 1 || evs[0].Session != S+":agent1" {
		t.Errorf("block.injected in time: got %+v, want one for S:agent1", evs)
	}
}

// TestFeed_SlowSubscriberDropped: a subscriber that does not read is dropped once its buffer is
// full, and publishing never waits on it; others keep receiving.
func TestFeed_SlowSubscriberDropped(t *testing.T) {
	var f engine.Feed
	slow := f.Subscribe(engine.EventFilter{}, 2)
	fast := f.Subscribe(engine.EventFilter{}, 100)
	done := make(chan struct{})
	go func() {
		for range 10 {
			f.Publish(engine.Event{Type: engine.EventSessionStarted})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish waited on a subscriber that does not read")
	}
	n := 0
	for range slow.C {
		n++
	}
	if n != 2 || !slow.Dropped() {
		t.Errorf("slow subscriber: %d events then closed, dropped %v; want 2, true", n, slow.Dropped())
	}
	if got := len(drain(fast)); got != 10 || fast.Dropped() {
		t.Errorf("fast subscriber: %d events, dropped %v", got, fast.Dropped())
	}
	if st := f.Stats(); st.Dropped != 1 || st.Subscribers != 1 {
		t.Errorf("stats %+v", st)
	}
	fast.Close()
	fast.Close()
	if st := f.Stats(); st.Subscribers != 0 {
		t.Errorf("after Close: %+v", st)
	}
}
