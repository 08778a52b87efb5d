package standin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// DecodeContent decodes data into *into as both APIs accept a message's
// content: an array of parts, a bare string (one part, text(s)), or null
// (none). On error *into is left as it was.
func DecodeContent[T any](data []byte, into *[]T, text func(string) T) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		*into = nil
		return nil
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("decode text content: %w", err)
		}
		*into = []T{text(s)}
		return nil
	}
	var parts []T
	if err := json.Unmarshal(data, &parts); err != nil {
		return fmt.Errorf("decode content: %w", err)
	}
	*into = parts
	return nil
}

// Part is what Content asks of one part of a message's content, for either
// API's part type P: the text the model reads in it ("" when it holds none),
// and the part a bare-string content decodes to.
type Part[P any] interface {
	PartText() string
	TextPart(s string) P
}

// Content is a message's content as both APIs accept it: an array of parts,
// a bare string (one text part), or null (none).
type Content[P Part[P]] []P

// UnmarshalJSON implements json.Unmarshaler for the string-or-array forms.
func (c *Content[P]) UnmarshalJSON(data []byte) error {
	var zero P
	return DecodeContent(data, (*[]P)(c), zero.TextPart)
}

// Text returns the text of every part that has some, in order, joined by
// newlines.
func (c Content[P]) Text() string {
	var out []string
	for _, p := range c {
		if t := p.PartText(); t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

// Turn is one message of a conversation as the model reads it: its role and
// the text of its content.
type Turn struct {
	Role, Text string
}

// Turns returns the turns of messages, turn(m) each.
func Turns[M any](messages []M, turn func(M) Turn) []Turn {
	out := make([]Turn, len(messages))
	for i, m := range messages {
		out[i] = turn(m)
	}
	return out
}

// FirstText returns the text of the first turn with role, or "".
func FirstText(turns []Turn, role string) string {
	for _, t := range turns {
		if t.Role == role {
			return t.Text
		}
	}
	return ""
}

// LastText returns the text of the last turn with role, or "".
func LastText(turns []Turn, role string) string {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Role == role {
			return turns[i].Text
		}
	}
	return ""
}

// JoinText returns the texts of the turns with role, or of every turn when
// role is "", in order and joined by newlines, empty ones left out.
func JoinText(turns []Turn, role string) string {
	var out []string
	for _, t := range turns {
		if (role == "" || t.Role == role) && t.Text != "" {
			out = append(out, t.Text)
		}
	}
	return strings.Join(out, "\n")
}
