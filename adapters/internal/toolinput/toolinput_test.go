package toolinput_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters/internal/toolinput"
)

func TestSummary(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"SortedKeys", `{"b":1,"a":"x"}`, `{"a":"x","b":1}`},
		{"NumbersAsWritten", `{"n":12345678901234567890,"f":1.50}`, `{"f":1.50,"n":12345678901234567890}`},
		{"NoHTMLEscape", `{"q":"a<b>&c"}`, `{"q":"a<b>&c"}`},
		{"Empty", `{}`, ""},
		{"NotObject", `"ls"`, ""},
		{"Array", `[1]`, ""},
		{"Broken", `{"a":`, ""},
		{"Absent", ``, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := toolinput.Summary(json.RawMessage(tt.in)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("Bounded", func(t *testing.T) {
		got := toolinput.Summary(json.RawMessage(`{"command":"` + strings.Repeat("é", toolinput.MaxSummary) + `"}`))
		head, _, cut := strings.Cut(got, "\n…[")
		if !cut || len(head) > toolinput.MaxSummary || !utf8.ValidString(got) {
			t.Errorf("got %d bytes (head %d, cut %v): %.60q…", len(got), len(head), cut, got)
		}
	})
}

func TestFiles(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     []string
	}{
		{"ClaudeRead", `{"file_path":"/src/a.go","limit":10}`, []string{"/src/a.go"}},
		{"ClaudeNotebook", `{"notebook_path":"n.ipynb"}`, []string{"n.ipynb"}},
		{"OpenCodeOrder", `{"file_path":"c","path":"b","filePath":"a"}`, []string{"a", "b", "c"}},
		{"NotebookLast", `{"notebook_path":"d","file_path":"c"}`, []string{"c", "d"}},
		{"Lists", `{"path":"a","paths":["b","a",3,"c"],"file_paths":["d"],"filePaths":"e"}`, []string{"a", "b", "c", "d"}},
		{"Duplicates", `{"file_path":"a","path":"a","notebook_path":"b"}`, []string{"a", "b"}},
		{"NotPaths", `{"file_path":"https://example.com/x","path":"a\nb","filePath":" a","notebook_path":""}`, nil},
		{"WrongTypes", `{"file_path":5,"path":["x"],"paths":"y"}`, nil},
		{"NotObject", `"ls"`, nil},
		{"Broken", `{"path":`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := toolinput.Files(json.RawMessage(tt.in)); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("AtMostMaxFiles", func(t *testing.T) {
		var paths []string
		for i := range toolinput.MaxFiles + 10 {
			paths = append(paths, fmt.Sprintf("f%d", i))
		}
		in, _ := json.Marshal(map[string]any{"paths": paths})
		if got := toolinput.Files(in); len(got) != toolinput.MaxFiles || got[0] != "f0" {
			t.Errorf("got %d paths starting %q, want the first %d", len(got), got[:1], toolinput.MaxFiles)
		}
	})
	t.Run("AppendFiles", func(t *testing.T) {
		got := toolinput.AppendFiles([]string{"a"}, json.RawMessage(`{"path":"b","paths":["a","c"]}`))
		if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestLooksLikePath(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"/src/a.go", true},
		{"src/b c.go", true},
		{"ünïcode/π", true},
		{"", false},
		{" a", false},
		{"a ", false},
		{"a\tb", false},
		{"a\x00b", false},
		{"\xff", false},
		{"file:///etc/passwd", false},
		{strings.Repeat("a", toolinput.MaxPathLen), true},
		{strings.Repeat("a", toolinput.MaxPathLen+1), false},
	} {
		if got := toolinput.LooksLikePath(tt.in); got != tt.want {
			t.Errorf("LooksLikePath(%.40q): got %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestBound(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abcdefghijkl", 10, "abcdefghij\n…[2 bytes truncated]"},
		{"aé", 2, "a\n…[2 bytes truncated]"}, // é is 2 bytes: the cut steps back to a rune start
		{"éé", 0, "\n…[4 bytes truncated]"},
	} {
		if got := toolinput.Bound(tt.in, tt.max); got != tt.want {
			t.Errorf("Bound(%q, %d): got %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func FuzzToolInput(f *testing.F) {
	for _, s := range []string{`{"path":"a","paths":["b"]}`, `{"file_path":"é\u0000"}`, `[`, `{"a":1.0e3}`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if s := toolinput.Summary(in); len(s) > toolinput.MaxSummary+64 || !utf8.ValidString(s) {
			t.Fatalf("summary of %d bytes, valid %v", len(s), utf8.ValidString(s))
		}
		files := toolinput.Files(in)
		if len(files) > toolinput.MaxFiles {
			t.Fatalf("%d files", len(files))
		}
		for _, p := range files {
			if !toolinput.LooksLikePath(p) {
				t.Fatalf("file %q does not look like a path", p)
			}
		}
		if got := toolinput.Bound(string(in), 16); len(got) > 16+32 {
			t.Fatalf("bound kept %d bytes", len(got))
		}
	})
}
