package inject_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// cutSeeds are inputs around the edges of Head and Tail: multibyte runes, emoji, whitespace and
// invalid bytes at likely cut points.
var cutSeeds = []struct {
	s   string
	max int
}{
	{"", 0},
	{"hello wonderful world", 20},
	{"a😀cdefgh", 6},
	{"日本語のテキスト", 7},
	{"ab\xffcdefgh", 7},
	{"      abcdefgh", 8},
	{"abcdefgh      ", 8},
	{"line one\nline two", 14},
	{"👍🏽👍🏽👍🏽👍🏽", 9},
	{strings.Repeat("word ", 50), 37},
}

func FuzzHead(f *testing.F) {
	for _, c := range cutSeeds {
		f.Add(c.s, c.max)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 1 << 16
		out := inject.Head(s, max)
		if n := inject.Len(out); n > max && out != "" {
			t.Fatalf("Len(Head(%q, %d)) = %d, want <= %d", s, max, n, max)
		}
		if out == s || out == "" {
			return
		}
		kept, ok := strings.CutSuffix(out, " […]")
		if !ok || kept == "" {
			t.Fatalf("Head(%q, %d) = %q: want a non-empty prefix and the marker", s, max, out)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("Head(%q, %d) = %q: invalid UTF-8", s, max, out)
		}
		if utf8.ValidString(s) && !strings.HasPrefix(s, kept) {
			t.Fatalf("Head(%q, %d) = %q: not a prefix of the input", s, max, out)
		}
	})
}

func FuzzTail(f *testing.F) {
	for _, c := range cutSeeds {
		f.Add(c.s, c.max)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 1 << 16
		out := inject.Tail(s, max)
		if n := inject.Len(out); n > max && out != "" {
			t.Fatalf("Len(Tail(%q, %d)) = %d, want <= %d", s, max, n, max)
		}
		if out == s || out == "" {
			return
		}
		kept, ok := strings.CutPrefix(out, "[…] ")
		if !ok || kept == "" {
			t.Fatalf("Tail(%q, %d) = %q: want the marker and a non-empty suffix", s, max, out)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("Tail(%q, %d) = %q: invalid UTF-8", s, max, out)
		}
		if utf8.ValidString(s) && !strings.HasSuffix(s, kept) {
			t.Fatalf("Tail(%q, %d) = %q: not a suffix of the input", s, max, out)
		}
	})
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"", fakeAnthropic, fakeOpenAI, fakeLegacy, fakeStripe, fakeAWSID, fakeGitHub, fakeGitHubPAT,
		fakeSlack, fakeGoogle, fakeJWT, fakePEM, "AWS_SECRET_ACCESS_KEY=" + fakeAWSSecret,
		"Authorization: Bearer abcdef0123456789xyz", "postgres://bob:hunter2@db/x",
		`{"password": "s3cr3t", "apiToken":"x"}`, "password: ${DB_PASSWORD}", "token=abc&x=1",
		"max_tokens: 5 tokenizer=bpe", "secret=token=abc", "password=x" + fakeAWSID,
		"-----BEGIN PRIVATE KEY-----\nabc", "Bearer Bearer abc123def",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := inject.Redact(s)
		if twice := inject.Redact(once); twice != once {
			t.Fatalf("Redact not idempotent on %q:\nonce  %q\ntwice %q", s, once, twice)
		}
		if utf8.ValidString(s) && !utf8.ValidString(once) {
			t.Fatalf("Redact(%q) = %q: invalid UTF-8 from valid input", s, once)
		}
	})
}

func FuzzInheritedBlock(f *testing.F) {
	f.Add("Fix the flaky test", "", "Did X.\nThen Y.", "go on", "a.go", "Never touch go.mod.", 3000, 9500)
	f.Add("", "", "", "", "", "", 0, 0)
	f.Add("Objectif: réparer 😀", "Titre", strings.Repeat("digest ", 900), strings.Repeat("turn ", 900), "ü.go", "must 😀", 100, 500)
	f.Add("o", "t", "d", "x", "f", "c", 1, 1)
	f.Add("password=hunter2", "t", fakePEM, "Bearer abcdef0123456789", "a/"+fakeGitHub, "never "+fakeJWT, 50, 300)
	f.Fuzz(func(t *testing.T, objective, title, digest, turn, file, constraint string, tailChars, maxChars int) {
		in := inject.Inherited{
			Parent: kv.Session{ID: "s1", Harness: "claude-code", Title: title, Objective: objective, Project: "/p"},
			Digest: digest,
			Tail: []kv.Turn{
				{Role: "user", Text: turn},
				{Role: "assistant", Text: turn, Tool: "Read", Files: []string{file}},
				{Role: "tool", Tool: "Bash", Text: turn},
			},
			Files:       []string{file, file + "2"},
			Constraints: []string{constraint},
			Packet:      inject.Packet{Task: turn, Files: inject.TaskFiles(turn + " " + file), Workspace: file, Depth: tailChars % 7, MaxDepth: maxChars % 5},
		}
		b := inject.Budget{TailChars: tailChars % 20000, MaxChars: maxChars % 20000}
		out := inject.InheritedBlock(in, b)
		limit := b.MaxChars
		if limit <= 0 {
			limit = inject.DefaultMaxChars
		}
		if n := inject.Len(out); n > limit {
			t.Fatalf("Len(InheritedBlock) = %d, want <= %d", n, limit)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("InheritedBlock: invalid UTF-8: %q", out)
		}
		if out != "" && !strings.HasPrefix(out, "## Inherited") && limit > 20 {
			t.Fatalf("InheritedBlock does not start with its heading: %q", out)
		}
		if again := inject.InheritedBlock(in, b); again != out {
			t.Fatalf("InheritedBlock not deterministic:\n%q\n%q", out, again)
		}
	})
}
