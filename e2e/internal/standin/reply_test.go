package standin_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/e2e/internal/standin"
)

func TestChunks(t *testing.T) {
	if standin.Chunks("") != nil {
		t.Error("chunks of an empty string")
	}
	s := strings.Repeat("ab✓", 20)
	chunks := standin.Chunks(s)
	if strings.Join(chunks, "") != s || len(chunks) < 4 {
		t.Errorf("got %q", chunks)
	}
	for _, c := range chunks {
		if !utf8.ValidString(c) || len(c) > standin.ChunkSize+utf8.UTFMax-1 {
			t.Errorf("chunk %q splits a rune or is too long", c)
		}
	}
}

func TestTokens(t *testing.T) {
	if standin.Tokens(0) != 1 || standin.Tokens(400) != 101 {
		t.Errorf("got %d, %d", standin.Tokens(0), standin.Tokens(400))
	}
}

func TestNewToolUse(t *testing.T) {
	if u, err := standin.NewToolUse("", "gen_1", "t", nil); err != nil || u.ID != "gen_1" || u.Name != "t" || string(u.Input) != "{}" {
		t.Errorf("nil input: %+v, %v", u, err)
	}
	if u, err := standin.NewToolUse("mine", "gen_1", "t", json.RawMessage(`{"a":1}`)); err != nil || u.ID != "mine" || string(u.Input) != `{"a":1}` {
		t.Errorf("raw input: %+v, %v", u, err)
	}
	if _, err := standin.NewToolUse("", "gen_1", "t", func() {}); err == nil || !strings.Contains(err.Error(), "tool t") {
		t.Errorf("unmarshalable input: %v", err)
	}
	in := standin.SpawnInput("d", "p", "general")
	if in["description"] != "d" || in["prompt"] != "p" || in["subagent_type"] != "general" {
		t.Errorf("SpawnInput: %v", in)
	}
}

type part struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func textPart(s string) part { return part{Type: "text", Text: s} }

func (p part) PartText() string {
	if p.Type != "text" {
		return ""
	}
	return p.Text
}

func (part) TextPart(s string) part { return textPart(s) }

// TestContent decodes each form a message's content takes and reads back the
// text of its text parts only.
func TestContent(t *testing.T) {
	tests := []struct{ in, want string }{
		{`null`, ""},
		{`"bare"`, "bare"},
		{`[{"type":"text","text":"a"},{"type":"image","text":"not read"},{"type":"text","text":""},{"type":"text","text":"b"}]`, "a\nb"},
	}
	for _, tt := range tests {
		var c standin.Content[part]
		if err := json.Unmarshal([]byte(tt.in), &c); err != nil || c.Text() != tt.want {
			t.Errorf("%s: Text() = %q, %v; want %q", tt.in, c.Text(), err, tt.want)
		}
	}
	var c standin.Content[part]
	if err := json.Unmarshal([]byte(`{}`), &c); err == nil {
		t.Errorf("an object decoded as content: %v", c)
	}
}

func TestDecodeContent(t *testing.T) {
	tests := []struct {
		in   string
		want []part
	}{
		{`null`, nil},
		{` "hi" `, []part{{"text", "hi"}}},
		{`[{"type":"text","text":"a"},{"type":"image"}]`, []part{{"text", "a"}, {"image", ""}}},
	}
	for _, tt := range tests {
		got := []part{{"old", ""}}
		if err := standin.DecodeContent([]byte(tt.in), &got, textPart); err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{`"unterminated`, `{}`, `[1]`} {
		got := []part{{"old", ""}}
		if err := standin.DecodeContent([]byte(bad), &got, textPart); err == nil || len(got) != 1 || got[0].Type != "old" {
			t.Errorf("%s: got %v, %v, want an error and the old value", bad, got, err)
		}
	}
}

func TestTurns(t *testing.T) {
	turns := standin.Turns([]string{"system:s1", "user:u1", "assistant:", "system:s2", "user:u2"}, func(m string) standin.Turn {
		role, text, _ := strings.Cut(m, ":")
		return standin.Turn{Role: role, Text: text}
	})
	for _, tt := range []struct{ got, want string }{
		{standin.FirstText(turns, "user"), "u1"},
		{standin.LastText(turns, "user"), "u2"},
		{standin.FirstText(turns, "tool"), ""},
		{standin.LastText(turns, "tool"), ""},
		{standin.JoinText(turns, "system"), "s1\ns2"},
		{standin.JoinText(turns, ""), "s1\nu1\ns2\nu2"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
