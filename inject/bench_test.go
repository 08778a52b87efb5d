package inject_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// bigInherited is a long-running parent: 500 turns since its checkpoint, some with large tool
// output, and a long digest.
func bigInherited() inject.Inherited {
	in := inject.Inherited{
		Parent: kv.Session{ID: "p", Harness: "claude-code", Title: "Big session", Project: "/p",
			Objective: strings.Repeat("Refactor the whole thing carefully. ", 60)},
		Digest: strings.Repeat("Decided this and that; next is the other thing.\n", 200),
	}
	for i := range 500 {
		t := kv.Turn{Seq: uint64(i), Role: "assistant", Text: fmt.Sprintf("step %d: %s", i, strings.Repeat("some prose ", 40))}
		if i%5 == 0 {
			t = kv.Turn{Seq: uint64(i), Role: "tool", Tool: "Bash", Text: strings.Repeat("log line with token=abc123 and more\n", 3000)}
		}
		in.Tail = append(in.Tail, t)
	}
	for i := range 40 {
		in.Files = append(in.Files, fmt.Sprintf("pkg/file%d.go", i))
	}
	return in
}

func BenchmarkInheritedBlock(b *testing.B) {
	in := bigInherited()
	for b.Loop() {
		inject.InheritedBlock(in, inject.Budget{})
	}
}

func BenchmarkRedact(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		// Code and prose with one secret: the common case.
		{"Code", strings.Repeat("func (s *Server) handle(w http.ResponseWriter, r *http.Request) {\n\tif r.Header.Get(\"Authorization\") == \"\" {\n\t\treturn // see https://example.com/docs\n\t}\n}\n", 400) + fakeGitHub},
		// Every line an assignment to a secret-sounding key: the worst case for the assignment scan.
		{"Assignments", strings.Repeat("max_tokens: 5; token_count=12 tokenizer=bpe password: ${PW}\n", 1000)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				inject.Redact(bc.text)
			}
		})
	}
}

func BenchmarkLen(b *testing.B) {
	s := strings.Repeat("ascii text, 日本語 and 😀 ", 1000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		inject.Len(s)
	}
}
