package main

import (
	"strings"
	"testing"
)

// TestMatchShort: a session's short id names it even though it starts its sub-agents' ids; a
// sub-agent's short id names the sub-agent; a bare start of an id needs minPrefix characters;
// two ids that shorten alike are an error naming both.
func TestMatchShort(t *testing.T) {
	ids := []string{
		"49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7",
		"49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7:a1ba2876fa63b44e9",
		"49bc4f7b-89e8-4c4e-a7e6-0a6b981a5be7:a73685d8901dc53f2",
		"5ab0c1d2-0000-4000-8000-000000000000",
		"5ab0c1d2-1111-4000-8000-000000000000",
	}
	list := func(prefix string) ([]string, error) {
		var out []string
		for _, id := range ids {
			if strings.HasPrefix(id, prefix) {
				out = append(out, id)
			}
		}
		return out, nil
	}
	for short, want := range map[string]string{
		"49bc4f7b":                  ids[0],
		"49bc4f7b:a1ba2876":         ids[1],
		"49bc4f7b-89e8-4c4e-a7e6-0": ids[0] + " ambiguous", // starts all three, shortens none
		"5ab0c1d2-1111":             ids[4],
		"5ab0c1d2":                  "ambiguous",
		"49b":                       "not found", // too short to be taken for a start
	} {
		got, err := matchShort(short, "session", list)
		switch {
		case strings.HasSuffix(want, "ambiguous"):
			if err == nil || !strings.Contains(err.Error(), "names") {
				t.Errorf("%s: got %q, %v; want an ambiguity error", short, got, err)
			}
		case want == "not found":
			if _, ok := err.(*notFoundError); !ok {
				t.Errorf("%s: got %q, %v; want not found", short, got, err)
			}
		case err != nil || got != want:
			t.Errorf("%s: got %q, %v; want %s", short, got, err, want)
		}
	}
}
