package main

import (
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/proxy"
)

func TestShortID(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7", "49bc4f7b"},
		{"49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7:a02df2ef9ee472336", "49bc4f7b:a02df2ef"},
		{"toolu_01ABCDEFGHIJKLMNOPQRSTUV", "toolu_01ABCDEF"},
		{"ses_4f2a9c8e7d6b5a4f3e2d1c0b", "ses_4f2a9c8e"},
		{"sess-001", "sess-001"},         // short ids stay whole
		{"abcdefghijkl", "abcdefghijkl"}, // 12 is not cut
		{"a_very_long_name_with_underscores", "a_very_long_name_with_underscores"[:8]},
		{"", ""},
	} {
		if got := shortID(tt.in); got != tt.want {
			t.Errorf("shortID(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := leafID("49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7:a02df2ef9ee472336"); got != "a02df2ef" {
		t.Errorf("leafID: got %q, want a02df2ef", got)
	}
	if got := leafID("trailing:"); got != "trailing:" {
		t.Errorf("leafID of a trailing colon: got %q", got)
	}
}

func TestAgo(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Minute, "just now"}, // clock skew
		{2 * time.Second, "just now"},
		{45 * time.Second, "45s ago"},
		{3*time.Minute + 59*time.Second, "3m ago"},
		{5 * time.Hour, "5h ago"},
		{47 * time.Hour, "47h ago"},
		{72 * time.Hour, "3d ago"},
	} {
		if got := ago(now.Add(-tt.d), now); got != tt.want {
			t.Errorf("ago(%s): got %q, want %q", tt.d, got, tt.want)
		}
	}
	if got := ago(time.Time{}, now); got != "-" {
		t.Errorf("ago(zero): got %q, want -", got)
	}
	old := now.AddDate(0, -2, 0)
	if got := ago(old, now); got != old.Local().Format("2006-01-02") {
		t.Errorf("ago(2 months): got %q, want the date", got)
	}
}

func TestOneLine(t *testing.T) {
	for _, tt := range []struct {
		in    string
		width int
		want  string
	}{
		{"build  the\tthing\n\nnow", 60, "build the thing now"},
		{"\x1b[31mred\x1b[0m", 60, "[31mred [0m"},
		{"abcdefghij", 10, "abcdefghij"},
		{"abcdefghijk", 10, "abcdefghi…"},
		{"abcd efghijk", 6, "abcd…"},
		{"ääääääääääää", 5, "ääää…"},
	} {
		if got := oneLine(tt.in, tt.width); got != tt.want {
			t.Errorf("oneLine(%q, %d): got %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}

func TestRunDuration(t *testing.T) {
	start := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		r    proxy.APIRun
		want string
	}{
		{proxy.APIRun{DurationMs: 90_400}, "1m30s"},
		{proxy.APIRun{DurationMs: 400}, "400ms"},
		{proxy.APIRun{StartedAt: start, EndedAt: start.Add(2 * time.Minute)}, "2m0s"},
		{proxy.APIRun{StartedAt: start}, "-"},
		{proxy.APIRun{}, "-"},
	} {
		if got := runDuration(tt.r); got != tt.want {
			t.Errorf("runDuration(%+v): got %q, want %q", tt.r, got, tt.want)
		}
	}
}

// TestTreeRows: sub-agents nest with ├─ └─ │, show their type and run status, and a line ends
// with its last non-empty cell.
func TestTreeRows(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	node := func(id, typ string, run *proxy.APIRun, kids ...proxy.LineageNode) proxy.LineageNode {
		return proxy.LineageNode{Session: proxy.APISession{ID: id, AgentType: typ, Status: "active", UpdatedAt: now}, Run: run, Children: kids}
	}
	var b strings.Builder
	tw := newTable(&b, "ID", "TYPE", "STATUS", "TURNS", "UPDATED", "TITLE")
	treeRows(tw, []proxy.LineageNode{
		node("r:a", "Explore", &proxy.APIRun{Status: "completed", Prompt: "find\tthe bug"},
			node("r:c", "", nil), node("r:d", "Plan", nil)),
		node("r:b", "Plan", nil),
	}, "", now)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `ID       TYPE     STATUS     TURNS  UPDATED   TITLE
├─ a     Explore  completed  0      just now  find the bug
│  ├─ c           active     0      just now
│  └─ d  Plan     active     0      just now
└─ b     Plan     active     0      just now
`
	if got := b.String(); got != want {
		t.Fatalf("tree:\n%s\nwant:\n%s", got, want)
	}
}
