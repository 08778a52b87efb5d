package inject_test

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/inject"
)

func TestTaskFiles(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"PathsAndNames", "Fix internal/parse.go and main.go, then update README.md.", []string{"internal/parse.go", "main.go", "README.md"}},
		{"Relative", "Run ./scripts/test and read ../shared/DESIGN.md or ~/.zshrc", []string{"./scripts/test", "../shared/DESIGN.md", "~/.zshrc"}},
		{"Absolute", "Logs are in /var/log/app.log; config at /etc/app/", []string{"/var/log/app.log", "/etc/app/"}},
		{"Directories", "Leave vendor/ alone; look in pkg/store/kv", []string{"vendor/", "pkg/store/kv"}},
		{"Punctuation", "See `kv/keys.go:42:7`, (store.go), \"run.sh\", **tx.go**.", []string{"kv/keys.go", "store.go", "run.sh", "tx.go"}},
		{"KnownNames", "Update the Makefile, Dockerfile and go.mod", []string{"Makefile", "Dockerfile", "go.mod"}},
		{"Repeats", "a.go a.go ./a.go", []string{"a.go", "./a.go"}},
		{"NotPaths", "and/or client/server e.g. i.e. v1.2 1.26 2024/11/27 Node.js Next.js http://x.io/a.go / ./ ~/ -flag.go @scope/pkg.json $HOME/x.go", nil},
		{"NoKnownExtension", "the config.yolo and a.b", nil},
		{"Capped", "a.go b.go c.go d.go e.go f.go g.go h.go i.go j.go k.go", []string{"a.go", "b.go", "c.go", "d.go", "e.go", "f.go", "g.go", "h.go", "i.go", "j.go"}},
		{"Empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := inject.TaskFiles(tc.text); !slices.Equal(got, tc.want) {
				t.Errorf("TaskFiles(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func FuzzTaskFiles(f *testing.F) {
	f.Add("Fix internal/parse.go:12 and README.md, not and/or.")
	f.Add("`~/.config/x.toml` (a.go) \"b.py\" Makefile\x00c.rs \xff.go")
	f.Add(strings.Repeat("x.go ", 50))
	f.Fuzz(func(t *testing.T, text string) {
		got := inject.TaskFiles(text)
		if len(got) > 10 {
			t.Fatalf("TaskFiles(%q): %d files, want at most 10", text, len(got))
		}
		seen := map[string]bool{}
		for _, p := range got {
			if p == "" || !utf8.ValidString(p) || strings.IndexFunc(p, unicode.IsSpace) >= 0 || strings.Contains(p, "://") || seen[p] {
				t.Fatalf("TaskFiles(%q) = %q: %q is empty, not UTF-8, spaced, a URL or repeated", text, got, p)
			}
			if !strings.Contains(text, p) {
				t.Fatalf("TaskFiles(%q) = %q: %q is not in the text", text, got, p)
			}
			seen[p] = true
		}
	})
}
