package proc

import (
	"strings"
	"sync"
)

// tail keeps the last lines written to it, at most a given number of bytes
// of them (newlines counted). Safe for concurrent use; a nil *tail reads as
// empty.
type tail struct {
	mu    sync.Mutex
	lines []string
	size  int
	max   int
}

// newTail returns an empty tail that keeps at most max bytes. The newest
// line is kept even when it alone is longer.
func newTail(max int) *tail { return &tail{max: max} }

// writeLine appends one line, without its newline, dropping the oldest
// lines past the limit.
func (t *tail) writeLine(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > t.max && len(t.lines) > 1 {
		t.size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
	}
}

// String returns the kept lines, each newline-terminated; "" when there
// are none.
func (t *tail) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	return strings.Join(t.lines, "\n") + "\n"
}
