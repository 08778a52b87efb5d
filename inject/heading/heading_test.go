package heading_test

import (
	"slices"
	"testing"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/inject/heading"
)

// TestHeadings: inject's exported headings are these, and Priority lists them highest first,
// in a slice of the caller's own.
func TestHeadings(t *testing.T) {
	want := []string{inject.ObjectiveHeading, inject.InheritedHeading, inject.RecoveredHeading}
	got := heading.Priority()
	if !slices.Equal(got, want) {
		t.Fatalf("Priority() = %q, want %q", got, want)
	}
	got[0] = "changed"
	if heading.Priority()[0] != heading.Objective {
		t.Fatal("changing Priority's result changed the next call's")
	}
}
