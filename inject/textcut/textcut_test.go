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
		{"FitsInvalidUnchanged", "a\xffb", 3, "a\xffb"},
		{"Empty", "", 0, ""},
		{"NegativeMax", "abc", -1, ""},
		{"MaxIsMarker", "abcdef", 4, ""},
		{"RuneCutWhenNoSpaceNearEnd", "abcdefghij klmnop", 10, "abcdef […]"},
		{"SpaceRightAfterBudget", "abcdef ghij", 10, "abcdef […]"},
		{"TrailingSpacesTrimmed", "abc   defghijklmnop", 10, "abc […]"},
		{"OnlySpacesKept", "      abcdefgh", 8, ""},
		{"NewlineIsWhitespace", "line one\nline two is long", 14, "line one […]"},
		{"EmojiFits", "ab😀cd", 6, "ab😀cd"},
		{"EmojiNotSplit", "a😀cdefgh", 6, "a […]"},
		{"EmojiKeptWhole", "ab😀cdefgh", 8, "ab😀 […]"},
		{"CJK", "日本語のテキスト", 7, "日本語 […]"},
		{"InvalidByteReplaced", "ab\xffcdefgh", 7, "ab\uFFFD […]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Head(tt.s, tt.max)
			if got != tt.want {
				t.Errorf("Head(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
			}
			if n := Len(got); n > max(tt.max, 0) {
				t.Errorf("Len(Head(%q, %d)) = %d, want <= %d", tt.s, tt.max, n, tt.max)
			}
		})
	}
}

// TestTail pins Tail's cuts, the mirror of Head's, which the digest's last line relies on.
func TestTail(t *testing.T) {
	tests := []struct {
		name string
		s    string
		max  int
		want string
	}{
		{"Fits", "abc", 3, "abc"},
		{"Empty", "", 0, ""},
		{"NegativeMax", "abc", -1, ""},
		{"MaxIsMarker", "abcdef", 4, ""},
		{"WordBoundary", "hello wonderful world", 20, "[…] wonderful world"},
		{"RuneCutWhenNoSpaceNearStart", "abcdef ghijklmnop", 10, "[…] klmnop"},
		{"LeadingSpacesTrimmed", "abcdefghij    xyz", 10, "[…] xyz"},
		{"EmojiAtCut", "abcd😀ef", 6, "[…] ef"},
		{"EmojiNotSplit", "abcde😀f", 6, "[…] f"},
		{"EmojiKeptWhole", "abcdefg😀h", 7, "[…] 😀h"},
		{"CJK", "日本語のテキスト", 7, "[…] キスト"},
		{"InvalidByteReplaced", "abcdefg\xffh", 6, "[…] \uFFFDh"},
		{"OnlySpacesKept", "abcdefgh      ", 8, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Tail(tt.s, tt.max)
			if got != tt.want {
				t.Errorf("Tail(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
			}
			if n := Len(got); n > max(tt.max, 0) {
				t.Errorf("Len(Tail(%q, %d)) = %d, want <= %d", tt.s, tt.max, n, tt.max)
			}
		})
	}
}

// FuzzLen checks Len against unicode/utf16, and Head's bounds, on any input.
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
