package claudecode

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// TestCutHead pins cutHead's cuts: the same as inject.Head's, which Merge's callers rely on.
func TestCutHead(t *testing.T) {
	tests := []struct {
		name string
		s    string
		max  int
		want string
	}{
		{"Fits", "short text", 10, "short text"},
		{"WordBoundary", "alpha beta gamma delta epsilon", 20, "alpha beta gamma […]"},
		{"NoSpaceInReach", "abcdefghijklmnopqrstuvwxyz", 10, "abcdef […]"},
		{"TrailingSpaceTrimmed", "abc      defghijkl", 10, "abc […]"},
		{"Surrogates", strings.Repeat("😀", 10), 9, "😀😀 […]"},
		{"MarkOnly", "abcdefgh", 4, ""},
		{"Whitespace", "          x", 8, ""},
		{"InvalidUTF8", "ab\xff\xfecdefghijkl", 9, "ab\uFFFD\uFFFDc […]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cutHead(tt.s, tt.max); got != tt.want {
				t.Fatalf("cutHead(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
			}
		})
	}
}

// FuzzContextLen checks contextLen against unicode/utf16, and cutHead's bounds, on any input.
func FuzzContextLen(f *testing.F) {
	f.Add("plain ascii", 5)
	f.Add("é😀 mixed \xff bytes", 7)
	f.Add(strings.Repeat("word ", 50), 60)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if want := len(utf16.Encode([]rune(s))); contextLen(s) != want {
			t.Fatalf("contextLen(%q) = %d, want %d", s, contextLen(s), want)
		}
		max = max % (1 << 12)
		if max < 0 {
			max = -max
		}
		cut := cutHead(s, max)
		if contextLen(s) <= max {
			if cut != s {
				t.Fatalf("cutHead(%q, %d) = %q: a text that fits must come back unchanged", s, max, cut)
			}
			return
		}
		if contextLen(cut) > max || !utf8.ValidString(cut) {
			t.Fatalf("cutHead(%q, %d) = %q: %d units or invalid UTF-8", s, max, cut, contextLen(cut))
		}
		if cut != "" && !strings.HasSuffix(cut, cutMark) {
			t.Fatalf("cutHead(%q, %d) = %q: no cut mark", s, max, cut)
		}
	})
}
