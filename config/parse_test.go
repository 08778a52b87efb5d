package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/config"
)

func TestParse(t *testing.T) {
	got, err := config.Parse([]byte("listen: 127.0.0.1:1\nlog:\n  level: debug\ntoken:\nserver: {}\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"listen": "127.0.0.1:1", "log.level": "debug"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestParse_Empty(t *testing.T) {
	for _, doc := range []string{"", "\n", "# only a comment\n", "---\n", "~\n"} {
		got, err := config.Parse([]byte(doc), "c.yaml")
		if err != nil {
			t.Errorf("Parse(%q): got %v, want nil", doc, err)
		}
		if len(got) != 0 {
			t.Errorf("Parse(%q): got %v, want no values", doc, got)
		}
	}
}

func TestParse_ErrYAMLLine(t *testing.T) {
	_, err := config.Parse([]byte("listen: a\nlog:\n\tlevel: debug\n"), "/x/config.yaml")
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a *config.Error", err)
	}
	if ce.Source != "file /x/config.yaml" || ce.Err == nil {
		t.Errorf("got %#v, want source file /x/config.yaml and a YAML cause", ce)
	}
	if !strings.Contains(err.Error(), "line 3") {
		t.Errorf("got %q, want the line number 3", err)
	}
}

// FuzzParse checks the YAML parse path never panics, and that whatever it
// accepts holds only configuration keys.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(config.Example()))
	f.Add([]byte("log: [a, {b: c}]\nserver:\n  hook_timeout: 1e400\n"))
	f.Add([]byte("a: &x {b: *x}\n"))
	f.Add([]byte("inherit:\n  tail_chars: 18446744073709551615\n"))
	f.Add([]byte("listen: 2001-12-14t21:59:43.10-05:00\n? [a]\n: b\n"))
	known := make(map[string]bool)
	for _, line := range strings.Split(mustShow(f), "\n") {
		if key, _, ok := strings.Cut(line, ":"); ok {
			known[key] = true
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		values, err := config.Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		for key := range values {
			if !known[key] {
				t.Errorf("got key %q, want only configuration keys", key)
			}
		}
	})
}

// mustShow returns the `config show` output of the defaults.
func mustShow(tb testing.TB) string {
	tb.Helper()
	var b strings.Builder
	if _, err := mustLoad(tb, config.Input{Home: home}).WriteTo(&b); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

func TestParse_Errors(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		key       string
		value     any
	}{
		{"UnknownNull", "nope:\n", "nope", nil},
		{"UnknownSectionNull", "log:\n  nope:\n", "log.nope", nil},
		{"DeepUnderLeaf", "log:\n  level:\n    a:\n      b:\n        c: 1\n", "log.level", map[string]any{}},
		{"DeepUnderUnknown", "adapters:\n  claude_code:\n    nope:\n      a:\n        b: 1\n", "adapters.claude_code.nope", nil},
		{"DeepEmptyUnderLeaf", "adapters:\n  claude_code:\n    max_read_bytes: {}\n", "adapters.claude_code.max_read_bytes", map[string]any{}},
		{"NonStringKeys", "log:\n  1: a\n", "log.1", nil},
		{"ListOfMappings", "adapters:\n  claude_code:\n    transcript_roots: [{a: 1}]\n", "adapters.claude_code.transcript_roots", []any{map[string]any{"a": 1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tt.doc), "c.yaml")
			errs := configErrors(err)
			if len(errs) != 1 {
				t.Fatalf("got %d errors (%v), want 1", len(errs), err)
			}
			if errs[0].Key != tt.key {
				t.Errorf("got key %q, want %q", errs[0].Key, tt.key)
			}
			if !reflect.DeepEqual(errs[0].Value, tt.value) {
				t.Errorf("got value %#v, want %#v", errs[0].Value, tt.value)
			}
		})
	}
}

func TestParse_DeepNesting(t *testing.T) {
	doc := "x: " + strings.Repeat("{a: ", 5000) + "1" + strings.Repeat("}", 5000) + "\n"
	start := time.Now()
	_, err := config.Parse([]byte(doc), "c.yaml")
	if got := configErrors(err); len(got) != 1 || got[0].Key != "x" {
		t.Errorf("got %v, want one unknown key x", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("got %v to parse 5000 levels, want well under 2s", d)
	}
}
