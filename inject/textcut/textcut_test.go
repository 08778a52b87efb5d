package textcut

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// TestHead pins Head's cuts, which inject's blocks and Claude Code's reply merging rely on.
func TestHead(t *testing.T) {
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
			if got := Head(tt.s, tt.max); got != tt.want {
				t.Fatalf("Head(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
			}
		})
	}
}

// FuzzContextLen checks Len against unicode/utf16, and Head's bounds, on any input.
func FuzzLen(f *testing.F) {
	f.Add("plain ascii", 5)
	f.Add("é😀 mixed \xff bytes", 7)
	f.Add(strings.Repeat("word ", 50), 60)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if want := len(utf16.Encode([]rune(s))); Len(s) != want {
			t.Fatalf("Len(%q) = %d, want %d", s, Len(s), want)
		}
		max = max % (1 << 12)
		if max < 0 {
			max = -max
		}
		cut := Head(s, max)
		if Len(s) <= max {
			if cut != s {
				t.Fatalf("Head(%q, %d) = %q: a text that fits must come back unchanged", s, max, cut)
			}
			return
		}
		if Len(cut) > max || !utf8.ValidString(cut) {
			t.Fatalf("Head(%q, %d) = %q: %d units or invalid UTF-8", s, max, cut, Len(cut))
		}
		if cut != "" && !strings.HasSuffix(cut, HeadMarker) {
			t.Fatalf("Head(%q, %d) = %q: no cut mark", s, max, cut)
		}
	})
}
