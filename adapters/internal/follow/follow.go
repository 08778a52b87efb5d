// Package follow is what the two stream clients (adapters/opencode's SSE client and
// adapters/openclaw's Gateway client) share around their own protocols: the New → Open → Close
// lifecycle of a background connection loop (Loop; a client's Open and Close are Loop.Start and
// Loop.Stop, which check the fields every client has, Settings, and log), the jittered
// exponential backoff between its attempts (Backoff, Sleep), the counters every adapters.Stream
// reports (Counters), the way both hand events to their Sink and skip bad input
// (Counters.Deliver, Counters.Skip), and the checks and defaults of the fields they share
// (CheckURL, NewBackoff, OrDefault, OrDiscard).
package follow

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"net/url"
	"sync"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
)

// Errors of Loop.Open: ErrOpen when the loop already runs, ErrClosed after Close.
var (
	ErrOpen   = errors.New("already open")
	ErrClosed = errors.New("closed")
)

// Loop runs a client's background loop under a context the Loop owns. The zero Loop is ready to
// Open. Open starts the loop once; Close stops it, waits for it, and makes every later Open fail,
// so a client built on a Loop is not reusable. A stream client's own Open and Close are Start
// and Stop, which add the wrapping and logging both clients do.
type Loop struct {
	mu     sync.Mutex
	state  state
	cancel context.CancelFunc
	wg     sync.WaitGroup
	log    adapters.Logger // Start's, for Stop; set under mu; nil after a plain Open
}

type state int

const (
	stateIdle state = iota
	stateOpen
	stateClosed
)

