// Package streamtest holds what the tests of the stream clients (adapters/opencode,
// adapters/openclaw) share: a Sink and a Logger that record what a client hands on and logs, and
// a goroutine-leak check. Only tests import it.
package streamtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/internal/leaktest"
)

// Logger is an adapters.Logger that keeps every line, rendered as "LEVEL msg key=value …" with
// values as %v prints them, and passes each on to TB.Logf when TB is set. The zero Logger is
// ready; it is safe for concurrent use.
type Logger struct {
	TB testing.TB

	mu    sync.Mutex
	lines []string
}

// Debug records a line at DEBUG.
func (l *Logger) Debug(msg string, args ...any) { l.log("DEBUG", msg, args) }

// Info records a line at INFO.
func (l *Logger) Info(msg string, args ...any) { l.log("INFO", msg, args) }

// Warn records a line at WARN.
func (l *Logger) Warn(msg string, args ...any) { l.log("WARN", msg, args) }

// Error records a line at ERROR.
func (l *Logger) Error(msg string, args ...any) { l.log("ERROR", msg, args) }

func (l *Logger) log(level, msg string, args []any) {
	var b strings.Builder
	b.WriteString(level + " " + msg)
	for i := 0; i < len(args); i += 2 {
		if i+1 < len(args) {
			fmt.Fprintf(&b, " %v=%v", args[i], args[i+1])
		} else {
			fmt.Fprintf(&b, " EXTRA=%v", args[i])
		}
	}
	line := b.String()
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	if l.TB != nil {
		l.TB.Logf("%s", line)
	}
}

// Lines returns the lines logged so far.
func (l *Logger) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// Count returns how many lines contain part.
func (l *Logger) Count(part string) int {
	n := 0
	for _, line := range l.Lines() {
		if strings.Contains(line, part) {
			n++
		}
	}
	return n
}

// Contains reports whether a line contains part.
func (l *Logger) Contains(part string) bool { return l.Count(part) > 0 }

// CheckGoroutines fails the test if, once every other cleanup has run, more goroutines are left
// than when it was called. Call it first in a test, so its cleanup runs last. It is
// leaktest.Check, which the live feed's tests outside adapters use too.
func CheckGoroutines(t testing.TB) {
	t.Helper()
	leaktest.Check(t)
}

// RefusingSink is a Sink that refuses every event while Refuse is set (a store whose disk is
// full), counting them in Refused, and keeps the rest.
type RefusingSink struct {
	Sink
	Refuse  atomic.Bool
	Refused atomic.Int64
}

// Consume refuses ev while Refuse is set, else keeps it.
func (s *RefusingSink) Consume(ctx context.Context, ev adapters.Event) error {
	if s.Refuse.Load() {
		s.Refused.Add(1)
		return errors.New("disk full")
	}
	return s.Sink.Consume(ctx, ev)
}

// Sink is an adapters.Sink that keeps every event it is given and refuses none. The zero Sink is
// ready; it is safe for concurrent use.
type Sink struct {
	mu     sync.Mutex
	events []adapters.Event
}

// Consume keeps ev.
func (s *Sink) Consume(_ context.Context, ev adapters.Event) error {
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
	return nil
}

// All returns the events kept so far, in order.
func (s *Sink) All() []adapters.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]adapters.Event(nil), s.events...)
}

// Index returns the position of the first event that matches, or -1.
func (s *Sink) Index(match func(adapters.Event) bool) int {
	for i, ev := range s.All() {
		if match(ev) {
			return i
		}
	}
	return -1
}

// Count returns how many events match.
func (s *Sink) Count(match func(adapters.Event) bool) int {
	n := 0
	for _, ev := range s.All() {
		if match(ev) {
			n++
		}
	}
	return n
}
