package inject_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/inject"
)

func TestInferConstraints(t *testing.T) {
	tests := []struct {
		name    string
		prompts []string
		want    []string
	}{
		{"None", nil, nil},
		{"NoConstraint", []string{"Fix the bug in parser.go. Then run the tests."}, nil},
		{"Must", []string{"Fix it. You must add a test."}, []string{"You must add a test."}},
		{"MustNot", []string{"You MUST NOT touch go.mod"}, []string{"You MUST NOT touch go.mod"}},
		{"Never", []string{"Never use panic!"}, []string{"Never use panic!"}},
		{"DoNot", []string{"Do not  rename\tfiles."}, []string{"Do not rename files."}},
		{"Dont", []string{"don't log tokens", "Don’t push."}, []string{"don't log tokens", "Don’t push."}},
		{"Always", []string{"Always run gofmt."}, []string{"Always run gofmt."}},
		{"Avoid", []string{"Avoid new dependencies."}, []string{"Avoid new dependencies."}},
		{"OnlyUse", []string{"Only use the standard library."}, []string{"Only use the standard library."}},
		{"KeepStable", []string{"Keep the public API stable."}, []string{"Keep the public API stable."}},
		{"KeepUnchanged", []string{"keep the wire format unchanged"}, []string{"keep the wire format unchanged"}},
		{"Lines", []string{"Tasks:\n- never skip tests\n* always vet\n1. avoid globals"},
			[]string{"never skip tests", "always vet", "avoid globals"}},
		{"NotWholeWords", []string{"Pass the mustard. Nevertheless go. Avoidance is fine. Keep going. Stable build."}, nil},
		{"Question", []string{"Should we never retry? Must we?"}, nil},
		{"Dedupe", []string{"Never use panic.", "NEVER use panic", "never use panic!"}, []string{"Never use panic."}},
		{"Redacted", []string{"Never commit DB_PASSWORD=hunter2 again."}, []string{"Never commit DB_PASSWORD=[REDACTED] again."}},
		{"PEMNotLeaked", []string{fakePEM + "\nNever share it."}, []string{"Never share it."}},
		{"DotsInNames", []string{"Never edit go.mod or main.go by hand."}, []string{"Never edit go.mod or main.go by hand."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := inject.InferConstraints(tt.prompts)
			if !slices.Equal(got, tt.want) {
				t.Errorf("InferConstraints(%q)\n got %q\nwant %q", tt.prompts, got, tt.want)
			}
		})
	}
}

func TestInferConstraints_Long(t *testing.T) {
	long := "Never " + strings.Repeat("really ", 100) + "do that."
	got := inject.InferConstraints([]string{long})
	if len(got) != 1 {
		t.Fatalf("got %d constraints, want 1", len(got))
	}
	if n := inject.Len(got[0]); n > 300 {
		t.Errorf("Len(constraint) = %d, want <= 300", n)
	}
	if !strings.HasSuffix(got[0], " […]") {
		t.Errorf("constraint %q: want the cut marker", got[0])
	}
}

// TestInferConstraints_RecentWin checks the cap: the newest prompts' constraints are chosen, a
// restated old constraint counts as recent, and the result keeps first-appearance order.
func TestInferConstraints_RecentWin(t *testing.T) {
	var old []string
	for i := range 10 {
		old = append(old, fmt.Sprintf("Never do old thing %d.", i))
	}
	var recent []string
	for i := range 5 {
		recent = append(recent, fmt.Sprintf("Always do new thing %d.", i))
	}
	recent = append(recent, "never do old thing 9")
	prompts := []string{strings.Join(old, " "), "Just a note.", strings.Join(recent, " ")}

	got := inject.InferConstraints(prompts)
	// Newest prompt: 5 new + old 9 (restated) = 6; then the oldest prompt in reading order: 0..5.
	want := []string{
		"Never do old thing 0.", "Never do old thing 1.", "Never do old thing 2.",
		"Never do old thing 3.", "Never do old thing 4.", "Never do old thing 5.",
		"Never do old thing 9.",
		"Always do new thing 0.", "Always do new thing 1.", "Always do new thing 2.",
		"Always do new thing 3.", "Always do new thing 4.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("InferConstraints\n got %q\nwant %q", got, want)
	}
	if len(got) != inject.MaxConstraints {
		t.Errorf("got %d constraints, want %d", len(got), inject.MaxConstraints)
	}
}