// Open calls setup and, when it succeeds, starts run in a goroutine with a context derived from
// ctx that Close cancels. setup runs with the Loop locked, so a concurrent Open or Close waits
// for it. Open fails with ErrOpen when the loop runs, ErrClosed after Close, and with setup's
// error as it is (the Loop stays idle then).
func (l *Loop) Open(ctx context.Context, setup func() error, run func(ctx context.Context)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.state {
	case stateOpen:
		return ErrOpen
	case stateClosed:
		return ErrClosed
	}
	if err := setup(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	l.cancel = cancel
	l.state = stateOpen
	l.wg.Go(func() { run(ctx) })
	return nil
}

// Close cancels the loop's context and waits for run to return. It reports whether this call
// closed a running loop: true for one Close after a successful Open, so the caller releases and
// logs once. It is safe to call more than once, concurrently, and without Open; every call
// returns only once run has.
func (l *Loop) Close() (wasOpen bool) {
	l.mu.Lock()
	wasOpen = l.state == stateOpen
	l.state = stateClosed
	cancel := l.cancel
	l.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	l.wg.Wait()
	return wasOpen
}

// DefaultBackoffMin and DefaultBackoffMax are the wait between a client's connection attempts
// when its BackoffMin and BackoffMax are zero.
const (
	DefaultBackoffMin = 250 * time.Millisecond
	DefaultBackoffMax = 30 * time.Second
)

// RepairEvery bounds how often a client resyncs because its Sink takes events again after
// refusing some (a full disk, say): what it refused is read back from the harness without
// waiting for a reconnect.
const RepairEvery = time.Minute

// Settings are the fields every stream client has, as its Open hands them to Start.
type Settings struct {
	// Client names the kind of client in Start's errors, before its URL: "opencode client".
	Client string
	// URL is the harness's address: Scheme or its secure variant, a host, no query (CheckURL).
	URL, Scheme string
	// Sink receives the client's events. Required.
	Sink adapters.Sink
	// Logger is the client's; nil: silent.
	Logger adapters.Logger
	// BackoffMin and BackoffMax bound the wait between connection attempts (see Backoff); zero
	// means DefaultBackoffMin, DefaultBackoffMax; negative, or Min above Max, is refused.
	BackoffMin, BackoffMax time.Duration
	// Following says what the client follows, logged at Info once it runs: "following /event".
	Following string
}

// Opened is what Start derived from a client's Settings, for its setup.
type Opened struct {
	Log     adapters.Logger // Settings.Logger, or one that drops every line
	Backoff Backoff         // Min and Max only; the loop copies it
}

// Start is a stream client's Open: it checks s, derives Opened from it and calls setup with it
// (which checks and derives the client's own fields), then starts run, all as Open does; an
// error reads `open CLIENT "URL": …`. Once the loop runs it logs s.Following at Info; Stop logs
// on the same logger.
func (l *Loop) Start(ctx context.Context, s Settings, setup func(Opened) error, run func(ctx context.Context)) error {
	var log adapters.Logger
	err := l.Open(ctx, func() error {
		if err := CheckURL(s.URL, s.Scheme); err != nil {
			return err
		}
		if s.Sink == nil {
			return errors.New("no Sink")
		}
		if s.BackoffMin < 0 || s.BackoffMax < 0 {
			return errors.New("negative BackoffMin or BackoffMax")
		}
		b, err := NewBackoff(s.BackoffMin, s.BackoffMax, DefaultBackoffMin, DefaultBackoffMax)
		if err != nil {
			return err
		}
		o := Opened{Log: OrDiscard(s.Logger), Backoff: b}
		if err := setup(o); err != nil {
			return err
		}
		l.log, log = o.Log, o.Log
		return nil
	}, run)
	if err != nil {
		return fmt.Errorf("open %s %q: %w", s.Client, s.URL, err)
	}
	log.Info(s.Following)
	return nil
}

// Stop is a stream client's Close: Close, and when this call closed the running loop, release
// (nil: nothing to release) and "closed" logged at Info on Start's logger. Safe to call more than
// once, concurrently, and without Start; every call returns only once the loop has.
func (l *Loop) Stop(release func()) {
	if !l.Close() {
		return
	}
	if release != nil {
		release()
	}
	l.mu.Lock()
	log := OrDiscard(l.log)
	l.mu.Unlock()
	log.Info("closed")
}

// Backoff is the wait between a client's connection attempts: it starts at Min, doubles after
// each attempt up to Max, and is jittered into [d/2, d]. The zero delay is Min. A Backoff belongs
// to the one goroutine that makes the attempts.
type Backoff struct {
	Min, Max time.Duration
	delay    time.Duration
}

// NewBackoff returns the Backoff of a client's BackoffMin and BackoffMax fields, zero meaning
// defMin and defMax. It fails when min ends up above max; negative values are the caller's to
// refuse.
func NewBackoff(min, max, defMin, defMax time.Duration) (Backoff, error) {
	b := Backoff{Min: OrDefault(min, defMin), Max: OrDefault(max, defMax)}
	if b.Min > b.Max {
		return Backoff{}, fmt.Errorf("BackoffMin %v above BackoffMax %v", b.Min, b.Max)
	}
	return b, nil
}

// Next returns the wait before the next attempt, jittered from the current delay, and doubles
// the delay, up to Max.
func (b *Backoff) Next() time.Duration {
	if b.delay == 0 {
		b.delay = b.Min
	}
	wait := Jitter(b.delay)
	b.delay = min(2*b.delay, b.Max)
	return wait
}

// Reset starts the delay again from Min: after an attempt that went well.
func (b *Backoff) Reset() { b.delay = b.Min }

// Hold sets the delay to Max and returns a wait jittered from it: after an attempt the other side
// refused, which retrying soon will not fix.
func (b *Backoff) Hold() time.Duration {
	b.delay = b.Max
	return Jitter(b.Max)
}

// CheckURL checks a client's URL field: it must parse, have the scheme or its secure variant
// (scheme+"s"), a host, and no query or fragment.
func CheckURL(raw, scheme string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bad URL: %w", err)
	}
	if (u.Scheme != scheme && u.Scheme != scheme+"s") || u.Host == "" {
		return fmt.Errorf("URL must be %s(s)://host[:port]", scheme)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("URL must not have a query or fragment")
	}
	return nil
}

// Jitter returns a duration drawn uniformly from [d/2, d].
func Jitter(d time.Duration) time.Duration {
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(d-half+1)
}

// Sleep waits d, or until ctx ends; it reports whether the whole wait passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// IsPow2 reports whether n is 1, 2, 4, 8, …: a repeated error is logged at those counts only.
func IsPow2(n int64) bool { return n > 0 && bits.OnesCount64(uint64(n)) == 1 }

// OrDefault returns v, or def when v is zero: for the fields whose zero value means "the
// default".
func OrDefault[T time.Duration | int | int64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// OrDiscard returns l, or a Logger that drops every line when l is nil.
func OrDiscard(l adapters.Logger) adapters.Logger {
	if l == nil {
		return discard{}
	}
	return l
}

type discard struct{}

func (discard) Debug(string, ...any) {}
func (discard) Info(string, ...any)  {}
func (discard) Warn(string, ...any)  {}
func (discard) Error(string, ...any) {}
