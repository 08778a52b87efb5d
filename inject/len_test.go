package inject_test

import (
	"testing"

	"github.com/heirloom-dev/heirloom/inject"
)

func TestLen(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want int
	}{
		{"Empty", "", 0},
		{"ASCII", "abc", 3},
		{"Latin1", "é", 1},
		{"CJK", "日本", 2},
		{"Ellipsis", "…", 1},
		{"Emoji", "😀", 2},
		{"Mixed", "a😀b", 4},
		{"EmojiModifier", "👍🏽", 4},
		{"LineSeparator", "\u2028", 1},
		{"NUL", "\x00", 1},
		{"InvalidByte", "\xff", 1},
		{"TruncatedSequence", "\xe2\x82", 2},
		{"EncodedSurrogate", "\xed\xa0\x80", 3},
		{"Markers", " […]", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := inject.Len(tt.s); got != tt.want {
				t.Errorf("Len(%q) = %d, want %d", tt.s, got, tt.want)
			}
		})
	}
}
