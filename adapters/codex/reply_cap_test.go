package codex_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/codex"
)

// TestFitContext: a context within Codex's 10,000 bytes passes as it is; a longer one (a block
// of mostly 3-byte characters within heirloom's 9,500 UTF-16 units) is cut at a line end under
// the cap, stays valid UTF-8, keeps its first sections and says it was cut.
func TestFitContext(t *testing.T) {
	exact := strings.Repeat("a", codex.ContextCapBytes)
	if got := codex.FitContext(exact); got != exact {
		t.Errorf("a context of exactly %d bytes was changed", codex.ContextCapBytes)
	}
	var b strings.Builder
	b.WriteString("## Inherited from Parent Session\nObjective: 界面\n")
	for b.Len() < 3*codex.ContextCapBytes {
		b.WriteString("### 段落\n" + strings.Repeat("界", 40) + "\n")
	}
	in := b.String()
	if n := utf8.RuneCountInString(in); n > 3*adapters.DefaultMaxContextChars {
		t.Fatalf("test input: %d runes", n)
	}
	got := codex.FitContext(in)
	switch {
	case len(got) > codex.ContextCapBytes:
		t.Errorf("cut context is %d bytes, over %d", len(got), codex.ContextCapBytes)
	case !utf8.ValidString(got):
		t.Errorf("cut context is not valid UTF-8")
	case !strings.HasPrefix(got, "## Inherited from Parent Session\nObjective: 界面\n"):
		t.Errorf("cut context lost its head: %.80q", got)
	case !strings.HasSuffix(got, "\n[heirloom: cut to Codex's 10,000-byte context limit]"):
		t.Errorf("cut context does not say it was cut: …%q", got[len(got)-80:])
	case !strings.HasPrefix(in, strings.TrimSuffix(got, "\n[heirloom: cut to Codex's 10,000-byte context limit]")+"\n"):
		t.Errorf("the cut is not at a line end")
	}
	// One long line: cut at a rune boundary.
	line := strings.Repeat("界", codex.ContextCapBytes)
	if got := codex.FitContext(line); len(got) > codex.ContextCapBytes || !utf8.ValidString(got) {
		t.Errorf("one long line: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	reply := codex.Adapter{}.Reply(adapters.Event{Name: codex.EventSubagentStart}, adapters.Answer{Context: in})
	if !strings.Contains(string(reply), "cut to Codex") {
		t.Errorf("Reply did not fit its context: %d bytes", len(reply))
	}
}
