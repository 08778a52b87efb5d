package inject_test

import (
	"testing"

	"github.com/heirloom-dev/heirloom/inject"
)

func TestJoin(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		blocks []string
		want   string
	}{
		{"None", 100, nil, ""},
		{"ZeroMax", 0, []string{"a"}, ""},
		{"SkipsEmpty", 100, []string{"a", "", " \n", "b"}, "a\n\nb"},
		{"FitsExactly", 4, []string{"a", "b"}, "a\n\nb"},
		{"CutsLast", 20, []string{"first block", "second block here"}, "first block\n\nsec […]"},
		{"DropsLastWithoutRoom", 15, []string{"first block", "second"}, "first block"},
		{"DropsThenCuts", 8, []string{"first block", "second"}, "firs […]"},
		{"EmojiCounted", 6, []string{"😀", "😀"}, "😀\n\n😀"},
		{"EmojiOver", 5, []string{"😀", "😀"}, "😀"},
		{"MiddleKept", 31, []string{"one", "two", "three three three three"}, "one\n\ntwo\n\nthree three three […]"},
		{"RuneCutInLast", 30, []string{"one", "two", "three three three three"}, "one\n\ntwo\n\nthree three thre […]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := inject.Join(tt.max, tt.blocks...)
			if got != tt.want {
				t.Errorf("Join(%d, %q) = %q, want %q", tt.max, tt.blocks, got, tt.want)
			}
			if n := inject.Len(got); n > max(tt.max, 0) {
				t.Errorf("Len = %d, want <= %d", n, tt.max)
			}
		})
	}
}
