package kv

import (
	"context"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// TailWindow says which of a session's newest turns a reader wants: at least MinTurns (when the
// session has that many), then more, newest first, until the text of those taken reaches
// TextBytes (Text plus Tool, in bytes), and never more than MaxTurns. The zero value takes
// none. The window is monotone: for a session that grew by some turns, the window of the new
// turns followed by the old window, cut again, is the window a fresh read gives.
type TailWindow struct {
	MinTurns  int
	MaxTurns  int
	TextBytes int
}

// Cut returns the newest turns of turns (ascending Seq) that w takes, ascending.
func (w TailWindow) Cut(turns []Turn) []Turn {
	n := w.take(len(turns), func(i int) *Turn { return &turns[len(turns)-1-i] })
	return turns[len(turns)-n:]
}

// take returns how many turns w takes when newest(i) is the i-th newest of count turns.
func (w TailWindow) take(count int, newest func(i int) *Turn) int {
	n, size := 0, 0
	for n < count && w.more(n, size) {
		t := newest(n)
		size += len(t.Text) + len(t.Tool)
		n++
	}
	return n
}

// more reports whether w takes another turn after n turns of size bytes of text.
func (w TailWindow) more(n, size int) bool {
	return n < w.MaxTurns && (n < w.MinTurns || size < w.TextBytes)
}

// ViewOptions says what Store.View reads besides the session.
type ViewOptions struct {
	Tail       TailWindow // which of the newest turns to read
	Checkpoint bool       // also read the session's latest checkpoint
}

// View is one consistent read of a session: the session, its newest turns and its latest
// checkpoint, all from one snapshot, so they agree with each other.
type View struct {
	Session Session
	// Tail is the window of the session's newest turns asked for, ascending Seq.
	Tail []Turn
	// Checkpoint is the session's latest checkpoint; nil when it has none or none was asked for.
	Checkpoint *Checkpoint
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

// readTail reads the turns window w takes, newest first, and returns them ascending.
func readTail(ctx context.Context, r pebble.Reader, scope, id string, w TailWindow) ([]Turn, error) {
	var out []Turn
	size := 0
	err := scanTurns(ctx, r, scope, id, (*pebble.Iterator).Last, (*pebble.Iterator).Prev, func(got []Turn) bool {
		if n := len(got); n > 0 {
			size += len(got[n-1].Text) + len(got[n-1].Tool)
		}
		return w.more(len(got), size)
	}, &out)
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}
