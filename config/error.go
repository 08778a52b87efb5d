package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrUnknownKey is the Err of an [Error] for a key (or HEIRLOOM_* variable)
// that names no configuration key.
var ErrUnknownKey = errors.New("unknown key")

// Error is one configuration problem. [Load] and [Config.Validate] return it,
// several at once joined with errors.Join; read the fields with errors.As.
//
// Its message names the key, the source and the bad value, for example
// `config: inherit.tail_chars from env HEIRLOOM_INHERIT__TAIL_CHARS: "abc" is
// not an integer` or `config: unknown key "inherti" in file /x/config.yaml`.
type Error struct {
	// Key is the configuration key, e.g. "log.level". Empty when the problem
	// is a whole source, such as a file that is not valid YAML.
	Key string

	// Source is where the value came from: "file <path>", "env HEIRLOOM_X"
	// or "flag --x". Empty when the value is a built-in default or the
	// Config was validated on its own.
	Source string

	// Value is the offending value as it was given. Nil when there is none
	// to show, and always nil for the token, which is never printed.
	Value any

	// Msg says what is wrong, in lowercase, e.g. "is not an integer". It may
	// be empty when Err says it all.
	Msg string

	// Err is the underlying cause: ErrUnknownKey, a YAML syntax error, or a
	// file-system error (errors.Is(err, fs.ErrNotExist) for a missing file).
	// Nil for a bad value.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.Key != "" && errors.Is(e.Err, ErrUnknownKey) {
		fmt.Fprintf(&b, "unknown key %q", e.Key)
		if e.Source != "" {
			b.WriteString(" in " + e.Source)
		}
		return b.String()
	}
	switch {
	case e.Key != "" && e.Source != "":
		b.WriteString(e.Key + " from " + e.Source)
	case e.Key != "":
		b.WriteString(e.Key)
	default:
		b.WriteString(e.Source)
	}
	b.WriteString(":")
	if e.Value != nil {
		b.WriteString(" " + describe(e.Value))
	}
	if e.Msg != "" {
		b.WriteString(" " + e.Msg)
	}
	if e.Err != nil {
		if e.Value != nil || e.Msg != "" {
			b.WriteString(":")
		}
		b.WriteString(" " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// describe renders a value for an error message: strings and durations
// quoted, mappings and lists by kind, other scalars as they print.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(truncate(v))
	case time.Duration:
		return strconv.Quote(v.String())
	case map[string]any:
		return "a mapping"
	case []any, []string:
		return "a list"
	default:
		return truncate(fmt.Sprint(v))
	}
}

// truncate shortens s to at most 80 bytes, on a rune boundary, so a huge
// value cannot flood a log line.
func truncate(s string) string {
	const limit = 80
	if len(s) <= limit {
		return s
	}
	i := limit
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
