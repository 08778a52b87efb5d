package kv

import (
	"context"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// TailWindow says which of a session's newest turns a reader wants: its newest MinTurns when
// their text (Text plus Tool, in bytes) reaches TextBytes, else its newest MaxTurns (a short
// window, widened when its text cannot fill the reader's budget: many short turns). A session
// with fewer turns gives all it has. The zero value takes none.
type TailWindow struct {
	MinTurns  int
	MaxTurns  int
	TextBytes int
}

// Cut returns the window of turns, which are the newest turns of a session, ascending: all of
// it when Complete says they hold it.
func (w TailWindow) Cut(turns []Turn) []Turn {
	short := w.short(len(turns))
	if textOf(turns[len(turns)-short:]) >= w.TextBytes {
		return turns[len(turns)-short:]
	}
	return turns[len(turns)-min(len(turns), max(w.MaxTurns, 0)):]
}

// Complete reports whether turns, the newest turns of a session of total turns, hold the whole
// window of that session. A reader that appended turns to a window it read before checks this,
// and reads again only when the window now reaches past what it holds.
func (w TailWindow) Complete(turns []Turn, total uint64) bool {
	if uint64(len(turns)) >= total {
		return true
	}
	short := w.short(int(min(total, uint64(w.MinTurns))))
	if len(turns) < short {
		return false
	}
	if textOf(turns[len(turns)-short:]) >= w.TextBytes {
		return true
	}
	return uint64(len(turns)) >= min(total, uint64(max(w.MaxTurns, 0)))
}

// short is the size of the short window over count turns.
func (w TailWindow) short(count int) int {
	return max(0, min(count, w.MinTurns, w.MaxTurns))
}

// textOf is the text the window counts in turns.
func textOf(turns []Turn) int {
	n := 0
	for _, t := range turns {
		n += len(t.Text) + len(t.Tool)
	}
	return n
}

// ViewOptions says what Store.View reads besides the session.
type ViewOptions struct {
	Tail       TailWindow // which of the newest turns to read
	Checkpoint bool       // also read the session's latest checkpoint
	Facts      bool       // also read the session's facts ledger
}

// View is one consistent read of a session: the session, its newest turns and its latest
// checkpoint, all from one snapshot, so they agree with each other.
type View struct {
	Session Session
	// Tail is the window of the session's newest turns asked for, ascending Seq.
	Tail []Turn
	// Checkpoint is the session's latest checkpoint; nil when it has none or none was asked for.
	Checkpoint *Checkpoint
	// Facts is the session's facts ledger, when asked for.
	Facts []Fact
}

// View reads session (scope, id) with what o asks for, from one snapshot. The cost is one
// session read, one decode per turn of the window (read newest first, stopping as soon as the
// window is full) and one checkpoint decode. It returns an error wrapping ErrNotFound when the
// session is not stored.
func (s *Store) View(ctx context.Context, scope, id string, o ViewOptions) (View, error) {
	if err := checkRef(scope, id); err != nil {
		return View{}, fmt.Errorf("view session: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return View{}, fmt.Errorf("view session %s/%s: %w", scope, id, err)
	}
	defer s.release()
	snap := db.NewSnapshot()
	defer snap.Close()
	r := s.counted(snap)

	v, err := readView(ctx, r, scope, id, o)
	if err != nil {
		return View{}, fmt.Errorf("view session %s/%s: %w", scope, id, err)
	}
	return v, nil
}

func readView(ctx context.Context, r pebble.Reader, scope, id string, o ViewOptions) (v View, err error) {
	sess, ok, err := getSession(r, scope, id)
	if err != nil {
		return View{}, err
	}
	if !ok {
		return View{}, ErrNotFound
	}
	v.Session = sess
	if o.Tail.MaxTurns > 0 && sess.TurnCount > 0 {
		if v.Tail, err = readTail(ctx, r, scope, id, o.Tail); err != nil {
			return View{}, err
		}
	}
	if o.Facts {
		if v.Facts, err = getFacts(r, scope, id); err != nil {
			return View{}, err
		}
	}
	if o.Checkpoint {
		err = scanCheckpoints(ctx, r, scope, id, func(c Checkpoint) bool {
			v.Checkpoint = &c
			return false
		})
		if err != nil {
			return View{}, err
		}
	}
	return v, nil
}

// readTail reads the turns window w takes, newest first, and returns them ascending: the
// short window, then, when its text falls short, on up to MaxTurns.
func readTail(ctx context.Context, r pebble.Reader, scope, id string, w TailWindow) ([]Turn, error) {
	out := make([]Turn, 0, min(max(w.MinTurns, 0), 1024))
	short := w.short(w.MinTurns)
	size, widen := 0, false
	err := scanTurns(ctx, r, scope, id, (*pebble.Iterator).Last, (*pebble.Iterator).Prev, func(got []Turn) bool {
		n := len(got)
		if n > 0 && n <= short {
			size += len(got[n-1].Text) + len(got[n-1].Tool)
		}
		if n < short {
			return true
		}
		if n == short {
			widen = size < w.TextBytes
		}
		return widen && n < w.MaxTurns
	}, &out)
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}
