package inject

import (
	"strings"
	"testing"
)

// FuzzCollapse checks collapse against strings.Join(strings.Fields(s), " ") on any input.
func FuzzCollapse(f *testing.F) {
	for _, s := range []string{"", " ", "a", " a ", "a  b", "a\tb\n", "x\u00a0y", "\xff \xfe", "a b c", "  lead", "trail  ", "\u2003em\u2003"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := collapse(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("collapse(%q) = %q, want %q", s, got, want)
		}
	})
}
