package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
)

// TestDeleteSession_RacesStream deletes a session again and again while its stream delivers
// turns (with periodic checkpoints on): each delete lands between two events, so the stream
// never has an event refused, and what is left is whole: the turns the session record counts,
// every one of them indexed, no posting, turn or checkpoint without its session.
func TestDeleteSession_RacesStream(t *testing.T) {
	e := openEngine(t, cct.NewTree(t, "unused"), func(e *engine.Engine) { e.Config.Checkpoints.EveryPrompts = 3 })
	ctx := t.Context()
	const id, events = "ses_race", 300
	var (
		wg      sync.WaitGroup
		done    = make(chan struct{})
		refused []error
		deletes int
	)
	wg.Go(func() {
		defer close(done)
		for i := range events {
			ev := adapters.Event{Harness: "opencode", Kind: adapters.KindTurns, SessionID: id, Cwd: "/work/app"}
			for j := range 1 + i%3 {
				ev.Turns = append(ev.Turns, adapters.Turn{ID: fmt.Sprintf("prt_%d_%d", i, j), Role: []string{"user", "assistant"}[j%2],
					Text: fmt.Sprintf("zqracer event %d part %d", i, j)})
			}
			if err := e.Consume(ctx, ev); err != nil {
				refused = append(refused, err)
			}
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			_, err := e.DeleteSession(ctx, "", id)
			switch {
			case err == nil:
				deletes++
			case !errors.Is(err, kv.ErrNotFound):
				t.Errorf("delete: %v", err)
				return
			}
		}
	})
	wg.Wait()
	if len(refused) > 0 {
		t.Errorf("%d of %d events refused while deletes ran; the first: %v", len(refused), events, refused[0])
	}
	if deletes == 0 {
		t.Fatal("no delete landed while the stream ran: the test raced nothing")
	}
	t.Logf("%d deletes landed among %d events", deletes, events)
	checkWhole(t, e, id, 3*events)

	// A last delete leaves nothing of the session.
	if _, err := e.DeleteSession(ctx, "default", id); err != nil && !errors.Is(err, kv.ErrNotFound) {
		t.Fatal(err)
	}
	checkWhole(t, e, id, 3*events)
	if _, err := e.DeleteSession(ctx, "", id); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("delete a deleted session: got %v, want kv.ErrNotFound", err)
	}
}

// checkWhole checks that what the store holds of session id is whole: with its record, exactly
// the turns the record counts, each with its posting of "zqracer" and within the index's
// figures; without it, no turn (of the first maxSeq), posting or checkpoint of it.
func checkWhole(t *testing.T, e *engine.Engine, id string, maxSeq int) {
	t.Helper()
	ctx := context.Background()
	sess, err := e.Store.GetSession(ctx, "default", id)
	exists := err == nil
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		t.Fatal(err)
	}
	x, err := e.Store.IndexReader(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	stored := 0
	for seq := range uint64(maxSeq) {
		if _, err := x.Turn(ctx, id, seq); err == nil {
			stored++
		} else if !errors.Is(err, kv.ErrNotFound) {
			t.Fatal(err)
		}
	}
	postings := 0
	err = x.Postings(ctx, "zqracer", false, func(p kv.Posting) error {
		postings++
		if _, err := x.Turn(ctx, p.Session, p.Seq); err != nil {
			t.Errorf("a posting of turn %s/%d: %v", p.Session, p.Seq, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fig, err := x.Figures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkpoints, err := e.Store.Checkpoints(ctx, "default", id, 0)
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		t.Fatal(err)
	}
	switch {
	case exists && (uint64(stored) != sess.TurnCount || postings != stored || fig.Docs != uint64(stored)):
		t.Errorf("session stored with %d turns counted: %d turns, %d postings, %d turns in the index figures", sess.TurnCount, stored, postings, fig.Docs)
	case !exists && (stored != 0 || postings != 0 || fig.Docs != 0 || len(checkpoints) != 0):
		t.Errorf("session deleted, but left: %d turns, %d postings, %d turns in the index figures, %d checkpoints", stored, postings, fig.Docs, len(checkpoints))
	}
}
