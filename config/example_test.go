package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/config"
)

func TestExample_RoundTrip(t *testing.T) {
	path := writeConfig(t, config.Example())
	l := mustLoad(t, config.Input{Home: home, ConfigPath: path, ConfigRequired: true})
	if want := config.Default(home, ""); !reflect.DeepEqual(l.Config, want) {
		t.Errorf("got %+v, want %+v", l.Config, want)
	}
	for key, origin := range l.Origins {
		want := "file " + path
		switch key {
		case "data_dir", "token", "adapters.openclaw.token", "adapters.claude_code.upstream.token", "condense.token": // commented out in the example
			want = "default"
		}
		if origin != want {
			t.Errorf("origin of %s: got %q, want %q", key, origin, want)
		}
	}
}

// TestExample_Uncommented proves the commented-out keys are valid too.
func TestExample_Uncommented(t *testing.T) {
	var b strings.Builder
	for _, line := range strings.SplitAfter(config.Example(), "\n") {
		for _, key := range []string{"data_dir", "token"} {
			line = strings.Replace(line, "# "+key+":", key+":", 1)
		}
		b.WriteString(line)
	}
	values, err := config.Parse([]byte(b.String()), "example.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got, want := len(values), 42; got != want {
		t.Errorf("got %d keys, want %d", got, want)
	}
	path := writeConfig(t, b.String())
	l := mustLoad(t, config.Input{Home: home, ConfigPath: path})
	if want := config.Default(home, ""); !reflect.DeepEqual(l.Config, want) {
		t.Errorf("got %+v, want %+v", l.Config, want)
	}
}

func TestExample_Documented(t *testing.T) {
	for _, line := range strings.Split(config.Example(), "\n") {
		if line == "#" { // the header's paragraph break
			continue
		}
		if strings.HasSuffix(line, "# ") || strings.HasSuffix(line, "#") {
			t.Errorf("got an empty comment line %q, want every key explained", line)
		}
	}
}

// TestExample_Reference: docs/configuration.md holds Example() as it is: the reference cannot
// drift from the program (regenerate it with `heirloom config example`).
func TestExample_Reference(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "```yaml\n")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal("docs/configuration.md has no ```yaml block")
	}
	if block != config.Example() {
		t.Errorf("docs/configuration.md's reference differs from `heirloom config example`; regenerate it (see the file)")
	}
}
