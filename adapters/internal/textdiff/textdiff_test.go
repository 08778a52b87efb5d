package textdiff_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters/internal/textdiff"
)

func TestUnified(t *testing.T) {
	lines := func(n int, change map[int]string) []byte {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := change[i]; ok {
				b.WriteString(s + "\n")
				continue
			}
			b.WriteString("line " + strconv.Itoa(i) + "\n")
		}
		return []byte(b.String())
	}
	for _, tt := range []struct {
		name     string
		old, new []byte
		want     string
	}{
		{"NewFile", nil, []byte("a\nb\n"), "--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"Identical", []byte("a\nb\n"), []byte("a\nb\n"), "--- f\n+++ f\n"},
		{"OneLineChanged", lines(20, nil), lines(20, map[int]string{10: "changed"}),
			"--- f\n+++ f\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+changed\n line 11\n line 12\n line 13\n"},
		{"TwoHunks", lines(40, nil), lines(40, map[int]string{5: "five", 35: "thirty-five"}),
			"--- f\n+++ f\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n line 8\n" +
				"@@ -32,7 +32,7 @@\n line 32\n line 33\n line 34\n-line 35\n+thirty-five\n line 36\n line 37\n line 38\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			textdiff.Unified(&b, "f", tt.old, tt.new)
			if got := b.String(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
