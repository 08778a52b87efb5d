package openclaw_test

import (
	"testing"

	"github.com/heirloom-dev/heirloom/adapters/openclaw"
)

func TestAdapter_Keys(t *testing.T) {
	for _, tt := range []struct {
		key      string
		scope    string
		subagent bool
	}{
		{"agent:main:main", "main", false},
		{"agent:Research:subagent:030f5da4-ab00-499e-b6af-e63e2b24b61c", "research", true},
		{"agent:ops:discord:channel:c1:thread:9", "ops", false},
		{"main", "main", false}, // legacy: filed under the default agent
		{"agent::broken", "", false},
		{"", "", false},
	} {
		a := openclaw.Adapter{}
		if got := a.ScopeOf(tt.key); got != tt.scope {
			t.Errorf("ScopeOf(%q): got %q, want %q", tt.key, got, tt.scope)
		}
		if got := a.IsSubagent(tt.key); got != tt.subagent {
			t.Errorf("IsSubagent(%q): got %v, want %v", tt.key, got, tt.subagent)
		}
	}
	if got := (openclaw.Adapter{}).Harness(); got != "openclaw" {
		t.Errorf("Harness: got %q", got)
	}
}
