package kv_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/search"
)

// promptExchange returns the turns one prompt adds to a coding-agent transcript, as a hook
// stores them: the prompt, an assistant turn calling a tool, the tool's result (code and test
// output) and the reply, about 4.1 KB of text. n makes the identifiers, numbers and hashes of
// each exchange its own, so that new terms keep arriving as in a real transcript.
func promptExchange(n int) []kv.Turn {
	id := fmt.Sprintf("%d", n)
	ident := fmt.Sprintf("parseLedgerHeader%d", n%997)
	file := fmt.Sprintf("ledger/segment_%d.go", n%131)
	prompt := fmt.Sprintf("the test for `%s` in %s fails again after the compaction change, can you look? "+
		"It only happens when the segment index is empty and the watermark is %d.", ident, file, n)
	call := fmt.Sprintf("Let me read %s and the tests around `%s` first.", file, ident)
	var result string
	for line := range 40 {
		result += fmt.Sprintf("%6d→\tif err := s.%s(ctx, hdr%d); err != nil {\n", line+1, ident, line)
		if line%5 == 0 {
			result += fmt.Sprintf("%6d→\t\treturn fmt.Errorf(\"read segment %%d: %%w\", seg.ID, err) // %x\n", line+1, n*2654435761+line)
		}
	}
	result += fmt.Sprintf("=== RUN   Test%s\n--- FAIL: Test%s (0.%02ds)\n    header_test.go:%d: got %d, want %d\nFAIL\tgithub.com/acme/ledger\t0.%03ds\n",
		ident, ident, n%100, 40+n%300, n%7, n%5, n%1000)
	reply := fmt.Sprintf("The failure comes from `%s`: when the segment index is empty it returns a nil header "+
		"instead of ErrEmptySegment, and the compactor then writes watermark %d over the previous one. "+
		"I changed %s to return the sentinel error and added a table case for the empty index; "+
		"`go test ./ledger/...` passes now (run %s).", ident, n, file, id)
	return []kv.Turn{
		{SourceID: "u" + id, Role: "user", Text: prompt},
		{SourceID: "a" + id, Role: "assistant", Text: call, Tool: "Read", Files: []string{file}},
		{SourceID: "t" + id, Role: "tool", Text: result, Files: []string{file}},
		{SourceID: "r" + id, Role: "assistant", Text: reply},
	}
}

// BenchmarkIndexIngest stores one prompt's exchange (promptExchange: 4 turns, ~4.1 KB of text)
// per operation with AppendTurns, one synced batch, in a store opened with the search index on
// (search.Analyzer, as `heirloom serve` opens it) or off. The session already holds a small
// transcript (25 exchanges, 100 turns, ~100 KB) or a large one (5,000 exchanges, 20,000 turns,
// ~20 MB); a third case puts the small transcript in a store whose other session holds the
// large one, which tells the transcript's length from the store's size. The filled store is
// compacted before the timer starts, as a store that grew over days has been, so that the fill's
// compaction debt is not billed to the prompts measured; the compactions the measured writes
// cause are. Besides the mean (ns/op) it reports the median and 99th percentile of the single
// operations. The index's work per prompt does not grow with the transcript: the postings are
// blind writes, and its only read is the scope's figures.
func BenchmarkIndexIngest(b *testing.B) {
	cases := []struct {
		name            string
		existing, other int // exchanges already stored in the session, and in another one
	}{
		{"transcript=100", 25, 0},
		{"transcript=20000", 5_000, 0},
		{"transcript=100,store=20100", 25, 5_000},
	}
	for _, c := range cases {
		for _, index := range []bool{false, true} {
			name := c.name + "/index=off"
			if index {
				name = c.name + "/index=on"
			}
			b.Run(name, func(b *testing.B) {
				dir := testDir(b)
				s := openForIngest(b, dir, index)
				fillExchanges(b, s, "y", 1_000_000, c.other)
				fillExchanges(b, s, "x", 0, c.existing)
				s = settle(b, s, dir, index)
				var took []time.Duration
				i, bytes := c.existing, 0
				for b.Loop() {
					turns := promptExchange(i)
					start := time.Now()
					if _, err := s.AppendTurns(b.Context(), "main", "x", turns, kv.TranscriptPos{Offset: int64(i)}); err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(start))
					for _, t := range turns {
						bytes += len(t.Text)
					}
					i++
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
				b.ReportMetric(float64(bytes)/float64(len(took)), "text-B/op")
			})
		}
	}
}

// fillExchanges stores session id (when n > 0) with n exchanges numbered from first, 400 turns
// a batch.
func fillExchanges(b *testing.B, s *kv.Store, id string, first, n int) {
	b.Helper()
	if n == 0 {
		return
	}
	mustSession(b, s, "main", id)
	var fill []kv.Turn
	for i := range n {
		fill = append(fill, promptExchange(first+i)...)
		if len(fill) >= 400 || i == n-1 {
			if _, err := s.AppendTurns(b.Context(), "main", id, fill, kv.TranscriptPos{}); err != nil {
				b.Fatal(err)
			}
			fill = fill[:0]
		}
	}
}

// openForIngest opens a store in dir with the search index on or off; it is closed when the
// benchmark ends.
func openForIngest(b *testing.B, dir string, index bool) *kv.Store {
	b.Helper()
	s := kv.NewStore(dir)
	if index {
		s.Index = search.Analyzer{}
	}
	if err := s.Open(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// settle closes s, flushes and compacts its Pebble database whole, and opens it again.
func settle(b *testing.B, s *kv.Store, dir string, index bool) *kv.Store {
	b.Helper()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{
		FormatMajorVersion: pebble.FormatMajorVersion(kv.PebbleFormatMajorVersion),
		Logger:             benchLogger{b},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := db.Compact(context.Background(), []byte{0}, []byte{0xff}, true); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return openForIngest(b, dir, index)
}

// benchLogger drops Pebble's informational messages (the WALs it replays) and fails the
// benchmark on its errors.
type benchLogger struct{ b *testing.B }

func (benchLogger) Infof(format string, args ...any) {}

func (l benchLogger) Errorf(format string, args ...any) { l.b.Errorf("pebble: "+format, args...) }

func (l benchLogger) Fatalf(format string, args ...any) { l.b.Fatalf("pebble: "+format, args...) }
