package inject_test

import (
	"testing"

	"github.com/heirloom-dev/heirloom/inject"
)

func TestHead(t *testing.T) {
	tests := []struct {
		name string
		s    string
		max  int
		want string
	}{
		{"Fits", "abc", 3, "abc"},
		{"FitsInvalidUnchanged", "a\xffb", 3, "a\xffb"},
		{"Empty", "", 0, ""},
		{"NegativeMax", "abc", -1, ""},
		{"MaxIsMarker", "abcdef", 4, ""},
		{"WordBoundary", "hello wonderful world", 20, "hello wonderful […]"},
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
			got := inject.Head(tt.s, tt.max)
			if got != tt.want {
				t.Errorf("Head(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
			}
			if n := inject.Len(got); n > max(tt.max, 0) {
				t.Errorf("Len(Head(%q, %d)) = %d, want <= %d", tt.s, tt.max, n, tt.max)
			}
		})
	}
}

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
			got := inject.Tail(tt.s, tt.max)
			if got != tt.want {
				t.Errorf("Tail(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
			}
			if n := inject.Len(got); n > max(tt.max, 0) {
				t.Errorf("Len(Tail(%q, %d)) = %d, want <= %d", tt.s, tt.max, n, tt.max)
			}
		})
	}
}
